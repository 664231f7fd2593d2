"""The TUI's only way to the server: the HTTP API, signed in with a bearer token.

Every refusal comes back as an `ApiError` carrying the server's code, sentence and
details; a server that cannot be reached is a `ConnectionLost`. Both are KazmaErrors,
so `commands.i18n.error_text` words them like every other surface does.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import orjson
from httpx_sse import EventSource, SSEError, aconnect_sse

from kazma_core.errors import KazmaError

SURFACE = "tui"
REQUEST_TIMEOUT = 30.0
# Deciding an approval answers when the paused turn has finished, which may take a while.
TURN_TIMEOUT = 600.0
# The server writes a keep-alive every 15 s; a stream silent for longer than this is dead.
STREAM_READ_TIMEOUT = 45.0


class ApiError(KazmaError):
    """The server refused: its code (turn_running, not_found, ...), sentence and details."""

    def __init__(self, status: int, code: str, message: str | None = None, **details: Any) -> None:
        super().__init__(message, **details)
        self.status = status
        self.code = code


class ConnectionLost(KazmaError):
    code = "connection_lost"
    status = 503


@dataclass(frozen=True)
class ServerEvent:
    """One server-sent event of a chat: message, snapshot, approval, reload or error.

    Its id is the server's: given back on a reconnection, the server sends what came after it."""

    id: str
    type: str
    data: dict[str, Any]


def _path(value: str) -> str:
    return quote(value, safe="")


def error_of(response: httpx.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), str) and isinstance(body.get("message"), str):
        details = {k: v for k, v in body.items() if k not in ("error", "message")}
        return ApiError(response.status_code, body["error"], body["message"], **details)
    return ApiError(response.status_code, "http_error", message_id="no_explanation", answered=response.status_code)


