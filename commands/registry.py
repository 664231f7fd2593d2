"""The one registry of slash commands: each is declared once, every surface derives its view.

A command's words, arguments, where it is offered, its handler and whether it asks before
it runs (its `ask` handler) are declared here together. Help text, Telegram's command menu,
the Discord/Slack slash definitions and every surface's dispatch (`commands.executor.dispatch`)
are computed from `COMMANDS`, so adding or renaming a command is one edit here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from commands import handlers
from commands.answers import CommandResult, HelpAnswer, HelpLine
from commands.i18n import t
from commands.target import CommandContext
from kazma_core.catalogue.chat_apps import CHAT_APPS as CHAT_APP_WORDS
from kazma_core.catalogue.help import HELP
from kazma_core.catalogue.text import Text
from kazma_ui.step_address import MAX_ADDRESS

# A handler takes its own command type (commands.parser), so the table can only say "a command".
Handler = Callable[[Any, CommandContext], Awaitable[CommandResult]]

SURFACES = ("web", "tui", "telegram", "discord", "slack")
CHAT_APPS = frozenset({"telegram", "discord", "slack"})
EVERYWHERE = frozenset(SURFACES)


@dataclass(frozen=True)
class ArgDef:
    name: str
    description: Text
    max_length: int = MAX_ADDRESS
    # An optional word ("/fork <step> here"): typed as [word], it may only be one of `choices`.
    choices: tuple[str, ...] = ()
    surfaces: frozenset[str] = EVERYWHERE

    @property
    def required(self) -> bool:
        return not self.choices

    def shown(self) -> str:
        return f"<{self.name}>" if self.required else "[" + "|".join(self.choices) + "]"


@dataclass(frozen=True)
class CommandDef:
    """A command, or a subcommand of one (then `surfaces` says where it is offered)."""

    name: str
    description: Text
    args: tuple[ArgDef, ...] = ()
    subcommands: tuple[CommandDef, ...] = ()
    surfaces: frozenset[str] = frozenset()
    aliases: tuple[str, ...] = ()
    # Typed without its own name: "/replay <step>" is "/replay restore <step>".
    implicit: bool = False
    # The subcommand run when none is typed: "/replay" is "/replay list".
    default: str | None = None
    # In the web chat the command answers with a link to the Time Travel page
    # (restore, fork and compare happen there, where a step can be read first); what help says there.
    web: Text | None = None
    # Answered at once, even while a turn of the chat runs (a surface must not queue it behind the turn).
    at_once: bool = False
    # In a group chat only its owner or the group's admins may run it (the rewind service's rule);
    # a chat app that must ask the platform who administers a group asks for these only.
    group_admin: bool = False
    run: Handler | None = None  # what a runnable command does (a command with subcommands has none)
    # The question asked before `run` (or the refusal, when it cannot happen); None: it runs at once.
    ask: Handler | None = None

    def sub(self, word: str) -> CommandDef | None:
        return next((s for s in self.subcommands if s.name == word), None)

    def offered_on(self, surface: str) -> bool:
        if self.subcommands:
            return any(s.offered_on(surface) for s in self.subcommands)
        return surface in self.surfaces


@dataclass(frozen=True)
class Leaf:
    """A runnable command: its path ("replay compare"), its declaration and its parent."""

    path: str
    cmd: CommandDef
    parent: CommandDef | None

    def typed(self, args: tuple[str, ...] | None = None, surface: str | None = None) -> str:
        """How it is typed: "/replay compare <a> <b>", or with the given args filled in."""
        words = [self.parent.name] if self.parent else []
        # An argument that reads as a sibling's name ("/replay restore list") keeps the name.
        if not self.cmd.implicit or (args and self.parent and self.parent.sub(args[0].lower())):
            words.append(self.cmd.name)
        if args is None and not (surface == "web" and self.cmd.web):
            args = tuple(a.shown() for a in self.cmd.args if surface is None or surface in a.surfaces)
        return "/" + " ".join([*words, *(args or ())])

    def description(self, lang: str, surface: str | None = None) -> str:
        text = self.cmd.web if surface == "web" and self.cmd.web else self.cmd.description
        return text.get(lang)


MAX_CHAT_STEP = 64 + 1 + MAX_ADDRESS  # "<chat id>:<step id>"
STEP = ArgDef("step", HELP["arg.step"])
HERE = ArgDef("here", HELP["arg.here"], max_length=4, choices=("here",), surfaces=CHAT_APPS)
WHAT = ArgDef("what", HELP["arg.what"], max_length=5, choices=("files", "both"), surfaces=CHAT_APPS | {"tui"})
FORCE = ArgDef("force", HELP["arg.force"], max_length=5, choices=("force",), surfaces=CHAT_APPS | {"tui"})
PAGE_LINK = HELP["page_link"]


async def _help(cmd: Any, ctx: CommandContext) -> CommandResult:
    surface = ctx.target.surface
    lines = [HelpLine(usage=x.typed(surface=surface), description=x.description(ctx.lang, surface)) for x in leaves(surface)]
    return CommandResult("answer", help_text(ctx.lang, surface), HelpAnswer(commands=lines), ephemeral=True)


COMMANDS: tuple[CommandDef, ...] = (
    CommandDef(
        "replay",
        HELP["replay"],
        default="list",
        subcommands=(
            CommandDef("list", HELP["replay list"],
                       surfaces=EVERYWHERE, web=PAGE_LINK, run=handlers.replay_list),
            CommandDef("restore", HELP["replay restore"],
                       args=(STEP, WHAT, FORCE), implicit=True, surfaces=CHAT_APPS | {"tui"}, web=PAGE_LINK,
                       run=handlers.restore, ask=handlers.ask_restore, group_admin=True),
            CommandDef("undo", HELP["replay undo"],
                       surfaces=EVERYWHERE, run=handlers.undo, group_admin=True),
            CommandDef("show", HELP["replay show"],
                       args=(STEP,), surfaces=CHAT_APPS | {"tui"}, web=PAGE_LINK, run=handlers.show),
            CommandDef("compare", HELP["replay compare"],
                       args=(ArgDef("a", HELP["arg.a"]),
                             ArgDef("b", HELP["arg.b"],
                                    max_length=MAX_CHAT_STEP)),
                       surfaces=CHAT_APPS | {"tui"}, web=PAGE_LINK, run=handlers.compare),
            CommandDef("clear", HELP["replay clear"],
                       surfaces=EVERYWHERE, run=handlers.clear, ask=handlers.ask_clear, group_admin=True),
        ),
    ),
    CommandDef(
        "fork",
        HELP["fork"],
        args=(STEP, HERE), surfaces=EVERYWHERE, web=PAGE_LINK, run=handlers.fork, ask=handlers.ask_fork,
    ),
    CommandDef(
        "stop",
        HELP["stop"],
        surfaces=EVERYWHERE, at_once=True, run=handlers.stop,
    ),
    CommandDef(
        "reset",
        HELP["reset"],
        surfaces=EVERYWHERE, run=handlers.reset,
    ),
    CommandDef(
        "memory",
        HELP["memory"],
        subcommands=(
            CommandDef("off", HELP["memory off"],
                       surfaces=EVERYWHERE, run=handlers.memory_off, ask=handlers.ask_memory_off),
        ),
    ),
    CommandDef(
        "help",
        HELP["help"],
        surfaces=EVERYWHERE, aliases=("start",), run=_help,  # Telegram sends /start when a person opens the bot
    ),
)


@dataclass(frozen=True)
class MessageAction:
    """A command offered on a message itself (Discord's message commands, Slack's message shortcuts):
    it runs `path` on that message's step, asking first as the typed command does."""

    key: str  # Slack's callback_id
    name: Text  # as the message's menu shows it
    path: str  # the registry command it runs


