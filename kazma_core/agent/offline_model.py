"""The built-in offline model: deterministic, tool-calling, no key and no network.

It reads the turn's user message and the tool results since, and either asks for the
next tool call or answers. Its commands (one per message) are listed in the README.
"""

from __future__ import annotations

import asyncio
import json
import operator
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCallChunk,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

from kazma_core.agent.context import CHARS_PER_TOKEN

FACTS_HEADER = "Known facts:"

STREAM_SECONDS = 3.0  # the longest a streamed answer takes, its pauses together
PIECE = re.compile(r"\s*\S+")  # a word with the space before it: the pieces an answer streams in

_COMMANDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^remember:\s*(?P<fact>.+)$", re.S | re.I), "remember"),
    (re.compile(r"^forget:\s*(?P<fact>.+)$", re.S | re.I), "forget"),
    (re.compile(r"^calc\s+(?P<expression>.+)$", re.S | re.I), "calculator"),
    (re.compile(r"^steps\s+(?P<n>\d{1,5})\s*$", re.I), "steps"),
    (re.compile(r"^write\s+(?P<path>[^:\n]+):\s?(?P<text>.*)$", re.S | re.I), "write_file"),
    (re.compile(r"^sleep\s+(?P<seconds>\d+(?:\.\d+)?)\s*$", re.I), "sleep"),
    (re.compile(r"^big\s+(?P<kb>\d{1,6})\s*$", re.I), "big"),
]


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _estimated_tokens(messages: Sequence[BaseMessage]) -> int:
    """About four characters a token, as tokenizers average on English: a count that costs a
    length per message, not a pass over every word of a long conversation (and, when every
    message is plain text, a pass in C: this runs at each model call of a long chat)."""
    contents = list(map(operator.attrgetter("content"), messages))
    plain = set(map(type, contents)) <= {str}
    chars = sum(map(len, contents)) if plain else sum(len(_text(m)) for m in messages)
    return (chars + 3 * len(messages)) // CHARS_PER_TOKEN


class OfflineChatModel(BaseChatModel):
    """Answers from rules, so a fresh install works offline and tests are exact."""

    model_name: str = "kazma-offline"
    piece_seconds: float = 0.0  # streamed, the pause between two words of an answer (as a model makes them)

    @property
    def _llm_type(self) -> str:
        return "kazma-offline"

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        # The rules know the tool names already; binding keeps the LangChain contract.
        return self.bind(**kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._respond(messages)
        prompt = _estimated_tokens(messages)
        answer = len(_text(message).split()) + len(message.tool_calls)
        message.usage_metadata = {"input_tokens": prompt, "output_tokens": answer, "total_tokens": prompt + answer}
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _pieces(self, messages: list[BaseMessage]) -> list[AIMessageChunk]:
        """The answer as a model streams it: word by word, the usage last; a tool call in one piece.
        Without a pause between two words they would all come at once: the answer is one piece
        (a piece costs LangChain and the turn a message object and a pass through the stream)."""
        message = self._generate(messages).generations[0].message
        assert isinstance(message, AIMessage)
        calls: list[ToolCallChunk] = [{"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
                                       for i, c in enumerate(message.tool_calls)]
        words = (PIECE.findall(_text(message)) if self.piece_seconds else [_text(message)]) or [""]
        chunks = [AIMessageChunk(content=w, id=message.id) for w in words]
        chunks[-1] = AIMessageChunk(content=words[-1], tool_call_chunks=calls, usage_metadata=message.usage_metadata)
        return chunks

    def _stream(
        self, messages: list[BaseMessage], stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._pieces(messages):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self, messages: list[BaseMessage], stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        chunks = self._pieces(messages)
        # A long answer still streams in a few seconds at most, however many words it has.
        pause = min(self.piece_seconds, STREAM_SECONDS / len(chunks))
        for n, chunk in enumerate(chunks):
            if n and pause:
                await asyncio.sleep(pause)
            yield ChatGenerationChunk(message=chunk)

    def _respond(self, messages: list[BaseMessage]) -> AIMessage:
        # From the end: the turn's question is near it, however long the conversation.
        last_human = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], HumanMessage)), -1)
        question = _text(messages[last_human]).strip() if last_human >= 0 else ""
        results = [m for m in messages[last_human + 1 :] if isinstance(m, ToolMessage)]
        call_id = f"call_{last_human}_{len(results)}"
        for pattern, tool in _COMMANDS:
            match = pattern.match(question)
            if match:
                return self._command(tool, match.groupdict(), results, call_id)
        return AIMessage(content=self._plain(question, messages))

    def _command(self, tool: str, args: dict[str, str], results: list[ToolMessage], call_id: str) -> AIMessage:
        def call(name: str, arguments: dict[str, Any]) -> AIMessage:
            return AIMessage(content="", tool_calls=[{"name": name, "args": arguments, "id": call_id, "type": "tool_call"}])

        if tool == "steps":
            total = int(args["n"])
            if len(results) < total:
                return call("note", {"text": f"step {len(results) + 1} of {total}"})
            return AIMessage(content=f"Done: {total} steps.")
        if results and tool == "big":
            return AIMessage(content=f"Received {len(_text(results[-1])) // 1024} KB of text.")
        if results:
            return AIMessage(content=_text(results[-1]))
        if tool == "remember" or tool == "forget":
            return call(tool, {"fact": args["fact"].strip()})
        if tool == "calculator":
            return call(tool, {"expression": args["expression"].strip()})
        if tool == "write_file":
            return call(tool, {"path": args["path"].strip(), "text": args["text"]})
        if tool == "sleep":
            return call(tool, {"seconds": float(args["seconds"])})
        return call("big", {"kb": int(args["kb"])})

    @staticmethod
    def _plain(question: str, messages: list[BaseMessage]) -> str:
        facts: list[str] = []
        for m in messages[:1]:  # the supervisor puts its system message (with the facts) first
            if isinstance(m, SystemMessage) and FACTS_HEADER in _text(m):
                body = _text(m).split(FACTS_HEADER, 1)[1]
                facts = [line[2:].strip() for line in body.splitlines() if line.startswith("- ")]
        known = f" I know: {'; '.join(facts)}." if facts else " I know no facts yet."
        return f'You said: "{question}".{known}'
