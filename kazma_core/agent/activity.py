"""What a turn shows while it runs: the answer's pieces (`delta` events) and its tool calls
(`tool` events), and the tool blocks of a saved conversation (the transcript's `tools`).

A tool call is a block: `{"turn_index", "call_id", "name", "label", "label_id", "state",
"args", "result", "result_chars", "said"}`, `state` one of running, done, failed; `result` is
the first RESULT_CHARS characters of the result, `result_chars` its whole length; `said` the
words the model said before asking for it ("Let me work that out."; on the first call of a
reply, "" otherwise), shown above the block: they are not the answer, which is what follows
the turn's last call, but a person saw them said. The same block is the event and the
transcript's entry, so a page reloaded shows what it saw live.

The pieces of an answer are sent in batches (`DeltaStream`): the first piece at once (the
time to the first word is what a person feels), then what came meanwhile at most every
DELTA_SECONDS, and whatever is left before the tool events or the answer's `message`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from kazma_core.catalogue import sentence
from kazma_core.catalogue.errors import ERRORS
from kazma_core.catalogue.tools import label_id

RESULT_CHARS = 2000
DELTA_SECONDS = 0.1  # at most ten `delta` events a second per answer
TURN_KEY = "kazma_turn"  # additional_kwargs of a reply that calls tools: the turn it belongs to

Publish = Callable[[str, dict[str, Any]], None]  # (event type, data)


def tool_block(turn_index: int, call_id: str, name: str, state: str, args: dict[str, Any],
               result: str | None = None, said: str = "") -> dict[str, Any]:
    ident = label_id(name)
    text = result or ""
    return {
        "turn_index": turn_index, "call_id": call_id, "name": name, "label": sentence(ident, "en"),
        "label_id": ident, "state": state, "args": args, "result": text[:RESULT_CHARS], "result_chars": len(text),
        "said": said,
    }


def said_before(reply: AIMessage, call_index: int) -> str:
    """What a reply that asks for tools said before them, given with its first call (see above)."""
    return content_text(reply).strip() if call_index == 0 else ""


def result_state(message: ToolMessage) -> str:
    return "failed" if message.status == "error" else "done"


def content_text(message: BaseMessage) -> str:
    """A message's text; its content itself when that is text (a message's `.text` makes a copy
    of it each time, megabytes for a huge tool result)."""
    return message.content if isinstance(message.content, str) else message.text


def turn_tools(messages: Sequence[BaseMessage]) -> dict[int, list[dict[str, Any]]]:
    """The tool blocks of a conversation, by turn, in the order called (calls of replies made
    before tool blocks were kept have no turn, and are left out)."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    by_turn: dict[int, list[dict[str, Any]]] = {}
    for message in messages:
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        turn = message.additional_kwargs.get(TURN_KEY)
        if not isinstance(turn, int):
            continue
        for n, call in enumerate(message.tool_calls):
            call_id = call.get("id") or ""
            done = results.get(call_id)
            state = "running" if done is None else result_state(done)
            by_turn.setdefault(turn, []).append(tool_block(
                turn, call_id, call["name"], state, dict(call.get("args") or {}), content_text(done) if done else None,
                said_before(message, n),
            ))
    return by_turn


class DeltaStream:
    """The pieces of one turn's answers, published in order as `delta` events, in batches."""

    def __init__(self, publish: Publish, turn_index: int, every: float = DELTA_SECONDS) -> None:
        self._publish = publish
        self._turn = turn_index
        self._every = every
        self._pending: list[str] = []
        self._last = -1e9
        self._timer: asyncio.TimerHandle | None = None
        self.said: list[str] = []  # every piece since the last tool call: the answer so far

    def piece(self, text: str) -> None:
        if not text:
            return
        self._pending.append(text)
        self.said.append(text)
        loop = asyncio.get_running_loop()
        wait = self._last + self._every - loop.time()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = loop.call_later(wait, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        text = "".join(self._pending)
        self._pending.clear()
        self._last = asyncio.get_running_loop().time()
        self._publish("delta", {"text": text, "turn_index": self._turn})

    def tool(self, block: dict[str, Any]) -> None:
        """A tool call starts or ends: the pieces before it go first; what the model says next is a new answer."""
        self.flush()
        self.said.clear()
        self._publish("tool", block)

    def close(self) -> None:
        self.flush()


def answer_rows_tools(rows: Sequence[tuple[int, int, str]], messages: Sequence[BaseMessage]) -> dict[int, list[dict[str, Any]]]:
    """The tool blocks to show on transcript rows given as (row id, turn, role): each turn's on
    its answer row (the turn's last row that is not the person's)."""
    by_turn = turn_tools(messages)
    if not by_turn:
        return {}
    answer_of: dict[int, int] = {}
    for row_id, turn, role in rows:
        if role != "user":
            answer_of[turn] = row_id
    return {answer_of[turn]: blocks for turn, blocks in by_turn.items() if turn in answer_of}


def stopped_words(text: str) -> str:
    """The words an answer stopped while it was said had reached: its row's text is those words,
    then the stopped sentence (agent/graph.py); "" for a turn stopped before it answered."""
    tail = f"\n\n({ERRORS['turn_stopped'].en})"
    return text[: -len(tail)] if text.endswith(tail) else ""
