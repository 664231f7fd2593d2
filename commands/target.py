"""What a command acts on: the chat it was typed in, as the surface reaches it.

In the server's process (the web chat, the chat apps) that is the rewind service and the
core (`commands.service_target.ServiceTarget`); in the terminal it is the HTTP API
(`kazma_ui.tui.http_target.HttpTarget`). Both answer with the rewind service's typed
results, so one handler per command serves every surface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kazma_ui.rewind_results import (
    Cleared,
    Comparison,
    Forked,
    RestorePreview,
    Restored,
    StepDetail,
    StepList,
    StepView,
    Undone,
)


class Target(Protocol):
    @property
    def chat_id(self) -> str: ...

    @property
    def surface(self) -> str:
        """web, tui, telegram, discord or slack"""
        ...

    async def list_steps(self) -> StepList: ...

    async def get_step(self, address: str, limit: int | None = None) -> StepDetail:
        """The step with its newest `limit` messages (all of them without)."""
        ...

    async def preview_restore(self, address: str) -> RestorePreview:
        """What a restore would take back; refused, as the restore would be, when it cannot happen
        (a step saved cut included), so nobody is asked to confirm it."""
        ...

    async def restore(self, address: str, *, what: str = "conversation", force: bool = False) -> Restored:
        """`what`: conversation, files or both; `force` overwrites files something else changed since."""
        ...

    async def undo(self) -> Undone: ...

    async def preview_fork(self, address: str) -> StepView:
        """The step a fork would branch; refused, as the fork would be, when it is saved cut."""
        ...

    async def fork(self, address: str) -> Forked: ...

    async def compare(self, a: str, b: str, b_chat_id: str | None) -> Comparison: ...

    async def clear(self) -> Cleared: ...

    async def stop(self) -> bool:
        """Stop the chat's running turn; whether one ran."""
        ...

    async def reset(self) -> None: ...

    async def check_owner(self) -> None:
        """Refuse a person who may not change the chat's memory, before asking them to confirm."""
        ...

    async def memory_off(self) -> None: ...


@dataclass(frozen=True)
class CommandContext:
    target: Target
    lang: str  # en or ar
    base_url: str  # where the web app is served, for links
    confirmed: bool = False  # the person already said yes to this change
