"""A fake OpenAI-compatible chat-completions server on 127.0.0.1, for end-to-end tests.

Scripted replies:
- last message is a user message starting with "calc ": a tool call to ``calculator``
  with ``{"expression": <rest of the text>}`` (only if the request offers that tool);
  "think calc ...": the same call, said after SAID_FIRST, in one reply;
- last message is a ``tool`` message: "The answer is <tool content>";
- otherwise: "Echo: <last user text>".

Every request (headers of interest and the JSON body) is recorded in ``requests``.
With ``"stream": true`` the answer comes as ``chat.completion.chunk`` events, word by word
``piece_seconds`` apart, then the usage chunk (when asked with ``stream_options``) and
``[DONE]``; ``first_piece_at`` keeps when each stream sent its first word
(``time.perf_counter()``), and ``pieces`` the words each stream sent.
When started with ``api_key``, a request without ``Authorization: Bearer <key>`` gets
401 with OpenAI's error JSON.
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

THINK = "think "
SAID_FIRST = "Let me work that out."


@dataclass
class Received:
    authorization: str | None
    body: dict[str, Any]


@dataclass
class FakeOpenAI:
    api_key: str | None = None
    requests: list[Received] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)  # what each answered request got
    base_url: str = ""  # "http://127.0.0.1:<port>/v1" once started
    piece_seconds: float = 0.0
    first_piece_at: list[float] = field(default_factory=list)
    pieces: list[list[str]] = field(default_factory=list)

    # -- the scripted model ----------------------------------------------------------
    def _answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message (OpenAI format) for a request body."""
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        role, content = last.get("role"), _text(last.get("content"))
        thinking = content.startswith(THINK)  # words said before the call, as real models often do
        if role == "user" and content.removeprefix(THINK).startswith("calc ") and "calculator" in tools:
            content = content.removeprefix(THINK)
            return {
                "role": "assistant",
                "content": SAID_FIRST if thinking else None,
                "tool_calls": [
                    {
                        "id": f"call_{uuid.uuid4().hex[:12]}",
                        "type": "function",
                        "function": {
                            "name": "calculator",
                            "arguments": json.dumps({"expression": content[len("calc "):].strip()}),
                        },
                    }
                ],
            }
        if role == "tool":
            return {"role": "assistant", "content": f"The answer is {content}"}
        user_text = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
        return {"role": "assistant", "content": f"Echo: {user_text}"}

    # -- HTTP ------------------------------------------------------------------------
    async def _chat_completions(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "The body is not valid JSON.", "invalid_request_error", None)
        auth = request.headers.get("authorization")
        self.requests.append(Received(auth, body))
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
        message = self._answer(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        prompt_tokens = sum(len(_text(m.get("content")).split()) for m in body.get("messages") or [])
        completion_tokens = max(1, len(_text(message.get("content")).split()))
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        ident, created, model = f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), body.get("model", "")
        self.responses.append({"message": message, "usage": usage, "stream": bool(body.get("stream"))})
        if body.get("stream"):
            said: list[str] = []
            self.pieces.append(said)
            asked_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(
                self._sse(ident, created, model, message, finish, usage if asked_usage else None, said),
                media_type="text/event-stream",
            )
        return JSONResponse(
            {
                "id": ident,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                "usage": usage,
            }
        )

    async def _sse(
        self, ident: str, created: int, model: str, message: dict[str, Any], finish: str,
        usage: dict[str, int] | None, said: list[str],
    ) -> AsyncIterator[bytes]:
        """The answer as chat.completion.chunk events: the text word by word, a tool call whole."""

        def chunk(delta: dict[str, Any], finish_reason: str | None) -> bytes:
            data = {
                "id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
            }
            return f"data: {json.dumps(data)}\n\n".encode()

        yield chunk({"role": "assistant", "content": ""}, None)
        for n, word in enumerate(re.findall(r"\s*\S+", message.get("content") or "")):
            if n and self.piece_seconds:
                await asyncio.sleep(self.piece_seconds)
            if not said:
                self.first_piece_at.append(time.perf_counter())
            said.append(word)
            yield chunk({"content": word}, None)
        for i, call in enumerate(message.get("tool_calls") or []):
            yield chunk({"tool_calls": [{"index": i, **call}]}, None)
        yield chunk({}, finish)
        if usage is not None:
            last = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": usage}
            yield f"data: {json.dumps(last)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    async def _not_found(self, request: Request) -> Response:
        return _error(404, f"Unknown route {request.method} {request.url.path}.", "invalid_request_error", None)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat_completions, methods=["POST"]),
                Route("/{path:path}", self._not_found, methods=["GET", "POST", "PUT", "DELETE"]),
            ]
        )


def _text(content: Any) -> str:
    """A message's content as text (OpenAI allows a string or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


def _error(status: int, message: str, kind: str, code: str | None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "param": None, "code": code}}, status_code=status)


@contextlib.asynccontextmanager
async def serve_fake_openai(api_key: str | None = None) -> AsyncIterator[FakeOpenAI]:
    """Start the fake on a free port of 127.0.0.1 in the background; stop it on exit."""
    fake = FakeOpenAI(api_key=api_key)
    config = uvicorn.Config(fake.app(), host="127.0.0.1", port=0, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()  # raises the start-up error
                raise RuntimeError("the fake OpenAI server stopped before it started")
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        fake.base_url = f"http://127.0.0.1:{port}/v1"
        yield fake
    finally:
        server.should_exit = True
        await task
