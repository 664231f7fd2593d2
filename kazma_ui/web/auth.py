"""Who is asking: a bearer token (API, TUI, scripts) or the browser's session cookie (with CSRF)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from kazma_core.errors import Forbidden, Unauthorized
from kazma_core.stores.types import User
from kazma_core.stores.users_sql import UserStore
from kazma_ui.web.sessions import CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, csrf_ok, session_seconds

__all__ = [
    "CSRF_COOKIE", "CSRF_HEADER", "SESSION_COOKIE", "current_owner", "current_user", "still_signed_in", "surface_of",
]
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


# Declared so the OpenAPI description says how to sign in; the checks below read the request itself.
BEARER = HTTPBearer(auto_error=False, description="An API token from `kazma users add NAME` or `kazma users token NAME`")
COOKIE = APIKeyCookie(name=SESSION_COOKIE, auto_error=False, description="The web session (with the X-Kazma-CSRF header)")


async def current_user(
    request: Request,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)] = None,
    _cookie: Annotated[str | None, Depends(COOKIE)] = None,
) -> User:
    store: UserStore = request.app.state.core.store.users
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token:
        user = await store.user_for_token(token.strip(), "api")
        if user is not None:
            return user
        raise Unauthorized(message_id="token_invalid")
    session = request.cookies.get(SESSION_COOKIE)
    if session:
        user = await store.user_for_token(session, "session", max_age=session_seconds(request))
        if user is not None:
            if request.method not in SAFE_METHODS and not csrf_ok(request, session):
                raise Unauthorized(message_id="csrf_missing")
            return user
    raise Unauthorized(message_id="sign_in_first")


async def still_signed_in(request: Request) -> bool:
    """Whether the request's token or session still works (a long stream checks it now and then)."""
    try:
        await current_user(request)
    except Unauthorized:
        return False
    return True


SURFACES = {"http", "tui", "web"}


def surface_of(request: Request, default: str = "http") -> str:
    """Which surface asks, for the audit trail: the browser, the TUI (it says so), or the plain API."""
    if request.cookies.get(SESSION_COOKIE) and not request.headers.get("authorization"):
        return "web"
    asked = request.headers.get("x-kazma-surface", default)
    return asked if asked in SURFACES else default


async def current_owner(user: Annotated[User, Depends(current_user)]) -> User:
    """The signed-in user, who must be this Kazma's owner (settings, operator alerts)."""
    if user.role != "owner":
        raise Forbidden(message_id="owner_only")
    return user
