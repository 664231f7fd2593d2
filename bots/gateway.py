"""What every chat-app adapter shares: a platform update in, neutral replies out.

An adapter turns its platform's update into an `Incoming` (who, which chat, what text),
and posts back the `Reply`s, formatted its own way. Here: the platform user is a Kazma
user (created on first contact, or linked with `kazma users link`); the platform chat
is bound to a Kazma chat; a slash command goes through `commands/`, anything else is a
turn of the agent. Platform ids stop here: the agent only ever sees Kazma's chat id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from commands import registry
from commands.answers import CommandResult, ForkAnswer
from commands.executor import error_result, execute
from commands.i18n import pick_lang, t
from commands.parser import Fork, parse
from commands.service_target import ServiceTarget
from commands.target import CommandContext
from kazma_core.catalogue import sentence
from kazma_core.catalogue.chat_apps import CHAT_APPS
from kazma_core.core import Core
from kazma_core.errors import KazmaError
from kazma_core.stores.types import Chat, User
from kazma_ui.step_views import value_text
from kazma_ui.thread_rewind import GroupGrant, RewindService

log = logging.getLogger(__name__)

APPROVE, DENY, CONFIRM, CANCEL = "approve", "deny", "confirm", "cancel"


@dataclass(frozen=True)
class Incoming:
    platform: Literal["telegram", "discord", "slack"]
    user_id: str
    user_name: str
    chat_key: str  # the platform chat (DM, group, channel or thread), unique on the platform
    chat_title: str
    text: str = ""
    is_group: bool = False
    is_admin: bool = False  # the platform says this user administers that chat
    team: str = ""  # Slack workspace
    locale: str | None = None

    @property
    def identity(self) -> str:
        """The key `kazma users link` uses: telegram:<id>, discord:<id>, slack:<team>:<id>."""
        return f"{self.platform}:{self.team}:{self.user_id}" if self.platform == "slack" else f"{self.platform}:{self.user_id}"


@dataclass(frozen=True)
class Button:
    label: str
    action: str  # "approve:<card>", "deny:<card>", "confirm:<command text>", "cancel:"


@dataclass(frozen=True)
class Reply:
    text: str
    kind: Literal["answer", "confirm", "error", "approval"] = "answer"
    data: dict[str, Any] = field(default_factory=dict)
    ephemeral: bool = False
    buttons: list[Button] = field(default_factory=list)


@dataclass(frozen=True)
class Opened:
    """A thread or topic an adapter opened for a fork, its first message already in it."""

    chat_key: str  # the new place as `Incoming.chat_key` names it, so later messages there find the fork
    name: str  # its name, as the platform shows it
    place: Literal["thread", "topic"]


# Why a fork could not get a thread: the platform has none there, or Kazma may not open one, or it failed.
NoThread = Literal["dm", "no_topics", "no_permission", "failed"]
# An adapter's way to open a thread or topic beside the message being answered: (name, first message) -> where.
OpenThread = Callable[[str, str], Awaitable["Opened | NoThread"]]
THREAD_NAME = 90  # under Discord's 100 and Telegram's 128 characters

# The adapters' words, by language (one catalogue for every surface: kazma_core.catalogue).
LABELS = {lang: {key: text.get(lang) for key, text in CHAT_APPS.items()} for lang in ("en", "ar")}


def chat_title(where: str, **values: Any) -> str:
    """A new chat's title by where it was started (`chat_apps.title_<where>`): stored, so in English."""
    return CHAT_APPS[f"title_{where}"].get("en", **values)


