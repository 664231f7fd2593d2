"""Slash commands typed in the TUI: the registry's handlers, run over the HTTP routes.

The grammar and the handlers are commands/'s (the one registry), the chat is reached
through `HttpTarget`; a change (restore, fork, clear, /memory off) is asked about first,
in a dialog. What is the TUI's own: a fork opens its new chat, a change shows the chat anew.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from commands.answers import CommandResult, ForkAnswer, StopAnswer
from commands.executor import dispatch
from commands.i18n import error_text
from commands.parser import Command, Usage, parse
from commands.target import CommandContext
from kazma_core.errors import KazmaError
from kazma_ui.tui.client import ConnectionLost, KazmaClient
from kazma_ui.tui.http_target import Expected, HttpTarget, Refused
from kazma_ui.tui.sentences import say

Confirm = Callable[[str], Awaitable[bool]]
# Commands after which the open chat is shown anew (the server changed it).
RELOADS = frozenset({"replay restore", "replay undo", "reset", "memory off"})


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
        # Changes this TUI asked for (see HttpTarget): their `reload` events are not news to it.
        self.expected: Expected = set()

    async def run(self, cmd: Command | Usage, chat_id: str) -> Outcome:
        """Carry out a command; a refusal is an Outcome, a lost server a ConnectionLost."""
        try:
            return await self._run(cmd, chat_id)
        except ConnectionLost:
            raise
        except Refused as err:
            return Outcome(err.message, alert=True)
        except KazmaError as err:
            return Outcome(error_text(err, self.lang), alert=True)

    async def _run(self, cmd: Command | Usage, chat_id: str) -> Outcome:
        ctx = CommandContext(HttpTarget(self.client, chat_id, self.expected), self.lang, self.client.url)
        result = await dispatch(cmd, ctx)
        if result.confirm is not None:
            if not await self.confirm(result.text):
                return Outcome(say("cancelled", self.lang))
            # The question names the command in full (a step by its whole id): that is what runs.
            cmd = parse(result.confirm) or cmd
            result = await dispatch(cmd, replace(ctx, confirmed=True))
        return self._outcome("" if isinstance(cmd, Usage) else cmd.path, result)

    def _outcome(self, path: str, result: CommandResult) -> Outcome:
        if isinstance(result.value, ForkAnswer):
            fork = result.value
            return Outcome(say("forked_open", self.lang, label=fork.label, title=fork.title), open_chat=fork.chat_id)
        if path == "help":
            return Outcome(result.text + "\n" + say("keys", self.lang))
        if isinstance(result.value, StopAnswer) and result.value.stopped:
            return Outcome("")  # the chat's own "stopped" row says it, once
        return Outcome(result.text, reload=path in RELOADS)
