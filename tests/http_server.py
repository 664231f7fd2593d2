"""The real Kazma app served by uvicorn on a free port of 127.0.0.1, inside the test's event loop.

Tests of every HTTP surface (chat API, replay routes, TUI) reuse it:

    async with serve_kazma(settings) as server:
        user, token = await server.add_user("ann")
        async with server.client(token) as http:
            await http.post("/api/chats")

What tests then do with it (chats, messages, the chat's event stream) is in tests/helpers.py.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from kazma_core.core import Core
from kazma_core.settings import Settings
from kazma_core.stores.types import User
from kazma_server.app import create_app

START_TIMEOUT = 10.0


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
        user = await self.core.store.users.add_user(name, role)
        return user, await self.core.store.users.issue_token(user.id, "api")

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
