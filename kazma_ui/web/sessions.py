"""Web sign-in and sign-out: a session cookie for the browser, and a CSRF token bound to it.

The CSRF token is derived from the session token (a one-way hash), so it cannot be
chosen by anyone who does not hold the session: a cookie and header pair an attacker
planted together match each other, but not the session. Cookies are ``Secure`` when
the page was served over HTTPS (directly, or through a proxy the settings trust).
"""

from __future__ import annotations

import hashlib
import hmac

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from kazma_core.errors import Unauthorized

SESSION_COOKIE = "kazma_session"
CSRF_COOKIE = "kazma_csrf"
CSRF_HEADER = "x-kazma-csrf"

router = APIRouter(include_in_schema=False)


def csrf_for(session: str) -> str:
    """The CSRF token of a session: the pages send it back in the X-Kazma-CSRF header."""
    return hashlib.sha256(b"kazma-csrf\0" + session.encode()).hexdigest()


def csrf_ok(request: Request, session: str) -> bool:
    return hmac.compare_digest(csrf_for(session), request.headers.get(CSRF_HEADER, ""))


def session_seconds(request: Request) -> int:
    return int(request.app.state.core.settings.security.session_hours * 3600)


@router.get("/login")
async def login(request: Request, token: str = "") -> RedirectResponse:
    """Trade the one-time login token printed by `kazma serve` for a session cookie."""
    store = request.app.state.core.store.users
    user = await store.user_for_token(token, "login", consume=True) if token else None
    if user is None:
        return RedirectResponse("/?login=expired", status_code=303)
    ttl = session_seconds(request)
    session = await store.issue_token(user.id, "session", ttl=ttl)
    secure = request.url.scheme == "https"
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(SESSION_COOKIE, session, max_age=ttl, httponly=True, samesite="lax", secure=secure)
    response.set_cookie(CSRF_COOKIE, csrf_for(session), max_age=ttl, samesite="strict", secure=secure)
    return response


@router.post("/logout")
async def logout(request: Request) -> RedirectResponse:
    """End this browser's session: the session token stops working at once, everywhere."""
    session = request.cookies.get(SESSION_COOKIE, "")
    if session:
        if not csrf_ok(request, session):
            raise Unauthorized(message_id="csrf_missing_sign_out")
        await request.app.state.core.store.users.revoke_token(session)
    response = RedirectResponse("/", status_code=303)
    secure = request.url.scheme == "https"
    response.delete_cookie(SESSION_COOKIE, httponly=True, samesite="lax", secure=secure)
    response.delete_cookie(CSRF_COOKIE, samesite="strict", secure=secure)
    return response
