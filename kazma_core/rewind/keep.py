"""What a restore kept aside for its undo, and the one rule of when it goes for good.

A restore keeps what it took back (rows in kazma.db, steps in snapshots.db, and the chat's
checkpoints from before it, which the undo makes the newest again) so that it can be undone.
That ends when the chat moves on, a turn or a reset starting in it, when the undo runs out,
and when anything in it is forgotten (the chat, one memory, or its memory turned off). Then
all of it goes for good: the kept-aside rows and steps, the checkpoints from before the
restore with their writes, and every message body none of what stays refers to, each in the
transaction that drops its last reference; and the files' write-ahead logs are emptied, so
no copy of it is left in the data folder.

Emptying the logs costs more than the rest (tens of ms: the log folded into the file and
synced). A restore ending the last one's undo has it done in the background, after its
answer (a second later, so the requests that follow it are not queued behind it): it is
idempotent, one runs at a time, and every start runs it again, so a process killed before it
leaves the copies for its next start only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from kazma_core import crashpoints
from kazma_core.errors import StoreUnavailable
from kazma_core.rewind.rows import FORGOTTEN, TURN, RewindRows
from kazma_core.stores.interfaces import ConversationStore
from kazma_core.stores.snapshots import SnapshotStore

__all__ = ["FORGOTTEN", "TURN", "UndoKeep"]

log = logging.getLogger(__name__)

PURGE_AFTER = 1.0  # seconds from a `purge_soon` to its purge: a restore's answer and what follows it first


class UndoKeep:
    def __init__(self, rows: RewindRows, snapshots: SnapshotStore, conversation: ConversationStore) -> None:
        self.rows = rows
        self.snapshots = snapshots
        self.conversation = conversation
        self._purging: asyncio.Task[None] | None = None
        self._again = False
        self._now = asyncio.Event()  # set by `purged`: whoever waits for the purge has nothing to let go first

    async def drop(self, chat_id: str, why: str, *, purge_later: bool = False) -> bool:
        """Drop the chat's undo, if it has one ready; `why` (TURN, FORGOTTEN, EXPIRED) is what a
        later undo is told. kazma.db first, in one transaction (the undo's row, its kept-aside
        rows, the checkpoints from before the restore and the bodies they alone held): a crash
        after it leaves only kept-aside steps no undo wants, which the next start deletes
        (RewindService.recover). With `purge_later` the write-ahead logs are emptied after the
        caller's answer (`purge_soon`)."""
        if not await self.rows.ready(chat_id):
            return False
        if not await self.conversation.drop_history(chat_id, self.rows.give_up(chat_id, why)):
            return False
        crashpoints.passed("restore-drops-undo" if purge_later else "turn-drops-undo")
        await self.snapshots.drop_kept(chat_id)
        if purge_later:
            self.purge_soon()
        else:
            await self.purge()
        return True

    async def purge(self) -> None:
        """What was given up leaves both stores' files now (their write-ahead logs emptied; on
        PostgreSQL the tables VACUUMed). Running it again changes nothing. One store away does not
        keep the other's copies: each is emptied, then the first failure is raised."""
        results = await asyncio.gather(self.snapshots.purge_wal(), self.rows.purge(), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    def purge_soon(self) -> None:
        """`purge` in the background: one at a time, and one asked for while one runs runs after it."""
        if self._purging is not None and not self._purging.done():
            self._again = True
            return
        self._now.clear()
        self._purging = asyncio.get_running_loop().create_task(self._purge_until_asked_no_more())

    async def _purge_until_asked_no_more(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._now.wait(), PURGE_AFTER)
            self._again = False
            try:
                await self.purge()
            except StoreUnavailable as err:  # a store away or damaged: said where it is, once; the next start purges again
                log.warning("the write-ahead logs were not emptied after an undo ended (%s); the next start empties them", err)
            except Exception:  # the top of a background task; the next start purges again
                log.exception("the write-ahead logs were not emptied after an undo ended; the next start empties them")
            if not self._again:
                return

    async def purged(self) -> None:
        """Run the background purges asked for so far, without waiting out their delay, and wait
        for them (a server stopping does: it stopped a second later when the purge every start asks
        for was still waiting)."""
        self._now.set()
        while self._purging is not None and not self._purging.done():
            await asyncio.shield(self._purging)
