"""What a restore kept aside for its undo, and the one rule of when it goes for good.

A restore keeps what it took back (rows in kazma.db, steps in snapshots.db) so that it can
be undone. That ends when the chat moves on, a turn or a reset starting in it, and when
anything in it is forgotten (the chat, one memory, or its memory turned off): forgetting
still means gone, so the conversation history before the restore goes too.
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
        later undo is told. kazma.db first: a crash between leaves only kept-aside steps no undo
        wants, which the next start deletes (RewindService.recover)."""
        if not await self.rows.drop_undo(chat_id, why):
            return False
        await self.snapshots.drop_kept(chat_id)
        if why == FORGOTTEN:
            # The checkpoints from before the restore hold what it took back.
            await self.conversation.prune(chat_id, keep=1)
        return True
