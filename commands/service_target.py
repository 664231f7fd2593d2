"""A command's chat in the server's process: the rewind service and the core, acting as one
person from one surface (the web chat's command route, the chat apps)."""

from __future__ import annotations

from dataclasses import dataclass

from commands.target import message_of
from kazma_core.errors import NotFound, WrongMessage
from kazma_core.stores.types import User
from kazma_ui.rewind_results import (
    Cleared,
    Comparison,
    Forked,
    Restored,
    RestorePreview,
    StepDetail,
    StepList,
    StepView,
    Undone,
)
from kazma_ui.thread_rewind import GroupGrant, RewindService


@dataclass(frozen=True)
class ServiceTarget:
    service: RewindService
    user: User
    surface: str
    chat_id: str
    grant: GroupGrant | None = None  # in a group chat: what the platform vouches this person may do

    async def _point(self, address: str) -> tuple[str | None, int | None]:
        """(the step address, the transcript message): a step address as given, with no message; a
        message ("#<row id>") by its point's rule (`kazma_ui/message_point.py`), as its step's id,
        or with no step before the chat's first message, where the rewind service decides by the
        message itself, as the HTTP routes do."""
        row = message_of(address)
        if row is None:
            return address, None
        point = await self.service.message_point(self.user, self.surface, self.chat_id, row, self.grant)
        if not point.kept:  # said for a chat app: it has no edit or regenerate to start a version
            raise NotFound(message_id="message_step_gone_here", turn=point.turn_index)
        return (point.step.id, None) if point.step is not None else (None, row)

    async def list_steps(self) -> StepList:
        return await self.service.list_steps(self.user, self.surface, self.chat_id, self.grant)

    async def get_step(self, address: str, limit: int | None = None) -> StepDetail:
        step, _ = await self._point(address)
        if step is None:
            raise WrongMessage(message_id="message_first")
        return await self.service.get_step(self.user, self.surface, self.chat_id, step, self.grant, limit=limit)

    async def preview_restore(self, address: str) -> RestorePreview:
        step, row = await self._point(address)
        return await self.service.preview_restore(
            self.user, self.surface, self.chat_id, step, self.grant, refuse_cut=True, message_id=row
        )

    async def restore(self, address: str, *, what: str = "conversation", force: bool = False) -> Restored:
        step, row = await self._point(address)
        return await self.service.restore(
            self.user, self.surface, self.chat_id, step, self.grant, message_id=row, what=what, force=force
        )

    async def undo(self) -> Undone:
        return await self.service.undo(self.user, self.surface, self.chat_id, self.grant)

    async def preview_fork(self, address: str) -> StepView | None:
        step, _ = await self._point(address)
        if step is None:  # before the first message: the fork will be a new empty chat, of the forker's storage
            await self.service.core.turns.quota.refuse_when_full(self.user.id, fresh=True)
            return None
        return await self.service.preview_fork(self.user, self.surface, self.chat_id, step, self.grant)

    async def fork(self, address: str) -> Forked:
        step, row = await self._point(address)
        return await self.service.fork(self.user, self.surface, self.chat_id, step, self.grant, message_id=row)

    async def compare(self, a: str, b: str, b_chat_id: str | None) -> Comparison:
        return await self.service.compare(self.user, self.surface, self.chat_id, a, b, self.grant, b_chat_id=b_chat_id)

    async def clear(self) -> Cleared:
        return await self.service.clear(self.user, self.surface, self.chat_id, self.grant)

    async def stop(self) -> bool:
        await self.check_owner()
        return await self.service.core.chats.stop(self.chat_id)

    async def reset(self) -> None:
        core = self.service.core
        await self.check_owner()
        await core.turns.settle_expired(self.chat_id)  # an expired card must not block a reset
        await core.chats.reset(self.user, self.chat_id)

    async def check_owner(self) -> None:
        await self.service.core.chats.owned(self.user, self.chat_id)

    async def memory_off(self) -> None:
        await self.check_owner()
        await self.service.core.chats.memory_off(self.user, self.chat_id)
