"""Slash-command grammar: text -> a typed command, a usage result, or None (a plain message).

The words and argument counts come from the registry; this module only binds them to
typed objects. `parse` never raises: a person's text is never an error of the program.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from commands import registry
from kazma_core.errors import KazmaError

# A command word as Telegram allows it, optionally addressed to a bot ("/replay@KazmaBot"),
# then whitespace or the end. Anything else ("/etc/passwd is...") is a plain message.
COMMAND = re.compile(r"/(?P<word>[A-Za-z0-9_]{1,64})(?:@(?P<bot>[A-Za-z0-9_]{1,64}))?(?=\s|\Z)")
SHOWN_WORD = 40


class BadCommand(KazmaError):
    code = "bad_command"
    status = 400


class _Typed:
    path: ClassVar[str]

    def args(self) -> tuple[str, ...]:
        return ()

    def text(self) -> str:
        """The command as typed in full, so a confirmation repeats exactly what was asked."""
        return registry.leaf(self.path).typed(self.args())


@dataclass(frozen=True)
class ReplayList(_Typed):
    path: ClassVar[str] = "replay list"


@dataclass(frozen=True)
class ReplayRestore(_Typed):
    path: ClassVar[str] = "replay restore"
    step: str
    what: str | None = None  # "files" or "both"; none: the conversation (the SPEC's restore)
    force: str | None = None  # "force": overwrite files something else changed since

    def args(self) -> tuple[str, ...]:
        return (self.step, *([self.what] if self.what else []), *(["force"] if self.force and self.what else []))


@dataclass(frozen=True)
class ReplayUndo(_Typed):
    path: ClassVar[str] = "replay undo"


@dataclass(frozen=True)
class ReplayShow(_Typed):
    path: ClassVar[str] = "replay show"
    step: str

    def args(self) -> tuple[str, ...]:
        return (self.step,)


@dataclass(frozen=True)
class ReplayCompare(_Typed):
    path: ClassVar[str] = "replay compare"
    a: str
    b: str  # a step of this chat, or "<chat>:<step>": a step of a fork of it, or of its source

    def other(self) -> tuple[str | None, str]:
        """(the chat of b when another one is named, b's step)."""
        chat, colon, step = self.b.rpartition(":")
        return (chat or None, step) if colon else (None, self.b)

    def args(self) -> tuple[str, ...]:
        return (self.a, self.b)


@dataclass(frozen=True)
class ReplayClear(_Typed):
    path: ClassVar[str] = "replay clear"


@dataclass(frozen=True)
class Fork(_Typed):
    path: ClassVar[str] = "fork"
    step: str
    here: str | None = None  # "here": the fork stays a chat of its own, no thread or topic is opened

    def __post_init__(self) -> None:
        object.__setattr__(self, "here", "here" if self.here else None)

    def args(self) -> tuple[str, ...]:
        return (self.step, "here") if self.here else (self.step,)


@dataclass(frozen=True)
class Stop(_Typed):
    path: ClassVar[str] = "stop"


@dataclass(frozen=True)
class Reset(_Typed):
    path: ClassVar[str] = "reset"


@dataclass(frozen=True)
class MemoryOff(_Typed):
    path: ClassVar[str] = "memory off"


@dataclass(frozen=True)
class Help(_Typed):
    path: ClassVar[str] = "help"


Command = (
    ReplayList | ReplayRestore | ReplayUndo | ReplayShow | ReplayCompare | ReplayClear | Fork | Stop | Reset | MemoryOff | Help
)

BUILDERS: dict[str, Callable[..., Command]] = {
    cls.path: cls
    for cls in (ReplayList, ReplayRestore, ReplayUndo, ReplayShow, ReplayCompare, ReplayClear, Fork, Stop, Reset, MemoryOff, Help)
}


@dataclass(frozen=True)
class Usage:
    """A slash command that is not right: which command's usage to show, and why."""

    code: ClassVar[str] = "bad_command"
    command: str | None  # a registry path ("replay compare", "memory"), or None for an unknown command
    reason: str  # unknown_command, missing_subcommand, unknown_subcommand, missing_argument, extra_argument, too_long, bad_choice
    word: str = ""  # the word at fault, shortened
    missing: tuple[str, ...] = ()  # names of the missing arguments

    def error(self, surface: str | None = None) -> BadCommand:
        """The error to show: the reason's sentence (`bad_command.<reason>`) with the usage lines."""
        return BadCommand(
            message_id=f"bad_command.{self.reason}", command=self.command, reason=self.reason, word=self.word,
            usage=registry.usages(self.command, surface), missing=list(self.missing),
        )


def _shown(word: str) -> str:
    return word if len(word) <= SHOWN_WORD else word[: SHOWN_WORD - 1] + "…"


def _bind(leaf: registry.Leaf, words: list[str]) -> Command | Usage:
    spec = leaf.cmd.args
    needed = [a for a in spec if a.required]
    if len(words) < len(needed):
        return Usage(leaf.path, "missing_argument", missing=tuple(a.name for a in needed[len(words):]))
    if len(words) > len(spec):
        return Usage(leaf.path, "extra_argument", word=_shown(words[len(spec)]))
    for arg, word in zip(spec, words, strict=False):
        if arg.choices and word.lower() not in arg.choices:
            return Usage(leaf.path, "bad_choice", word=_shown(word))
        if len(word) > arg.max_length:
            return Usage(leaf.path, "too_long", word=_shown(word))
    return BUILDERS[leaf.path](*(w.lower() if a.choices else w for a, w in zip(spec, words, strict=False)))


def parse(text: object, bot_name: str | None = None) -> Command | Usage | None:
    """The command in a message; None when it is a plain message for the agent.

    `bot_name`: in a group, "/replay@OtherBot" is addressed to another bot, so it is
    not ours (None); without a bot name any address is accepted.
    """
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    match = COMMAND.match(stripped)
    if match is None:
        return None
    bot = match.group("bot")
    if bot and bot_name and bot.lower() != bot_name.lstrip("@").lower():
        return None
    word = match.group("word").lower()
    words = stripped[match.end():].split()
    cmd = registry.top(word)
    if cmd is None:
        return Usage(None, "unknown_command", word=_shown(match.group("word")))
    if not cmd.subcommands:
        return _bind(registry.leaf(cmd.name), words)
    if not words:
        if cmd.default is None:
            return Usage(cmd.name, "missing_subcommand")
        return _bind(registry.leaf(f"{cmd.name} {cmd.default}"), [])
    sub = cmd.sub(words[0].lower())
    if sub is not None:
        return _bind(registry.leaf(f"{cmd.name} {sub.name}"), words[1:])
    implicit = next((s for s in cmd.subcommands if s.implicit), None)
    if implicit is not None:
        return _bind(registry.leaf(f"{cmd.name} {implicit.name}"), words)
    return Usage(cmd.name, "unknown_subcommand", word=_shown(words[0]))
