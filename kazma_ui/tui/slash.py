"""Slash commands typed in the TUI, carried out over the HTTP routes and worded by commands/.

The grammar is commands.parser's (the one registry); the answers are commands.render's,
fed with the JSON the server sent. A change (restore, fork, clear) is asked about first.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import quote

from commands import registry, render
from commands.i18n import error_text, t
from commands.parser import (
    Command,
    Fork,
    Help,
    MemoryOff,
    ReplayClear,
    ReplayCompare,
    ReplayList,
    ReplayRestore,
    ReplayShow,
    ReplayUndo,
    Reset,
    Stop,
    Usage,
)
from kazma_core.errors import KazmaError
from kazma_ui.tui.client import ConnectionLost, KazmaClient
from kazma_ui.tui.sentences import say

Confirm = Callable[[str], Awaitable[bool]]


@dataclass(frozen=True)
class Outcome:
    """What the app shows after a command, and what it does next."""

    text: str
    alert: bool = False  # a refusal or a mistake, shown as such
    reload: bool = False  # the open chat changed on the server: show it anew, then the text
    open_chat: str | None = None  # a new chat to switch to (a fork), then the text


class SlashRunner:
    def __init__(self, client: KazmaClient, lang: str, confirm: Confirm) -> None:
        self.client = client
        self.lang = lang
        self.confirm = confirm
        # Changes this TUI asked for, as (reload reason, step id): their `reload` events are
        # not news to it, the command itself shows the chat anew and says what happened.
        self.expected: set[tuple[str, str | None]] = set()

    async def run(self, cmd: Command | Usage, chat_id: str) -> Outcome:
        """Carry out a command; a refusal is an Outcome, a lost server a ConnectionLost."""
        try:
            return await self._run(cmd, chat_id)
        except ConnectionLost:
            raise
        except KazmaError as err:
            return Outcome(error_text(err, self.lang), alert=True)

    def page_link(self, chat_id: str) -> str:
        return f"{self.client.url}/replay?thread={quote(chat_id, safe='')}"

    async def _run(self, cmd: Command | Usage, chat_id: str) -> Outcome:
        lang = self.lang
        if isinstance(cmd, Usage):
            raise cmd.error("tui")
        if isinstance(cmd, ReplayList):
            listing = await self.client.steps(chat_id)
            if not listing["snapshots"]:
                return Outcome(t("no_steps", lang))
            return Outcome(render.step_list(listing, lang, self.page_link(chat_id))[0])
        if isinstance(cmd, ReplayShow):
            return Outcome(render.step_view(await self.client.step(chat_id, cmd.step), lang))
        if isinstance(cmd, ReplayCompare):
            other, b = cmd.other()
            return Outcome(render.comparison(await self.client.compare(chat_id, cmd.a, b, other), lang))
        if isinstance(cmd, ReplayUndo):
            async with self._expecting(("undone", None)):
                done = await self.client.undo(chat_id)
            return Outcome(render.undone(done, lang), reload=True)
        if isinstance(cmd, ReplayRestore):
            return await self._restore(cmd, chat_id)
        if isinstance(cmd, ReplayClear):
            return await self._clear(chat_id)
        if isinstance(cmd, Fork):
            return await self._fork(cmd, chat_id)
        if isinstance(cmd, Help):
            return Outcome(registry.help_text(lang, "tui") + "\n" + say("keys", lang))
        if isinstance(cmd, Stop):
            done = await self.client.stop(chat_id)
            return Outcome(t("stopped" if done["stopped"] else "nothing_running", lang))
        if isinstance(cmd, Reset):
            return await self._on_server(cmd, chat_id, ("reset", None))
        if isinstance(cmd, MemoryOff):
            if not await self.confirm(t("confirm_memory_off", lang)):
                return Outcome(say("cancelled", lang))
            return await self._on_server(cmd, chat_id, ("forgotten", None))
        raise TypeError(f"not a command: {cmd!r}")

    async def _restore(self, cmd: ReplayRestore, chat_id: str) -> Outcome:
        preview = await self.client.preview(chat_id, cmd.step)
        step_id = preview["snapshot"]["snapshot_id"]
        # A step saved cut cannot be restored: the server's refusal (audited) says so,
        # rather than a question without a choice.
        if preview["restorable"] and not await self.confirm(render.restore_question(preview, self.lang)):
            return Outcome(say("cancelled", self.lang))
        async with self._expecting(("restored", step_id)):
            done = await self.client.restore(chat_id, step_id)
        return Outcome(render.restored(done, self.lang), reload=True)

    async def _on_server(self, cmd: Reset | MemoryOff, chat_id: str, reload: tuple[str, str | None]) -> Outcome:
        """A command without a route of its own, run by the server's command route."""
        async with self._expecting(reload):
            # The person confirmed in the TUI already (only /memory off asks).
            answer = await self.client.command(chat_id, cmd.text(), confirmed=True)
        if answer["kind"] == "error":
            self.expected.discard(reload)
            return Outcome(answer["text"], alert=True)
        return Outcome(answer["text"], reload=True)

    @contextlib.asynccontextmanager
    async def _expecting(self, reload: tuple[str, str | None]) -> AsyncIterator[None]:
        self.expected.add(reload)
        try:
            yield
        except BaseException:
            self.expected.discard(reload)
            raise

    async def _fork(self, cmd: Fork, chat_id: str) -> Outcome:
        snap = (await self.client.step(chat_id, cmd.step))["snapshot"]
        label, short_id = render.label(snap, self.lang), render.short_id(snap["snapshot_id"])
        question = t("confirm_fork", self.lang, label=label, short_id=short_id)
        if not snap["truncated"] and not await self.confirm(question):
            return Outcome(say("cancelled", self.lang))
        done = await self.client.fork(chat_id, snap["snapshot_id"])
        text = say("forked_open", self.lang, label=label, title=done["title"])
        return Outcome(text, open_chat=done["thread_id"])

    async def _clear(self, chat_id: str) -> Outcome:
        count = len((await self.client.steps(chat_id))["snapshots"])
        if not count:
            return Outcome(t("no_steps", self.lang))
        if not await self.confirm(t("confirm_clear", self.lang, count=count)):
            return Outcome(say("cancelled", self.lang))
        done = await self.client.clear(chat_id)
        return Outcome(t("cleared", self.lang, deleted=done["deleted"]))