MESSAGE_ACTIONS: tuple[MessageAction, ...] = (
    MessageAction("fork_from_here", CHAT_APP_WORDS["message_fork"], "fork"),
    MessageAction("rewind_to_here", CHAT_APP_WORDS["message_rewind"], "replay restore"),
)


def message_action(key_or_name: str) -> MessageAction | None:
    """The message action a platform names (Slack by callback_id, Discord by its English name)."""
    return next((a for a in MESSAGE_ACTIONS if key_or_name in (a.key, a.name.en)), None)


def top(word: str) -> CommandDef | None:
    """The command a typed word names (lowercase), by name or alias."""
    return next((c for c in COMMANDS if word == c.name or word in c.aliases), None)


def at_once(path: str) -> bool:
    """Whether a command is answered at once, not queued behind the chat's running turn."""
    found = find(path)
    return found is not None and found.cmd.at_once


def group_admin(path: str) -> bool:
    """Whether only a group chat's owner or admins may run a command there."""
    found = find(path)
    return found is not None and found.cmd.group_admin


def leaves(surface: str | None = None) -> list[Leaf]:
    """Every runnable command in declaration order, or those offered on one surface."""
    out: list[Leaf] = []
    for cmd in COMMANDS:
        pairs: list[tuple[str, CommandDef, CommandDef | None]] = (
            [(f"{cmd.name} {s.name}", s, cmd) for s in cmd.subcommands] or [(cmd.name, cmd, None)]
        )
        out.extend(Leaf(path, c, parent) for path, c, parent in pairs)
    return [leaf for leaf in out if surface is None or leaf.cmd.offered_on(surface)]


