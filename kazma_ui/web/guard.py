"""What every answer gets, whatever route it comes from: security headers, HTTPS known, bodies
bounded, a true Allow header.

Plain ASGI middleware, so a refusal (a body over the limit) carries the same headers as
a page, and no route ever sees a body it would have to hold in memory whole.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
from starlette.routing import Match, Mount

from kazma_core.catalogue import error_sentence

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Every page, /docs too, loads its scripts and styles from this server only (never inline,
# never another origin); nothing may frame them.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HSTS_SECONDS = 180 * 86_400
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")  # the methods Kazma's routes take


def is_https(scope: Scope) -> bool:
    return scope.get("scheme") in ("https", "wss")


_HEADERS = (
    (b"content-security-policy", PAGE_POLICY.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
_HTTPS_HEADERS = (*_HEADERS, (b"strict-transport-security", f"max-age={HSTS_SECONDS}".encode()))


def security_headers(scope: Scope) -> list[tuple[bytes, bytes]]:
    """The headers every answer to this request carries."""
    return list(_HTTPS_HEADERS if is_https(scope) else _HEADERS)


class Guard:
    """One layer in front of every route: the security headers, HTTPS known, the body bounded,
    a true Allow header. One send wrapper for all of them: each layer more is a call per message.

    Security headers: CSP with frame-ancestors, X-Frame-Options, nosniff and Referrer-Policy on
    every answer, a refusal of this layer's own too. With ``trust_proxy`` a request the reverse
    proxy marks ``X-Forwarded-Proto: https`` is taken as HTTPS (so cookies are ``Secure``);
    without it that header means nothing.

    Body: a request body over ``limit`` bytes is refused with 413 before any route reads it. A
    declared Content-Length over the limit is refused unread; a chunked body is read up to the
    limit, then either refused or handed on whole.

    Allow: a 405 names every method its path takes. Starlette's router answers from one route of
    the path only, so /api/chats (a GET route and a POST route) said "POST"."""

    def __init__(self, app: ASGIApp, *, limit: int, trust_proxy: bool) -> None:
        self.app = app
        self.limit = limit
        self.trust_proxy = trust_proxy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.trust_proxy:
            forwarded = _header(scope, b"x-forwarded-proto").split(",")[0].strip().lower()
            if forwarded in ("https", "http"):
                secure = forwarded == "https"
                scope["scheme"] = ("wss" if secure else "ws") if kind == "websocket" else forwarded
        extra = security_headers(scope)

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                if message["status"] == 405 and kind == "http":
                    methods = allowed_methods(scope)
                    if methods:
                        headers = [(name, value) for name, value in headers if name.lower() != b"allow"]
                        headers.append((b"allow", ", ".join(methods).encode()))
                present = {name.lower() for name, _ in headers}
                message["headers"] = [*headers, *(h for h in extra if h[0] not in present)]
            await send(message)

        if kind == "http":
            await self._bounded(scope, receive, guarded)
        else:
            await self.app(scope, receive, guarded)

    async def _bounded(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = _header(scope, b"content-length")
        if declared:
            if not declared.isdigit():
                await _refuse(send, 400, "invalid_input", "length_not_a_number")
                return
            if int(declared) > self.limit:
                await self._too_large(send, int(declared))
                return
            await self.app(scope, receive, send)
            return
        if "chunked" not in _header(scope, b"transfer-encoding").lower():
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                await self._too_large(send, None)
                return
            if not message.get("more_body", False):
                break
        whole = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    async def _too_large(self, send: Send, size: int | None) -> None:
        sized = {"size": size} if size is not None else {}
        await _refuse(
            send, 413, "too_large", "body_too_large" if sized else "body_too_large_streamed",
            limit=self.limit, setting="limits.max_body_bytes", **sized,
        )


def allowed_methods(scope: Scope) -> list[str]:
    """The methods some route of this request's path takes, each asked of the app's router as a
    request of its own would be (a mounted folder of files is left out: it takes GET only)."""
    routes = [r for r in getattr(getattr(scope.get("app"), "router", None), "routes", ()) if not isinstance(r, Mount)]
    return [
        method for method in METHODS
        if any(route.matches({**_probe(scope), "method": method})[0] is Match.FULL for route in routes)
    ]


def _probe(scope: Scope) -> Scope:
    return {"type": "http", "path": scope["path"], "root_path": scope.get("root_path", ""), "headers": []}


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return ""


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def next_message() -> Message:
        return pending.pop(0) if pending else await receive()

    return next_message


async def _refuse(send: Send, status: int, code: str, message_id: str, **details: Any) -> None:
    """A refusal shaped as a KazmaError's: its code, its catalogue sentence and that sentence's parameters."""
    message = error_sentence(message_id, "en", details)
    body = orjson.dumps({"error": code, "message": message, "message_id": message_id, **details})
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ],
    })
    await send({"type": "http.response.body", "body": body})
