"""Per-chat event streams: the SSE route and the bots listen here, the core publishes.

`EventBus` is the contract; `LocalEventBus` keeps the streams inside one server process.
Every event carries an id, so a listener that lost its connection can resume after the
last event it saw instead of reading the whole chat again.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

BACKLOG_EVENTS = 500  # per chat: how far back a listener can resume
BACKLOG_CHATS = 1000  # chats whose recent events are kept; the least recently active go first
QUEUE_EVENTS = 1000  # per listener: past this many unread events it gets a `reload` instead


@dataclass(frozen=True)
class Event:
    id: str  # opaque to listeners; ordered within the bus that gave it
    type: str  # message | snapshot | approval | turn | error | reload
    data: dict[str, Any]


class EventBus(Protocol):
    """Where the core announces what happened in a chat, and where listeners follow a chat."""

    def publish(self, chat_id: str, type_: str, data: dict[str, Any]) -> None:
        """Announce an event to the chat's listeners; never waits for them."""

    def subscribe(
        self, chat_id: str, last_event_id: str | None = None
    ) -> AbstractAsyncContextManager[AsyncIterator[Event]]:
        """Follow the chat for the block: the iterator gives every event published from entry on.

        With `last_event_id` (an `Event.id` a listener saw earlier) it first gives the events
        after that one, each once, then the live ones. When those can no longer be given (the
        id is too old, or unknown), or when a listener falls too far behind, it gives a
        `reload` event instead: the chat must be read afresh. A `reload`'s id is as good as any
        for resuming later. Cancelling a pending `__anext__` (a timeout) loses no event.
        """

    def every_chat(self) -> AbstractAsyncContextManager[asyncio.Queue[tuple[str, Event]]]:
        """Follow every chat for the block: (chat id, event) pairs from entry on, the other replicas' too."""


@dataclass
class _Backlog:
    """A chat's recent events, and the sequence number of the newest one no longer kept."""

    dropped: int
    events: deque[tuple[int, Event]]


class _Listener:
    """One subscriber: events given before the live queue (a resume), then the queue."""

    def __init__(self, replay: list[Event], size: int) -> None:
        self.replay = deque(replay)
        self.queue: asyncio.Queue[Event] = asyncio.Queue(size)

    def offer(self, event: Event) -> None:
        if self.queue.full():
            # A listener that stopped reading gets a reload instead of an unbounded backlog.
            while not self.queue.empty():
                self.queue.get_nowait()
            self.replay.clear()
            event = Event(event.id, "reload", {"reason": "lagging"})
        self.queue.put_nowait(event)

    def __aiter__(self) -> _Listener:
        return self

    async def __anext__(self) -> Event:
        if self.replay:
            return self.replay.popleft()
        return await self.queue.get()


class LocalEventBus:
    """The event bus of one process. Ids are `<bus>:<n>`: a bus made anew (the server restarted)
    does not know the ids of the one before, so a listener resuming from those gets a reload."""

    def __init__(
        self, queue_size: int = QUEUE_EVENTS, backlog: int = BACKLOG_EVENTS, backlog_chats: int = BACKLOG_CHATS
    ) -> None:
        self._listeners: dict[str, set[_Listener]] = {}
        self._taps: set[asyncio.Queue[tuple[str, Event]]] = set()
        self._backlogs: OrderedDict[str, _Backlog] = OrderedDict()
        self._queue_size = queue_size
        self._backlog = backlog
        self._backlog_chats = backlog_chats
        self._bus = secrets.token_hex(4)
        self._last = 0  # the sequence number of the newest event, in any chat
        self._forgotten = 0  # the newest sequence number of a chat whose backlog was let go

    def publish(self, chat_id: str, type_: str, data: dict[str, Any]) -> None:
        self._last += 1
        event = Event(f"{self._bus}:{self._last}", type_, data)
        backlog = self._backlogs.get(chat_id) or _Backlog(self._forgotten, deque(maxlen=self._backlog))
        if len(backlog.events) == backlog.events.maxlen:
            backlog.dropped = backlog.events[0][0]
        backlog.events.append((self._last, event))
        self._backlogs[chat_id] = backlog
        self._backlogs.move_to_end(chat_id)
        if len(self._backlogs) > self._backlog_chats:
            _, oldest = self._backlogs.popitem(last=False)
            self._forgotten = max(self._forgotten, oldest.events[-1][0])
        for listener in list(self._listeners.get(chat_id, ())):
            listener.offer(event)
        for tap in list(self._taps):
            if tap.full():  # a follower of every chat that fell behind loses the oldest, not the newest
                tap.get_nowait()
            tap.put_nowait((chat_id, event))

    @asynccontextmanager
    async def every_chat(self) -> AsyncIterator[asyncio.Queue[tuple[str, Event]]]:
        """Follow every chat for the block: (chat id, event) for each event published from entry on
        (the chat apps mark there the answers a restore took back, whoever restored)."""
        tap: asyncio.Queue[tuple[str, Event]] = asyncio.Queue(self._queue_size)
        self._taps.add(tap)
        try:
            yield tap
        finally:
            self._taps.discard(tap)

    @asynccontextmanager
    async def subscribe(self, chat_id: str, last_event_id: str | None = None) -> AsyncIterator[AsyncIterator[Event]]:
        # No await between reading the backlog and joining the listeners: nothing is missed
        # between the two, and nothing is given twice.
        listener = _Listener(self._missed(chat_id, last_event_id), self._queue_size)
        self._listeners.setdefault(chat_id, set()).add(listener)
        try:
            yield listener
        finally:
            listeners = self._listeners[chat_id]
            listeners.discard(listener)
            if not listeners:
                del self._listeners[chat_id]

    def _missed(self, chat_id: str, last_event_id: str | None) -> list[Event]:
        """The chat's events after `last_event_id`, or a reload when they are not all kept."""
        if last_event_id is None:
            return self._answer_so_far(chat_id)
        seen = self._sequence(last_event_id)
        backlog = self._backlogs.get(chat_id)
        kept_after = backlog.dropped if backlog else self._forgotten
        if seen is None or seen < kept_after or seen > self._last:
            # Some of them are gone (or the id is another bus's): the chat must be read afresh.
            return [Event(f"{self._bus}:{self._last}", "reload", {"reason": "missed"})]
        return [event for n, event in backlog.events if n > seen] if backlog else []

    def _answer_so_far(self, chat_id: str) -> list[Event]:
        """For a listener new to the chat: the running turn's pieces and tool calls so far, which
        the transcript it reads does not hold yet, so a page opened mid-answer shows the answer
        from its first word. None when no turn runs (the last event of a turn, its end or its
        answer, is the newest), or when the backlog no longer holds where the turn began."""
        backlog = self._backlogs.get(chat_id)
        if backlog is None:
            return []
        running: list[Event] = []
        for _, event in reversed(backlog.events):
            if (event.type == "turn" and not event.data.get("running")) or event.type == "reload" or (
                event.type == "message" and event.data.get("role") != "user"
            ):
                break
            if event.type in ("delta", "tool"):
                running.append(event)
        else:
            if len(backlog.events) == backlog.events.maxlen:  # its oldest events, the turn's first pieces among them, are gone
                return []
        return running[::-1]

    def _sequence(self, event_id: str) -> int | None:
        bus, _, n = event_id.partition(":")
        return int(n) if bus == self._bus and n.isdigit() else None
