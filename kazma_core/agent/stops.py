"""Stopping a running turn: a per-chat request the turn runner checks at each step boundary.

A turn registers itself while it runs (`StopRequests.running`). `request` marks the chat's
turn as asked to stop and waits until it has ended, so a person who pressed Stop can send
the next message at once. Between two steps the runner reads `requested`; a slow tool
(the `sleep` tool) waits on `current_stop()` so it wakes when asked rather than at its end.
The request lives in this process: a turn runs where its lease is held.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field

STOP_WAIT_SECONDS = 5.0

# The running turn's stop signal, seen by the tools its graph runs (tasks copy the context).
_current: contextvars.ContextVar[asyncio.Event | None] = contextvars.ContextVar("kazma_turn_stop", default=None)


@dataclass
class _Running:
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)


def current_stop() -> asyncio.Event | None:
    """The stop signal of the turn this code runs in, if any."""
    return _current.get()


class StopRequests:
    def __init__(self) -> None:
        self._turns: dict[str, _Running] = {}

    @contextlib.contextmanager
    def running(self, chat_id: str) -> Iterator[None]:
        """Marks a turn of this chat as running (and stoppable) for the block's duration.

        Nested use (a turn already marked by its caller) keeps the outer mark.
        """
        if chat_id in self._turns and _current.get() is self._turns[chat_id].stop:
            yield
            return
        entry = _Running()
        self._turns[chat_id] = entry
        token = _current.set(entry.stop)
        try:
            yield
        finally:
            _current.reset(token)
            entry.ended.set()
            if self._turns.get(chat_id) is entry:
                del self._turns[chat_id]

    def requested(self, chat_id: str) -> bool:
        entry = self._turns.get(chat_id)
        return entry is not None and entry.stop.is_set()

    def is_running(self, chat_id: str) -> bool:
        return chat_id in self._turns

    async def request(self, chat_id: str, wait: float = STOP_WAIT_SECONDS) -> bool:
        """Ask the chat's running turn to stop; True when one was running. Waits until it ended."""
        entry = self._turns.get(chat_id)
        if entry is None:
            return False
        entry.stop.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(entry.ended.wait(), wait)
        return True