class KazmaClient:
    def __init__(self, url: str, token: str, *, lang: str = "en", timeout: float = REQUEST_TIMEOUT) -> None:
        self.url = url.rstrip("/")
        self.http = httpx.AsyncClient(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}", "X-Kazma-Surface": SURFACE, "Accept-Language": lang},
            timeout=httpx.Timeout(timeout),
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    def lost(self, err: Exception) -> ConnectionLost:
        return ConnectionLost(message_id="server_unreachable", url=self.url, kind=type(err).__name__)

    async def request(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = await self.http.request(method, path, **kwargs)
        except httpx.TransportError as err:
            raise self.lost(err) from err
        if response.status_code >= 400:
            raise error_of(response)
        return response.json() if response.content else None

    # chats -------------------------------------------------------------------------------
    async def chats(self) -> list[dict[str, Any]]:
        return (await self.request("GET", "/api/chats"))["chats"]  # type: ignore[no-any-return]

    async def rename_chat(self, chat_id: str, title: str) -> dict[str, Any]:
        return await self.request("PATCH", f"/api/chats/{_path(chat_id)}", json={"title": title})  # type: ignore[no-any-return]

    async def delete_chat(self, chat_id: str) -> None:
        await self.request("DELETE", f"/api/chats/{_path(chat_id)}")

    async def forget_chat(self, chat_id: str) -> None:
        await self.request("POST", f"/api/chats/{_path(chat_id)}/forget")

    async def create_chat(self, title: str | None = None) -> dict[str, Any]:
        return await self.request("POST", "/api/chats", json={"title": title} if title else None)  # type: ignore[no-any-return]

    async def transcript(
        self, chat_id: str, *, before: int | None = None, limit: int | None = None
    ) -> tuple[list[dict[str, Any]], bool]:
        """The chat's messages (with `limit`, the newest page of those before row `before`), and
        whether older ones come before them."""
        params = {k: v for k, v in (("before", before), ("limit", limit)) if v is not None}
        body = await self.request("GET", f"/api/chats/{_path(chat_id)}/messages", params=params)
        return body["messages"], bool(body.get("more"))

    async def send(self, chat_id: str, text: str) -> dict[str, Any]:
        """Start a turn and return at once; its messages come on the event stream."""
        return await self.request(  # type: ignore[no-any-return]
            "POST", f"/api/chats/{_path(chat_id)}/messages", params={"wait": "false"}, json={"text": text}
        )

    async def stop(self, chat_id: str) -> dict[str, Any]:
        """Stop the chat's running turn; answers once it has ended (or nothing ran)."""
        return await self.request("POST", f"/api/chats/{_path(chat_id)}/stop", timeout=TURN_TIMEOUT)  # type: ignore[no-any-return]

    async def approvals(self, chat_id: str) -> list[dict[str, Any]]:
        return (await self.request("GET", f"/api/chats/{_path(chat_id)}/approvals"))["approvals"]  # type: ignore[no-any-return]

    async def decide(self, chat_id: str, card_id: str, decision: str) -> dict[str, Any]:
        return await self.request(  # type: ignore[no-any-return]
            "POST", f"/api/chats/{_path(chat_id)}/approvals/{_path(card_id)}",
            json={"decision": decision}, timeout=TURN_TIMEOUT,
        )

    async def command(self, chat_id: str, text: str, confirmed: bool = False) -> dict[str, Any]:
        """Run a chat command that has no route of its own (/reset, /memory off) on the server."""
        body = {"text": text, "confirmed": confirmed}
        return await self.request("POST", f"/api/chats/{_path(chat_id)}/commands", json=body)  # type: ignore[no-any-return]

    # time travel ---------------------------------------------------------------------------
    async def steps(self, chat_id: str) -> dict[str, Any]:
        return await self.request("GET", f"/api/replay/snapshots/{_path(chat_id)}")  # type: ignore[no-any-return]

    async def step(self, chat_id: str, step: str, *, limit: int | None = None) -> dict[str, Any]:
        """The step, with its newest `limit` messages (all of them without)."""
        params = {"limit": limit} if limit is not None else None
        return await self.request(  # type: ignore[no-any-return]
            "GET", f"/api/replay/snapshots/{_path(chat_id)}/{_path(step)}", params=params
        )

    async def preview(self, chat_id: str, step: str) -> dict[str, Any]:
        return await self.request(  # type: ignore[no-any-return]
            "GET", f"/api/replay/snapshots/{_path(chat_id)}/{_path(step)}/preview"
        )

    async def restore(self, chat_id: str, step: str, *, what: str = "conversation", force: bool = False) -> dict[str, Any]:
        # "what" and "force" only when asked: a server from before files travelled takes the restore as it was
        more = {"what": what, **({"force": True} if force else {})} if what != "conversation" else {}
        return await self.request(  # type: ignore[no-any-return]
            "POST", "/api/replay/restore", json={"thread_id": chat_id, "snapshot_id": step, **more}
        )

    async def fork(self, chat_id: str, step: str) -> dict[str, Any]:
        return await self.request(  # type: ignore[no-any-return]
            "POST", "/api/replay/fork", json={"thread_id": chat_id, "snapshot_id": step}
        )

    async def compare(self, chat_id: str, a: str, b: str, b_chat_id: str | None = None) -> dict[str, Any]:
        body = {"thread_id": chat_id, "a": a, "b": b, **({"b_thread_id": b_chat_id} if b_chat_id else {})}
        return await self.request("POST", "/api/replay/compare", json=body)  # type: ignore[no-any-return]

    async def message_point(self, chat_id: str, message_id: int) -> dict[str, Any]:
        """Where rewinding to or forking from a transcript message goes (its step, or empty)."""
        return await self.request("GET", f"/api/replay/messages/{_path(chat_id)}/{int(message_id)}")  # type: ignore[no-any-return]

    async def restore_to_message(self, chat_id: str, message_id: int) -> dict[str, Any]:
        return await self.request(  # type: ignore[no-any-return]
            "POST", "/api/replay/restore", json={"thread_id": chat_id, "message_id": int(message_id)}
        )

    async def fork_from_message(self, chat_id: str, message_id: int) -> dict[str, Any]:
        return await self.request(  # type: ignore[no-any-return]
            "POST", "/api/replay/fork", json={"thread_id": chat_id, "message_id": int(message_id)}
        )

    async def undo(self, chat_id: str) -> dict[str, Any]:
        return await self.request("POST", "/api/replay/undo", json={"thread_id": chat_id})  # type: ignore[no-any-return]

    async def clear(self, chat_id: str) -> dict[str, Any]:
        return await self.request("DELETE", f"/api/replay/threads/{_path(chat_id)}")  # type: ignore[no-any-return]

    # the chat stream ---------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def events(self, chat_id: str, last_event_id: str | None = None) -> AsyncIterator[AsyncIterator[ServerEvent]]:
        """Open the chat's event stream; entered once the server listens (nothing after is missed).

        With `last_event_id` the server first sends the events after that one, or a `reload`
        when it no longer has them all. The iterator ends when the server closes the stream;
        a broken one raises ConnectionLost.
        """
        timeout = httpx.Timeout(REQUEST_TIMEOUT, read=STREAM_READ_TIMEOUT)
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        try:
            async with aconnect_sse(
                self.http, "GET", f"/api/chats/{_path(chat_id)}/events", headers=headers, timeout=timeout
            ) as source:
                if source.response.status_code >= 400:
                    await source.response.aread()
                    raise error_of(source.response)
                yield self._guarded(source)
        except httpx.TransportError as err:
            raise self.lost(err) from err

    async def _guarded(self, source: EventSource) -> AsyncIterator[ServerEvent]:
        try:
            async for sse in source.aiter_sse():
                yield ServerEvent(sse.id, sse.event, orjson.loads(sse.data))
        except httpx.TransportError as err:
            raise self.lost(err) from err
        except SSEError as err:
            raise ApiError(source.response.status_code, "http_error", message_id="not_event_stream", cause=str(err)) from err
