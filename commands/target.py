"""What a command acts on: the chat it was typed in, as the surface reaches it.

In the server's process (the web chat, the chat apps) that is the rewind service and the
core (`commands.service_target.ServiceTarget`); in the terminal it is the HTTP API
(`kazma_ui.tui.http_target.HttpTarget`). Both answer with the rewind service's typed
results, so one handler per command serves every surface.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

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

# A transcript message given where a step is ("#42"): a chat app's reply or message command acts on
# that message's point (kazma_ui/message_point.py), which `ServiceTarget` resolves. Never a step
# address (those are hex), and only this chat's messages are found.
MESSAGE = re.compile(r"#([1-9][0-9]{0,17})")


def message_address(row_id: int) -> str:
    """A transcript row as a command's step argument."""
    return f"#{row_id}"


def message_of(address: str) -> int | None:
    """The transcript row a step argument names, or None when it is a step address."""
    found = MESSAGE.fullmatch(address.strip())
    return int(found.group(1)) if found else None


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

    async def preview_fork(self, address: str) -> StepView | None:
        """The step a fork would branch; refused, as the fork would be, when it is saved cut.
        None: a message's point before the chat's first message, where the fork is a new empty chat."""
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
