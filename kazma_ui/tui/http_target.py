"""A command's chat as the TUI reaches it: the server's HTTP routes, read back into the rewind
service's own results, so the TUI runs each command with the registry's one handler.

The changes this TUI asks for are noted in `expected` while they run, as (reload reason,
step id): their `reload` events are no news to it (the command shows the chat anew itself).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

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
from kazma_ui.tui.client import SURFACE, ApiError, KazmaClient

Expected = set[tuple[str, str | None]]


class Refused(ApiError):
    """A command the server ran on its command route and refused: its text is worded for this person already."""


class HttpTarget:
    surface = SURFACE

    def __init__(self, client: KazmaClient, chat_id: str, expected: Expected) -> None:
        self.client = client
        self.chat_id = chat_id
        self.expected = expected

    @contextlib.asynccontextmanager
    async def _expecting(self, reload: tuple[str, str | None]) -> AsyncIterator[None]:
        self.expected.add(reload)
        try:
            yield
        except BaseException:
            self.expected.discard(reload)
            raise

    async def list_steps(self) -> StepList:
        return StepList.model_validate(await self.client.steps(self.chat_id))

    async def get_step(self, address: str, limit: int | None = None) -> StepDetail:
        return StepDetail.model_validate(await self.client.step(self.chat_id, address, limit=limit))

    async def preview_restore(self, address: str) -> RestorePreview:
        preview = RestorePreview.model_validate(await self.client.preview(self.chat_id, address))
        if not preview.restorable:
            # The route's preview shows a step saved cut without refusing it (the Time Travel page
            # shows such a step); over HTTP the refusal, audited, is the server's answer to the restore.
            await self.restore(preview.step.step_id)
        return preview

    async def restore(self, address: str, *, what: str = "conversation", force: bool = False) -> Restored:
        async with self._expecting(("restored", address)):
            return Restored.model_validate(await self.client.restore(self.chat_id, address, what=what, force=force))

    async def undo(self) -> Undone:
        async with self._expecting(("undone", None)):
            return Undone.model_validate(await self.client.undo(self.chat_id))

    async def preview_fork(self, address: str) -> StepView:
        step = (await self.get_step(address, limit=1)).step
        if step.truncated:
            await self.fork(step.step_id)  # refused and audited by the server, as a restore of it is
        return step

    async def fork(self, address: str) -> Forked:
        return Forked.model_validate(await self.client.fork(self.chat_id, address))

    async def compare(self, a: str, b: str, b_chat_id: str | None) -> Comparison:
        return Comparison.model_validate(await self.client.compare(self.chat_id, a, b, b_chat_id))

    async def clear(self) -> Cleared:
        return Cleared.model_validate(await self.client.clear(self.chat_id))

    async def stop(self) -> bool:
        return bool((await self.client.stop(self.chat_id))["stopped"])

    async def reset(self) -> None:
        await self._on_server("/reset", ("reset", None))

    async def check_owner(self) -> None:
        """Nothing to check here: the TUI lists only its person's chats, and the server checks again when it runs."""

    async def memory_off(self) -> None:
        await self._on_server("/memory off", ("forgotten", None))

    async def _on_server(self, text: str, reload: tuple[str, str | None]) -> None:
        """A command without a route of its own, run by the server's command route."""
        async with self._expecting(reload):
            # The person confirmed in the TUI already (only /memory off asks).
            answer = await self.client.command(self.chat_id, text, confirmed=True)
            if answer["kind"] == "error":
                raise Refused(200, answer["code"] or "error", answer["text"])
