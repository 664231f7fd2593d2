"""The undo of a chat's last restore: when it is offered, and how it puts back what the restore took.

The rewind service (`kazma_ui/thread_rewind.py`) calls these inside its checks, audit and the
chat's lease, as it does for a restore; the rules of the undo itself live here.
"""

from __future__ import annotations

import time

from kazma_core import crashpoints
from kazma_core.core import Core
from kazma_core.errors import NotFound
from kazma_core.rewind.rows import EXPIRED, FORGOTTEN, READY, TURN, UNDONE, RewindRows, Undo
from kazma_ui.rewind_results import PutBack, UndoOffer

# Why there is nothing to undo, by the state of the chat's last restore (none: never restored):
# each is the sentence `undo_<state>` of the catalogue's errors.
NOTHING_TO_UNDO = frozenset(f"undo_{state}" for state in ("none", UNDONE, TURN, FORGOTTEN, EXPIRED))


class Undos:
    def __init__(self, core: Core, rows: RewindRows) -> None:
        self.core = core
        self.rows = rows

    async def offer(self, chat_id: str) -> UndoOffer | None:
        """What an undo of the chat's last restore is offered with, or None when there is none."""
        undo = await self.rows.undo_of(chat_id)
        if undo is None or undo.state != READY or undo.expires_at <= time.time():
            return None
        return UndoOffer(step_id=undo.step_id, expires_at=undo.expires_at)

    async def undoable(self, chat_id: str) -> Undo:
        """The chat's last restore if it can be undone now; not_found with the reason otherwise."""
        undo = await self.rows.undo_of(chat_id)
        state = undo.state if undo is not None else None
        if undo is not None and state == READY and undo.expires_at <= time.time():
            await self.core.kept.drop(chat_id, EXPIRED)
            state = EXPIRED
        if undo is None or state != READY:
            reason = f"undo_{state or 'none'}"
            raise NotFound(message_id=reason if reason in NOTHING_TO_UNDO else "undo_none", reason=reason)
        return undo

    async def put_back(self, undo: Undo) -> PutBack:
        """Put back exactly what the restore took: the transcript rows, the agent's state, memories
        and facts, approval cards, steps and the turn count. kazma.db's part commits in one
        transaction, then the steps come back (`finish`, which a restart runs again if needed)."""
        chat_id = undo.chat_id
        back = await self.rows.kept_counts(chat_id, undo.restore_id)
        put_back = undo.checkpoint_before is not None and await self.core.conversation.drop_after(
            chat_id, undo.checkpoint_before, self.rows.undo_writes(undo)
        )
        crashpoints.passed("undo-checkpoint")
        if not put_back:
            await self.core.kept.drop(chat_id, EXPIRED)
            raise NotFound(message_id=f"undo_{EXPIRED}", reason=f"undo_{EXPIRED}")
        steps, files = await self.finish(undo)
        return PutBack(**back, steps=steps, files=files or None)

    async def finish(self, undo: Undo) -> tuple[int, int]:
        """The undo's part outside kazma.db: the steps and the files come back. Safe to run again after a crash."""
        return await self.core.rewinds.undo_steps(undo)
