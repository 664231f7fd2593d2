"""A restore's and an undo's part outside kazma.db, and finishing the ones a crash cut.

A restore commits the step written back, the rows it takes back and its intent in one
transaction of kazma.db; then the steps after it are kept aside in the step store and the
intent is closed. An undo commits kazma.db's part with its row marked `undoing`, then puts
the steps back. A crash between the two leaves only the step store's part, which can run
again safely: whoever finds it finishes it, under the chat's lease. The server does at its
start (waiting for a busy chat), and every replica's sweep does (Core.sweep) once the
replica that began it is gone and its lease freed, so a restore cut on a dead replica is
finished by the others instead of waiting for some replica to restart. A restore cut before
its kazma.db transaction committed left nothing: the chat is as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from kazma_core import crashpoints
from kazma_core.errors import NotFound, TurnRunning
from kazma_core.events import EventBus
from kazma_core.replicas.leases import chat_lease
from kazma_core.rewind.files import WorkspaceFiles
from kazma_core.rewind.rows import UNDOING, Intent, RewindRows, Undo
from kazma_core.stores.chats_sql import ChatStore
from kazma_core.stores.leases_sql import LeaseStore
from kazma_core.stores.snapshots import SnapshotStore

log = logging.getLogger(__name__)


class RewindFinisher:
    def __init__(
        self, rows: RewindRows, snapshots: SnapshotStore, chats: ChatStore, leases: LeaseStore, events: EventBus, lease_seconds: float,
        files_of: Callable[[str], Path] | None = None,
    ) -> None:
        self.files = WorkspaceFiles(snapshots.files)
        self.files_of = files_of
        self.rows = rows
        self.snapshots = snapshots
        self.chats = chats
        self.leases = leases
        self.events = events
        self.lease_seconds = lease_seconds

    async def workspace(self, chat_id: str) -> Path:
        """The folder of the chat's owner: the only one a restore of its files touches."""
        chat = await self.chats.get_chat(chat_id)
        if chat is None or self.files_of is None:
            raise NotFound(message_id="chat_missing")
        return self.files_of(chat.owner_id)

    async def restore_steps(self, intent: Intent) -> int:
        """The restore's files put in place, its steps after its step kept aside (not for the files
        alone), then its intent closed. Safe to run again."""
        files = intent.payload.get("files") or []
        if files:
            await self.files.put(intent.chat_id, await self.workspace(intent.chat_id), files)
        removed = 0
        if intent.payload.get("what", "conversation") != "files":
            removed = await self.snapshots.keep_after(intent.chat_id, intent.step_id, intent.id)
            crashpoints.passed("restore-steps")
        await self.rows.finish_intent(intent.id)
        return removed

    async def undo_steps(self, undo: Undo) -> tuple[int, int]:
        """The undo's steps put back, its files as before the restore, then its row marked undone.
        Safe to run again. Returns (steps, files) put back."""
        back = await self.snapshots.put_back(undo.chat_id, undo.restore_id)
        crashpoints.passed("undo-steps")
        files = 0
        if await self.snapshots.files.undo_rows(undo.chat_id, undo.restore_id):
            files = await self.files.put_back(undo.chat_id, undo.restore_id, await self.workspace(undo.chat_id))
        await self.rows.undone(undo)
        crashpoints.passed("undo-done")
        return back, files

    async def finish_cut(self, wait: float = 0.0) -> list[str]:
        """Finish every restore and undo cut after its kazma.db part, each under its chat's lease
        (waiting up to `wait` s for it). A chat still held is left: a restore under way on a live
        replica finishes itself, and a dead holder's lease is freed by `Core.recover` first.
        Returns the chats whose restore or undo was finished here."""
        finished: list[str] = []
        for intent in await self.rows.open_intents():
            try:
                async with chat_lease(self.leases, intent.chat_id, "restore", self.lease_seconds, wait=wait, finishing=True):
                    # Finished meanwhile by its own replica: the steps after it now are a later turn's.
                    if intent.id not in {i.id for i in await self.rows.open_intents()}:
                        continue
                    await self.restore_steps(intent)
            except TurnRunning:
                continue
            self.events.publish(intent.chat_id, "reload", {"reason": "restored"})
            log.warning("finished the restore of chat %s to step %s, cut off before its steps", intent.chat_id, intent.step_id)
            finished.append(intent.chat_id)
        for undo in await self.rows.undoing():
            try:
                async with chat_lease(self.leases, undo.chat_id, "undo", self.lease_seconds, wait=wait):
                    now = await self.rows.undo_of(undo.chat_id)
                    if now is None or now.state != UNDOING or now.restore_id != undo.restore_id:
                        continue
                    await self.undo_steps(undo)
            except TurnRunning:
                continue
            self.events.publish(undo.chat_id, "reload", {"reason": "undone"})
            log.warning("finished the undo of a restore of chat %s, cut off before its steps", undo.chat_id)
            finished.append(undo.chat_id)
        return finished
