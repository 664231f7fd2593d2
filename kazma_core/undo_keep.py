"""What a restore kept aside for its undo, and the one rule of when it goes for good.

A restore keeps what it took back (rows in kazma.db, steps in snapshots.db, and the chat's
checkpoints from before it, which the undo makes the newest again) so that it can be undone.
That ends when the chat moves on, a turn or a reset starting in it, when the undo runs out,
and when anything in it is forgotten (the chat, one memory, or its memory turned off). Then
all of it goes for good: the kept-aside rows and steps, the checkpoints from before the
restore with their writes, and every message body none of what stays refers to, each in the
transaction that drops its last reference; and the files' write-ahead logs are emptied, so
no copy of it is left in the data folder.
"""

from __future__ import annotations

from kazma_core.stores.app_rewind import FORGOTTEN, TURN, RewindRows
from kazma_core.stores.interfaces import ConversationStore
from kazma_core.stores.snapshots import SnapshotStore

__all__ = ["FORGOTTEN", "TURN", "UndoKeep"]


class UndoKeep:
    def __init__(self, rows: RewindRows, snapshots: SnapshotStore, conversation: ConversationStore) -> None:
        self.rows = rows
        self.snapshots = snapshots
        self.conversation = conversation

    async def drop(self, chat_id: str, why: str) -> bool:
        """Drop the chat's undo, if it has one ready; `why` (TURN, FORGOTTEN, EXPIRED) is what a
        later undo is told. kazma.db first, in one transaction (the undo's row, its kept-aside
        rows, the checkpoints from before the restore and the bodies they alone held): a crash
        after it leaves only kept-aside steps no undo wants, which the next start deletes
        (RewindService.recover)."""
        if not await self.rows.ready(chat_id):
            return False
        if not await self.conversation.drop_history(chat_id, self.rows.give_up(chat_id, why)):
            return False
        await self.snapshots.drop_kept(chat_id)
        await self.snapshots.purge_wal()
        await self.rows.purge()
        return True
