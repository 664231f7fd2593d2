"""What many tests do with a running Kazma: chats, messages and steps over the HTTP API, the
chat's event stream, and waits that are always bounded.

    chat = await new_chat(http)
    async with open_events(http, chat) as events:
        await say(http, chat, "calc 1+1")
        await events.until("message", role="assistant")

A wait that runs out fails the test with what it was waiting for; none is a measure of time.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
import orjson
from httpx_sse import EventSource, aconnect_sse

if TYPE_CHECKING:  # only named: the fake platform servers use this module without the app
    from kazma_core.events import Event
    from tests.http_server import RunningServer

WAIT = 10.0
KAZMA = str(Path(sys.executable).parent / "kazma")  # the venv's `kazma` command
T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def eventually(found: Callable[[], T | None], what: str | Callable[[], str], timeout: float = WAIT) -> T:
    """The first truthy `found()`, checked every 10 ms; after `timeout` s the test fails, saying `what`."""
    try:
        async with asyncio.timeout(timeout):
            while not (value := found()):
                await asyncio.sleep(0.01)
            return value
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what if isinstance(what, str) else what()}") from None


# -- the chat API ---------------------------------------------------------------------------------


def error_of(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The error body, checked for its status, its code and a sentence for a person."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == code, body
    assert isinstance(body["message"], str) and body["message"].strip(), body
    return body  # type: ignore[no-any-return]


async def new_chat(http: httpx.AsyncClient, title: str | None = None) -> str:
    response = await http.post("/api/chats", json={"title": title} if title else None)
    assert response.status_code == 201, response.text
    return response.json()["thread_id"]  # type: ignore[no-any-return]


async def chat_ids(http: httpx.AsyncClient) -> list[str]:
    response = await http.get("/api/chats")
    assert response.status_code == 200, response.text
    return [c["thread_id"] for c in response.json()["chats"]]


async def say(http: httpx.AsyncClient, chat: str, text: str) -> dict[str, Any]:
    """Send a message and wait for the turn's answer."""
    response = await http.post(f"/api/chats/{chat}/messages", json={"text": text})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def transcript(http: httpx.AsyncClient, chat: str) -> list[tuple[int, str, str]]:
    """The chat's messages as (turn, role, text)."""
    response = await http.get(f"/api/chats/{chat}/messages")
    assert response.status_code == 200, response.text
    return [(m["turn_index"], m["role"], m["text"]) for m in response.json()["messages"]]


async def said(http: httpx.AsyncClient, chat: str) -> list[tuple[str, str]]:
    """The chat's messages as (role, text)."""
    return [(role, text) for _, role, text in await transcript(http, chat)]


async def steps_of(http: httpx.AsyncClient, chat: str) -> list[dict[str, Any]]:
    """The chat's steps, oldest first, as the replay API lists them."""
    response = await http.get(f"/api/replay/snapshots/{chat}")
    assert response.status_code == 200, response.text
    return response.json()["snapshots"]  # type: ignore[no-any-return]


async def turn_over(server: RunningServer, chat: str) -> None:
    """Wait until no turn holds the chat's lease."""
    try:
        async with asyncio.timeout(WAIT):
            while await server.core.store.leases.lease(chat) is not None:
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"a turn still holds chat {chat} after {WAIT:.0f} s") from None


# -- the core's event bus ----------------------------------------------------------------------------


async def announced(events: AsyncIterator[Event], last: str = "turn") -> list[Event]:
    """What the core's event bus gave, up to and with the first event of type `last`
    (a turn ends with `turn`)."""

    async def read() -> list[Event]:
        seen: list[Event] = []
        async for event in events:
            seen.append(event)
            if event.type == last:
                break
        return seen

    return await asyncio.wait_for(read(), WAIT)


# -- the chat's event stream over HTTP -------------------------------------------------------------


@dataclass(frozen=True)
class SseEvent:
    id: str
    type: str
    data: dict[str, Any]


class EventReader:
    """The events of an open chat stream, each read with a bounded wait; all read so far are in `seen`."""

    def __init__(self, source: EventSource) -> None:
        self._events = source.aiter_sse()
        self.seen: list[SseEvent] = []

    @property
    def last_id(self) -> str:
        """The id of the newest event read, to resume after it."""
        return self.seen[-1].id

    async def _next(self) -> SseEvent:
        async for sse in self._events:
            event = SseEvent(sse.id, sse.event, orjson.loads(sse.data))
            self.seen.append(event)
            return event
        raise EOFError("the event stream ended")

    async def next(self, timeout: float = WAIT) -> SseEvent:
        return await asyncio.wait_for(self._next(), timeout)

    async def until(self, type_: str, timeout: float = WAIT, **fields: Any) -> SseEvent:
        """The next event of this type whose data has these field values (others are kept in `seen`)."""

        async def find() -> SseEvent:
            while True:
                event = await self._next()
                if event.type == type_ and all(event.data.get(k) == v for k, v in fields.items()):
                    return event

        return await asyncio.wait_for(find(), timeout)


@contextlib.asynccontextmanager
async def open_events(
    http: httpx.AsyncClient, thread_id: str, last_event_id: str | None = None
) -> AsyncIterator[EventReader]:
    """Open a chat's event stream (resuming after `last_event_id` when given); the server
    listens once the answer's headers are in, so nothing published after is missed."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    async with aconnect_sse(http, "GET", f"/api/chats/{thread_id}/events", headers=headers) as source:
        if source.response.status_code != 200:
            await source.response.aread()
            raise AssertionError(f"events: {source.response.status_code} {source.response.text}")
        yield EventReader(source)
