"""Signing a browser (or an httpx client acting as one) in through the printed login link."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx

from kazma_core.stores.types import User
from tests.http_server import RunningServer

LOGIN_TTL = 600


async def login_url(server: RunningServer, user: User) -> str:
    """A one-time login link for this user, as `kazma serve` prints it."""
    token = await server.core.store.users.issue_token(user.id, "login", ttl=LOGIN_TTL)
    return f"{server.url}/login?token={token}"


@contextlib.asynccontextmanager
async def browser_client(server: RunningServer, user: User, **headers: str) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client holding the session and CSRF cookies a browser gets from the login link."""
    async with httpx.AsyncClient(base_url=server.url, trust_env=False, headers=headers, timeout=httpx.Timeout(30.0)) as client:
        signed_in = await client.get(await login_url(server, user), follow_redirects=False)
        if signed_in.status_code != 303 or "kazma_session" not in client.cookies:
            raise AssertionError(f"login failed: {signed_in.status_code} {signed_in.headers}")
        client.headers["X-Kazma-CSRF"] = client.cookies["kazma_csrf"]
        yield client