def find(path: str | None) -> Leaf | None:
    return next((x for x in leaves() if x.path == path), None)


def leaf(path: str) -> Leaf:
    found = find(path)
    if found is None:
        raise KeyError(f"no command {path!r} in the registry")
    return found


def usages(path: str | None, surface: str | None = None) -> list[str]:
    """How to type a command, or each subcommand of one ("replay"), or every command (None)."""
    matching = [x for x in leaves() if path is None or x.path == path or x.path.startswith(path + " ")]
    offered = [x for x in matching if surface is None or x.cmd.offered_on(surface)]
    return [x.typed(surface=surface) for x in offered] or [x.typed() for x in matching]


def help_text(lang: str, surface: str) -> str:
    """Help: a line for each command offered on the surface; in a chat app, then how to act on a message."""
    lines = [t("help_header", lang)]
    lines += [f"{x.typed(surface=surface)} — {x.description(lang, surface)}" for x in leaves(surface)]
    on_message = CHAT_APP_WORDS.get(f"help_on_message_{surface}")
    if on_message is not None:
        lines += ["", on_message.get(lang)]
    return "\n".join(lines)


def telegram_menu(lang: str = "en") -> list[tuple[str, str]]:
    """(command, description) pairs for Telegram's setMyCommands (one per top-level command)."""
    return [(c.name, c.description.get(lang)) for c in COMMANDS if c.offered_on("telegram")]


def _option(arg: ArgDef) -> dict[str, Any]:
    return {"name": arg.name, "description": arg.description.en, "description_ar": arg.description.ar,
            "required": arg.required, "max_length": arg.max_length, "choices": list(arg.choices)}


def slash_definitions(surface: str = "discord") -> list[dict[str, Any]]:
    """Slash commands for Discord and Slack: each with its subcommands, or its options.

    A subcommand typed without its name in text ("/replay <step>") still has one here
    ("restore"), because a Discord command cannot take both subcommands and options.
    """
    out: list[dict[str, Any]] = []
    for cmd in COMMANDS:
        if not cmd.offered_on(surface):
            continue
        subs = [
            {"name": s.name, "description": s.description.en, "description_ar": s.description.ar,
             "usage": leaf(f"{cmd.name} {s.name}").typed(surface=surface),
             "options": [_option(a) for a in s.args if surface in a.surfaces]}
            for s in cmd.subcommands if s.offered_on(surface)
        ]
        out.append({
            "name": cmd.name, "description": cmd.description.en, "description_ar": cmd.description.ar,
            "usage": " | ".join(usages(cmd.name, surface)),
            "options": [_option(a) for a in cmd.args if surface in a.surfaces], "subcommands": subs,
        })
    return out