def split_text(text: str, limit: int) -> list[str]:
    """Cut a long answer into pieces a platform accepts, at line ends where possible."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        cut = rest.rfind("\n", 0, limit)
        cut = cut if cut > limit // 2 else limit
        pieces.append(rest[:cut])
        rest = rest[cut:].lstrip("\n")
    pieces.append(rest)
    return pieces


class Gateway:
    def __init__(self, core: Core, rewind: RewindService, bot_name: str | None = None) -> None:
        self.core = core
        self.rewind = rewind
        self.bot_name = bot_name
        self._creating = asyncio.Lock()

    async def user(self, inc: Incoming) -> User:
        found = await self.core.store.user_for_identity(inc.identity)
        if found is not None:
            return found
        async with self._creating:  # two first messages at once must not make two users
            found = await self.core.store.user_for_identity(inc.identity)
            if found is not None:
                return found
            user = await self.core.store.user_by_name(inc.identity) or await self.core.store.add_user(inc.identity)
            await self.core.store.link_identity(inc.identity, user.id)
            return user

    async def chat(self, inc: Incoming, user: User) -> tuple[Chat, GroupGrant | None]:
        key = f"{inc.platform}:{inc.chat_key}"
        chat = await self.core.store.bound_chat(key)
        if chat is None:
            async with self._creating:
                chat = await self.core.store.bound_chat(key)
                if chat is None:
                    chat = await self.core.chats.create(user, inc.chat_title or chat_title("other", platform=inc.platform))
                    await self.core.store.bind_chat(key, chat.id, inc.is_group)
        grant = None
        if chat.owner_id != user.id and inc.is_group:
            grant = GroupGrant(chat.id, "admin" if inc.is_admin else "member")
        return chat, grant

    def at_once(self, text: str) -> bool:
        """A command (/stop) an adapter answers at once, not queued behind the chat's running turn."""
        command = parse(text, self.bot_name)
        return command is not None and registry.at_once(getattr(command, "path", ""))

    def lang(self, inc: Incoming, user: User) -> str:
        return pick_lang(user.lang or inc.locale)

    async def handle(self, inc: Incoming) -> list[Reply]:
        """A message: a slash command, or a turn of the agent."""
        user = await self.user(inc)
        chat, grant = await self.chat(inc, user)
        lang = self.lang(inc, user)
        command = parse(inc.text, self.bot_name)
        if command is not None:
            return [self._from_result(await execute(command, self._context(inc, user, chat, grant, lang, False)), lang)]
        return await self._turn(inc, user, chat, grant, lang)

    async def press(
        self, inc: Incoming, action: str, open_thread: OpenThread | None = None, *, thread_hears_all: bool = False
    ) -> list[Reply]:
        """A button: approve or deny a card, or confirm or cancel a change.

        A confirmed fork opens in a thread or topic through `open_thread`, where the adapter has one;
        `thread_hears_all`: the bot reads every message there, not only those that mention it."""
        user = await self.user(inc)
        chat, grant = await self.chat(inc, user)
        lang = self.lang(inc, user)
        verb, _, arg = action.partition(":")
        if verb == CANCEL:
            return [Reply(LABELS[lang]["cancelled"], ephemeral=True)]
        if verb == CONFIRM:
            command = parse(arg, self.bot_name)
            if command is None:
                return [Reply(LABELS[lang]["cancelled"], ephemeral=True)]
            result = await execute(command, self._context(inc, user, chat, grant, lang, True))
            if isinstance(command, Fork) and result.kind == "answer" and not command.here and open_thread is not None:
                hears_all = thread_hears_all or not inc.is_group
                return [await self._into_thread(inc, chat, result, lang, open_thread, hears_all)]
            return [self._from_result(result, lang)]
        if verb in (APPROVE, DENY):
            if chat.owner_id != user.id:
                return [Reply(LABELS[lang]["owner_only"], "error", {"error": "forbidden"}, ephemeral=True)]
            try:
                decided = await self.core.turns.decide(chat.id, arg, verb, user.id)
            except KazmaError as err:
                return [self._from_result(error_result(err, lang), lang)]
            return [self._turn_reply(decided.reply, decided.gates, lang)]
        return []

    async def _into_thread(
        self, inc: Incoming, source: Chat, result: CommandResult, lang: str, open_thread: OpenThread, hears_all: bool
    ) -> Reply:
        """The fork, opened in a thread or topic of its own and bound to it; or said why not, with its web link."""
        fork = result.value
        if not isinstance(fork, ForkAnswer):
            return self._from_result(result, lang)
        data = result.data
        name = fork.title if len(fork.title) <= THREAD_NAME else fork.title[: THREAD_NAME - 1] + "…"
        how = "fork_intro" if hears_all else "fork_intro_mention"
        intro = t(how, lang, source=source.title, label=fork.label, link=fork.link)
        opened = await open_thread(name, intro)
        values = {"label": fork.label, "title": fork.title, "link": fork.link}
        if isinstance(opened, Opened):
            key = f"{inc.platform}:{opened.chat_key}"
            await self.core.store.bind_chat(key, fork.chat_id, inc.is_group, opened.place, opened.name)
            lives_in = {"platform": inc.platform, "place": opened.place, "name": opened.name}
            text = t(f"forked_into_{opened.place}", lang, name=opened.name, **values)
            return Reply(text, "answer", {**data, "lives_in": lives_in})
        log.info("%s: a fork stays on the web (%s)", inc.platform, opened)
        text = t("forked_no_thread", lang, why=t(f"no_thread_{opened}", lang, platform=inc.platform.title()), **values)
        return Reply(text, "answer", {**data, "lives_in": None, "no_thread": opened})

    def _context(self, inc: Incoming, user: User, chat: Chat, grant: GroupGrant | None, lang: str, confirmed: bool) -> CommandContext:
        target = ServiceTarget(self.rewind, user, inc.platform, chat.id, grant)
        return CommandContext(target, lang, self.core.settings.base_url, confirmed)

    async def _turn(self, inc: Incoming, user: User, chat: Chat, grant: GroupGrant | None, lang: str) -> list[Reply]:
        if not inc.text.strip():
            return []
        try:
            result = await self.core.turns.send(chat.id, inc.text)
        except KazmaError as err:
            return [self._from_result(error_result(err, lang), lang)]
        if result.status == "stopped":
            return [Reply(sentence("errors.turn_stopped", lang))]
        return [self._turn_reply(result.reply, result.gates, lang)]

    def _turn_reply(self, text: str, gates: list[dict[str, Any]], lang: str) -> Reply:
        if not gates:
            return Reply(text)
        card = gates[0]
        labels = LABELS[lang]
        return Reply(
            labels["ask"].format(tool=card["tool"], args=value_text(card["args"], lang)),
            "approval",
            {"gates": gates},
            buttons=[Button(labels["approve"], f"{APPROVE}:{card['card_id']}"), Button(labels["deny"], f"{DENY}:{card['card_id']}")],
        )

    @staticmethod
    def _from_result(result: CommandResult, lang: str) -> Reply:
        buttons: list[Button] = []
        if result.kind == "confirm":
            labels = LABELS[lang]
            buttons = [Button(labels["confirm"], f"{CONFIRM}:{result.confirm}"), Button(labels["cancel"], f"{CANCEL}:")]
        return Reply(result.text, result.kind, result.data, result.ephemeral, buttons)
