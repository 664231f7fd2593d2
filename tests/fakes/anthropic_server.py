"""A fake Anthropic Messages API on 127.0.0.1, for end-to-end tests.

Scripted like the OpenAI fake: a user turn "calc <expr>" asks for the ``calculator`` tool
(when offered; "think calc <expr>" says SAID_FIRST first, in a text block before the call),
a tool result is answered "The answer is <result>", anything else
"Echo: <text>". A request without the right key (``x-api-key`` or bearer) gets Anthropic's 401.

With ``"stream": true`` it streams as the Messages API does (server-sent events
``message_start``, ``content_block_start``, ``content_block_delta`` with ``text_delta`` word
by word or ``input_json_delta``, ``content_block_stop``, ``message_delta``, ``message_stop``),
``piece_seconds`` apart; ``first_piece_at`` keeps when each stream sent its first word
(``time.perf_counter()``), and ``pieces`` the words each stream sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.fakes.openai_server import SAID_FIRST, THINK


@dataclass
class FakeAnthropic:
    api_key: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""
    piece_seconds: float = 0.0
    first_piece_at: list[float] = field(default_factory=list)
    pieces: list[list[str]] = field(default_factory=list)

    def _content(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        last = (body.get("messages") or [{}])[-1]
        blocks = last.get("content")
        blocks = [{"type": "text", "text": blocks}] if isinstance(blocks, str) else blocks or []
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results:
            inner = results[-1].get("content")
            text = inner if isinstance(inner, str) else "".join(b.get("text", "") for b in inner or [])
            return [{"type": "text", "text": f"The answer is {text}"}], "end_turn"
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        tools = [t.get("name") for t in body.get("tools") or []]
        thinking = text.startswith(THINK)  # words said before the call, as real models often do
        text = text.removeprefix(THINK)
        if text.startswith("calc ") and "calculator" in tools:
            call = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:12]}", "name": "calculator",
                    "input": {"expression": text[5:]}}
            return [*([{"type": "text", "text": SAID_FIRST}] if thinking else []), call], "tool_use"
        return [{"type": "text", "text": f"Echo: {text}"}], "end_turn"

    async def _stream(self, body: dict[str, Any], content: list[dict[str, Any]], stop: str) -> AsyncIterator[bytes]:
        def event(kind: str, data: dict[str, Any]) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

        said: list[str] = []
        self.pieces.append(said)
        message = {"id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant", "model": body.get("model"),
                   "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 11, "output_tokens": 1}}
        yield event("message_start", {"message": message})
        for i, block in enumerate(content):
            if block["type"] == "text":
                yield event("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}})
                for n, word in enumerate(re.findall(r"\s*\S+", block["text"])):
                    if n and self.piece_seconds:
                        await asyncio.sleep(self.piece_seconds)
                    if not said:
                        self.first_piece_at.append(time.perf_counter())
                    said.append(word)
                    yield event("content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": word}})
            else:
                start = {**block, "input": {}}
                yield event("content_block_start", {"index": i, "content_block": start})
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                yield event("content_block_delta", {"index": i, "delta": delta})
            yield event("content_block_stop", {"index": i})
        yield event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 7}})
        yield event("message_stop", {})

    async def _messages(self, request: Request) -> Response:
        # Older SDKs send x-api-key, newer ones a bearer token: the real API takes both.
        given = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        if given != self.api_key:
            error = {"type": "authentication_error", "message": "invalid x-api-key"}
            return JSONResponse({"type": "error", "error": error}, status_code=401)
        body = await request.json()
        self.requests.append(body)
        content, stop = self._content(body)
        if body.get("stream"):
            return StreamingResponse(self._stream(body, content, stop), media_type="text/event-stream")
        return JSONResponse({
            "id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant", "model": body.get("model"),
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 11, "output_tokens": 7},
        })

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/messages", self._messages, methods=["POST"])])


@contextlib.asynccontextmanager
async def serve_fake_anthropic(api_key: str) -> AsyncIterator[FakeAnthropic]:
    fake = FakeAnthropic(api_key)
    config = uvicorn.Config(fake.app(), host="127.0.0.1", port=0, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
        fake.base_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        yield fake
    finally:
        server.should_exit = True
        await task
