"""The real Kazma app served by uvicorn on a free port of 127.0.0.1, inside the test's event loop.

Tests of every HTTP surface (chat API, replay routes, TUI) reuse it:

    async with serve_kazma(settings) as server:
        user, token = await server.add_user("ann")
        async with server.client(token) as http:
            await http.post("/api/chats")

Also here: a small reader of the chat stream (server-sent events) whose every wait is
bounded, so a test can never hang on a stream that stays silent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import uvicorn
from fastapi import FastAPI

from kazma_core.core import Core
from kazma_core.settings import Settings
from kazma_core.stores.app_sqlite import User
from kazma_server.app import create_app

START_TIMEOUT = 10.0
EVENT_TIMEOUT = 10.0


@dataclass
class RunningServer:
    url: str  # "http://127.0.0.1:<port>"
    app: FastAPI
    server: uvicorn.Server

    @property
    def core(self) -> Core:
        return self.app.state.core  # type: ignore[no-any-return]

    async def add_user(self, name: str, role: str = "user") -> tuple[User, str]:
        """A real user in kazma.db and a real API token for it."""
        user = await self.core.store.add_user(name, role)
        return user, await self.core.store.issue_token(user.id, "api")

    def client(self, token: str | None = None, **kwargs: Any) -> httpx.AsyncClient:
        """An HTTP client of this server, signed in with `token` when one is given."""
        headers = dict(kwargs.pop("headers", {}) or {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        kwargs.setdefault("timeout", httpx.Timeout(30.0))
        return httpx.AsyncClient(base_url=self.url, headers=headers, trust_env=False, **kwargs)


@contextlib.asynccontextmanager
async def serve_kazma(
    settings: Settings, port: int = 0, tls: tuple[Path, Path] | None = None
) -> AsyncIterator[RunningServer]:
    """Start create_app(settings) with uvicorn on 127.0.0.1 (a free port unless one is given);
    stop it on exit, giving open event streams a second, as `kazma serve` gives them a few.
    With ``tls`` (certificate, key) it serves HTTPS."""
    app = create_app(settings)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_config=None, log_level="warning", access_log=False,
        timeout_graceful_shutdown=1, proxy_headers=False,  # as `kazma serve` runs it
        ssl_certfile=str(tls[0]) if tls else None, ssl_keyfile=str(tls[1]) if tls else None,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(START_TIMEOUT):
            while not server.started:
                if task.done():
                    task.result()  # raises the start-up error
                    raise RuntimeError("the Kazma server stopped before it started")
                await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield RunningServer(f"{'https' if tls else 'http'}://127.0.0.1:{port}", app, server)
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, START_TIMEOUT + 5)


@dataclass(frozen=True)
class SseEvent:
    type: str
    data: dict[str, Any]


class EventReader:
    """Reads `event:`/`data:` blocks off an open text/event-stream response."""

    def __init__(self, response: httpx.Response) -> None:
        self._lines = response.aiter_lines()
        self.seen: list[SseEvent] = []

    async def _next(self) -> SseEvent:
        kind, data = "message", b""
        async for line in self._lines:
            if line == "":
                if data:
                    event = SseEvent(kind, orjson.loads(data))
                    self.seen.append(event)
                    return event
                kind, data = "message", b""  # a comment block (": keep-alive") ends here
            elif line.startswith(":"):
                continue
            elif line.startswith("event:"):
                kind = line[len("event:"):].strip()
            elif line.startswith("data:"):
                data += line[len("data:"):].strip().encode()
        raise EOFError("the event stream ended")

    async def next(self, timeout: float = EVENT_TIMEOUT) -> SseEvent:
        return await asyncio.wait_for(self._next(), timeout)

    async def until(self, type_: str, timeout: float = EVENT_TIMEOUT, **fields: Any) -> SseEvent:
        """The next event of this type whose data has these field values (others are kept in `seen`)."""

        async def find() -> SseEvent:
            while True:
                event = await self._next()
                if event.type == type_ and all(event.data.get(k) == v for k, v in fields.items()):
                    return event

        return await asyncio.wait_for(find(), timeout)


@contextlib.asynccontextmanager
async def open_events(http: httpx.AsyncClient, thread_id: str) -> AsyncIterator[EventReader]:
    """Open a chat's event stream and wait until the server has subscribed it."""
    async with http.stream("GET", f"/api/chats/{thread_id}/events") as response:
        if response.status_code != 200:
            await response.aread()
            raise AssertionError(f"events: {response.status_code} {response.text}")
        reader = EventReader(response)
        # The server writes ": connected" once it listens; events published before it are lost.
        first = await asyncio.wait_for(reader._lines.__anext__(), EVENT_TIMEOUT)
        if first != ": connected":
            raise AssertionError(f"events: unexpected first line {first!r}")
        yield reader
