"""An answer in a chat app as it is made: posted once it starts, edited as it grows.

Every chat app limits how often a bot may edit in a chat (Telegram about one message a
second per chat, Discord five edits in five seconds per channel, Slack's chat.update about
fifty a minute), so the message is written at most once every `every` seconds: the newest
text each time, never a backlog of edits. The final text is written exactly, once the turn
has its answer (the adapter's own formatting and cutting of a long answer apply to it).

`follow_turn` reads the chat's event stream while a turn runs and feeds the growing answer;
an adapter gives a `LiveMessage`: how to post a text and how to edit what it posted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

TELEGRAM_EVERY = 1.0  # seconds between two writes of a growing answer, per platform
DISCORD_EVERY = 1.0
SLACK_EVERY = 1.2
GROWING_MARK = " …"  # after a growing answer: more is coming


@dataclass(frozen=True)
class LiveMessage:
    """How an adapter shows a growing answer: `post(text)` returns what `edit(handle, text)` changes."""

    post: Callable[[str], Awaitable[Any]]
    edit: Callable[[Any, str], Awaitable[None]]
    limit: int  # the longest text the platform takes in one message
    every: float  # seconds between two writes in the chat


class GrowingAnswer:
    """One answer being said: the words so far, written to its message at most every `every` s.

    The first write waits `every` after the first word: an answer said whole within that time
    is posted once, as before (no edits); a longer one shows up and grows. Nothing is written
    while no word has come for half of `every` (the answer is said, the turn is saving it)."""

    def __init__(self, live: LiveMessage) -> None:
        self.live = live
        self.handle: Any = None  # the posted message, once posted
        self._said = ""
        self._shown = ""
        self._last: float | None = None  # when the message was last written (or the first word came)
        self._changed = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._inflight: asyncio.Future[None] | None = None  # a write under way: never cut (a post cut could be lost)
        self._on_screen = ""  # the text the message holds now
        self._last_piece = 0.0  # when the newest word came

    @property
    def posted(self) -> bool:
        return self.handle is not None

    def grow(self, piece: str) -> None:
        loop = asyncio.get_running_loop()
        if self._last is None:
            self._last = loop.time()
        self._last_piece = loop.time()
        self._said += piece
        self._changed.set()
        if self._writer is None:
            self._writer = loop.create_task(self._write_as_it_grows())

    async def restart(self) -> None:
        """A tool call: what was said stays in its message; the answer after it is a new one."""
        await self._stop_writer()
        if self.handle is not None and self._said[: self.live.limit] != self._on_screen:
            await self._paced_write(self._said)
        self.handle, self._said, self._shown, self._last, self._on_screen = None, "", "", None, ""

    async def finish(self, text: str) -> bool:
        """Write the answer's final text in the message posted (the first `limit` characters of it);
        False when nothing was posted (the adapter posts the answer as usual)."""
        await self._stop_writer()
        if self.handle is None:
            return False
        if text[: self.live.limit] != self._on_screen:
            await self._paced_write(text)
        return True

    async def _stop_writer(self) -> None:
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
            self._writer = None
        if self._inflight is not None:
            with contextlib.suppress(Exception):
                await self._inflight
            self._inflight = None

    async def _pace(self) -> None:
        loop = asyncio.get_running_loop()
        if self._last is not None:
            await asyncio.sleep(max(0.0, self._last + self.live.every - loop.time()))

    async def _write_as_it_grows(self) -> None:
        while True:
            await self._changed.wait()
            await self._pace()
            self._changed.clear()
            text = self._said.strip()
            if not text or text == self._shown:
                continue
            if asyncio.get_running_loop().time() - self._last_piece >= self.live.every / 2:
                continue  # no word for a while: the answer is likely whole, and is posted whole when the turn ends
            self._inflight = asyncio.ensure_future(self._write(text[: self.live.limit - len(GROWING_MARK)] + GROWING_MARK))
            try:
                await asyncio.shield(self._inflight)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # noqa: BLE001  an edit refused mid-answer: the next one (or the final) says it all
                log.info("a growing answer could not be written (%s); trying again with more words", err)
            self._inflight = None
            self._shown = text

    async def _paced_write(self, text: str) -> None:
        await self._pace()
        await self._write(text)
        self._shown = text.strip()

    async def _write(self, text: str) -> None:
        text = text[: self.live.limit]
        if not text.strip():
            return
        if self.handle is None:
            self.handle = await self.live.post(text)
        else:
            await self.live.edit(self.handle, text)
        self._on_screen = text
        self._last = asyncio.get_running_loop().time()


async def follow_turn(events: AsyncIterator[Any], turn_index: int, answer: GrowingAnswer) -> None:
    """Feed the turn's pieces to the growing answer until cancelled (the turn ended)."""
    async for event in events:
        data = event.data
        if data.get("turn_index") != turn_index:
            continue
        if event.type == "delta":
            answer.grow(str(data.get("text", "")))
        elif event.type == "tool" and data.get("state") == "running":
            await answer.restart()
