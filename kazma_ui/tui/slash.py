"""Slash commands typed in the TUI, carried out over the HTTP routes and worded by commands/.

The grammar is commands.parser's (the one registry); the answers are commands.render's,
fed with the JSON the server sent. A change (restore, fork, clear) is asked about first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
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
    Reset,
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
        # Restores this TUI asked for: their `reload` events are not news to it.
        self.own_restores: set[str] = set()

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
            return Outcome(render.comparison(await self.client.compare(chat_id, cmd.a, cmd.b), lang))
        if isinstance(cmd, ReplayRestore):
            return await self._restore(cmd, chat_id)
        if isinstance(cmd, ReplayClear):
            return await self._clear(chat_id)
        if isinstance(cmd, Fork):
            return await self._fork(cmd, chat_id)
        if isinstance(cmd, Help):
            return Outcome(registry.help_text(lang, "tui") + "\n" + say("keys", lang))
        if isinstance(cmd, (Reset, MemoryOff)):
            return Outcome(say("no_route", lang, command=cmd.text()), alert=True)
        raise TypeError(f"not a command: {cmd!r}")

    async def _restore(self, cmd: ReplayRestore, chat_id: str) -> Outcome:
        preview = await self.client.preview(chat_id, cmd.step)
        step_id = preview["snapshot"]["snapshot_id"]
        # A step saved cut cannot be restored: the server's refusal (audited) says so,
        # rather than a question without a choice.
        if preview["restorable"] and not await self.confirm(render.restore_question(preview, self.lang)):
            return Outcome(say("cancelled", self.lang))
        self.own_restores.add(step_id)
        try:
            done = await self.client.restore(chat_id, step_id)
        except BaseException:
            self.own_restores.discard(step_id)
            raise
        text = t("restored", self.lang, label=render.label(done["snapshot"], self.lang), removed=done["removed_steps"])
        return Outcome(text, reload=True)

    async def _fork(self, cmd: Fork, chat_id: str) -> Outcome:
        snap = (await self.client.step(chat_id, cmd.step))["snapshot"]
        question = t("confirm_fork", self.lang, label=render.label(snap, self.lang), short_id=render.short_id(snap["snapshot_id"]))
        if not snap["truncated"] and not await self.confirm(question):
            return Outcome(say("cancelled", self.lang))
        done = await self.client.fork(chat_id, snap["snapshot_id"])
        text = say("forked_open", self.lang, label=render.label(snap, self.lang), title=done["title"])
        return Outcome(text, open_chat=done["thread_id"])

    async def _clear(self, chat_id: str) -> Outcome:
        count = len((await self.client.steps(chat_id))["snapshots"])
        if not count:
            return Outcome(t("no_steps", self.lang))
        if not await self.confirm(t("confirm_clear", self.lang, count=count)):
            return Outcome(say("cancelled", self.lang))
        done = await self.client.clear(chat_id)
        return Outcome(t("cleared", self.lang, deleted=done["deleted"]))
