"""Per-chat event streams inside one server process (the SSE route and the bots listen here)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    type: str  # message | snapshot | approval | reload | turn
    data: dict[str, Any]


class EventBus:
    def __init__(self, queue_size: int = 1000) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[Event]]] = defaultdict(set)
        self._queue_size = queue_size

    def publish(self, chat_id: str, type_: str, data: dict[str, Any]) -> None:
        event = Event(type_, data)
        for queue in list(self._subscribers.get(chat_id, ())):
            if queue.full():
                # A listener that stopped reading gets a reload instead of an unbounded backlog.
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(Event("reload", {"reason": "lagging"}))
            else:
                queue.put_nowait(event)

    @asynccontextmanager
    async def subscribe(self, chat_id: str) -> AsyncIterator[asyncio.Queue[Event]]:
        queue: asyncio.Queue[Event] = asyncio.Queue(self._queue_size)
        self._subscribers[chat_id].add(queue)
        try:
            yield queue
        finally:
            self._subscribers[chat_id].discard(queue)
            if not self._subscribers[chat_id]:
                del self._subscribers[chat_id]
