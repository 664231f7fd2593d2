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
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal

from bots.streaming import GrowingAnswer, follow_turn
from commands import registry
from commands.answers import CommandResult, ForkAnswer, RestoreQuestion
from commands.executor import error_result, execute
from commands.i18n import pick_lang, t
from commands.parser import BUILDERS, Command, Fork, ReplayList, Usage, parse
from commands.render import approval_question
from commands.service_target import ServiceTarget
from commands.target import CommandContext, message_address
from kazma_core.agent.activity import stopped_words
from kazma_core.agent.runtime import TurnResult
from kazma_core.catalogue import sentence
from kazma_core.catalogue.chat_apps import CHAT_APPS
from kazma_core.core import Core
from kazma_core.errors import KazmaError
from kazma_core.stores.message_links import MessageLink, MessageLinks
from kazma_core.stores.types import Chat, User
from kazma_core.users import platform_identity
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
    # Where the platform numbers its messages ("telegram:<chat>", "discord:<channel>", "slack:<team>:<channel>"),
    # this message's id there, and the id of the message it replies to: the links to transcript rows
    # (kazma_core/stores/message_links.py) are kept by these, never in the agent's state.
    place: str = ""
    message_id: str = ""
    replied: str = ""

    @property
    def identity(self) -> str:
        """The key `kazma users link` uses: telegram:<id>, discord:<id>, slack:<team>:<id>."""
        return platform_identity(self.platform, self.user_id, self.team)


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
    row_id: int | None = None  # the transcript row this reply shows (an answer), linked once it is posted
    chat_id: str = ""  # the Kazma chat of that row
    lang: str = ""  # the language it is said in


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
TURN_ROWS = 50  # the newest transcript rows read to find a turn's own (a turn shows a few)


def on_message_step(command: Command | Usage, text: str) -> tuple[str, bool] | None:
    """A command sent in reply to a message that acts on that message's step: (its path, "here"),
    or None when the command needs no step or names one itself. /fork, /fork here, /replay (a restore,
    asked first), /replay restore and /replay show, each without a step."""
    if isinstance(command, Fork) and command.step.lower() == "here":
        return "fork", True
    if isinstance(command, ReplayList) and len(text.split()) == 1:
        return "replay restore", False
    if isinstance(command, Usage) and command.reason == "missing_argument" and command.command in MESSAGE_STEP:
        return command.command, False
    return None


MESSAGE_STEP = ("fork", "replay restore", "replay show")
REWINDS = ("restored", "undone")  # the reasons of a chat's `reload` that change which answers it shows

# The adapters' words, by language (one catalogue for every surface: kazma_core.catalogue).
LABELS = {lang: {key: text.get(lang) for key, text in CHAT_APPS.items()} for lang in ("en", "ar")}


async def alongside(main: Awaitable[None], side: Coroutine[Any, Any, None]) -> None:
    """Await `main` with `side` running beside it (the marking of rewound answers): `side` ends with it."""
    task = asyncio.ensure_future(side)
    try:
        await main
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


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
        found = await self.core.store.users.user_for_identity(inc.identity)
        if found is not None:
            return found
        async with self._creating:  # two first messages at once must not make two users
            found = await self.core.store.users.user_for_identity(inc.identity)
            if found is not None:
                return found
            user = await self.core.store.users.user_by_name(inc.identity) or await self.core.store.users.add_user(inc.identity)
            await self.core.store.users.link_identity(inc.identity, user.id)
            return user

    async def chat(self, inc: Incoming, user: User) -> tuple[Chat, GroupGrant | None]:
        key = f"{inc.platform}:{inc.chat_key}"
        chat = await self.core.store.places.bound_chat(key)
        if chat is None:
            async with self._creating:
                chat = await self.core.store.places.bound_chat(key)
                if chat is None:
                    chat = await self.core.chats.create(user, inc.chat_title or chat_title("other", platform=inc.platform))
                    await self.core.store.places.bind_chat(key, chat.id, inc.is_group)
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

    async def handle(self, inc: Incoming, growing: GrowingAnswer | None = None) -> list[Reply]:
        """A message: a slash command, or a turn of the agent. With `growing`, the turn's answer is
        shown there as it is said; the adapter writes its final text there too (`GrowingAnswer.finish`)."""
        user = await self.user(inc)
        chat, grant = await self.chat(inc, user)
        lang = self.lang(inc, user)
        command = parse(inc.text, self.bot_name)
        if command is not None:
            on_step = on_message_step(command, inc.text) if inc.replied else None
            if on_step is not None:
                path, here = on_step
                return await self._on_message(inc, user, chat, grant, lang, path, inc.replied, here)
            return [self._from_result(await execute(command, self._context(inc, user, chat, grant, lang, False)), lang)]
        return await self._turn(inc, user, chat, grant, lang, growing)

    async def on_message_command(self, inc: Incoming, path: str, target: str) -> list[Reply]:
        """A command run on a message of the chat (a Discord message command, a Slack message shortcut):
        on the step of that message, asked first as when typed with the step."""
        user = await self.user(inc)
        chat, grant = await self.chat(inc, user)
        return await self._on_message(inc, user, chat, grant, self.lang(inc, user), path, target, False)

    async def _on_message(
        self, inc: Incoming, user: User, chat: Chat, grant: GroupGrant | None, lang: str, path: str, target: str, here: bool
    ) -> list[Reply]:
        link = await self.links.find(inc.place, target) if inc.place and target else None
        # A message Kazma did not see, or one of another chat (another thread's fork): nothing to act on.
        if link is None or link.chat_id != chat.id:
            return [Reply(LABELS[lang]["message_unknown"], "error", {"error": "not_found"}, ephemeral=True)]
        # The command on that message's point (after an answer: the end of its turn; before a person's
        # message: the end of the turn before; before the first message: a fork is an empty chat).
        at = message_address(link.row_id)
        command = BUILDERS[path](at, "here") if path == "fork" and here else BUILDERS[path](at)
        return [self._from_result(await execute(command, self._context(inc, user, chat, grant, lang, False)), lang)]

    @property
    def links(self) -> MessageLinks:
        return self.core.chats.links

    async def posted(self, place: str, reply: Reply, messages: list[tuple[str, str]]) -> None:
        """The platform messages (id, text) an answer was posted as: each is linked to the answer's row."""
        if reply.row_id is None or not reply.chat_id or not place:
            return
        for message_id, text in messages:
            await self.links.record(place, message_id, reply.chat_id, reply.row_id, by_bot=True, text=text, lang=reply.lang)

    async def rewinds(self, chat_id: str, platform: str) -> list[tuple[MessageLink, str, bool]]:
        """The bot's messages of one platform out of step with the chat after a restore or an undo:
        (link, the text they should now say, rewound)."""
        taken, back = await self.links.out_of_step(chat_id)
        chat = await self.core.store.chats.get_chat(chat_id)
        owner = await self.core.store.users.user_by_id(chat.owner_id) if chat else None
        lang = pick_lang(owner.lang if owner else None)
        mine = f"{platform}:"
        out = [(link, LABELS[pick_lang(link.lang or lang)]["rewound_message"], True) for link in taken if link.place.startswith(mine)]
        out += [(link, link.text, False) for link in back if link.place.startswith(mine)]
        return out

    async def follow_rewinds(self, platform: str, edit: Callable[[MessageLink, str], Awaitable[bool]]) -> None:
        """For as long as the bot runs: after a restore or an undo of any chat, made on any surface,
        mark (or unmark) that chat's messages on this platform."""
        async with self.core.events.every_chat() as events:
            while True:
                chat_id, event = await events.get()
                if event.type == "reload" and event.data.get("reason") in REWINDS:
                    try:
                        await self.mark_rewinds(chat_id, platform, edit)
                    except Exception:
                        # One chat's failed edits must not stop the marking of the others.
                        log.exception("%s: the messages a restore took back could not be marked", platform)

    async def mark_rewinds(self, chat_id: str, platform: str, edit: Callable[[MessageLink, str], Awaitable[bool]]) -> int:
        """Edit the bot's messages a restore took back to say so, and those an undo put back to their text;
        a message the platform would not edit (too old, deleted) is left as it is. Returns the edits made."""
        done = 0
        for link, text, rewound in await self.rewinds(chat_id, platform):
            # Noted first: a process stopped between the two leaves the link saying "rewound", so the
            # undo still puts the text back (an edit to the text already shown changes nothing).
            await self.links.set_rewound(link, rewound)
            if await edit(link, text):
                done += 1
        return done

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
            _, answer = await self._turn_rows(chat.id, decided.turn_index)
            return [self._turn_reply(decided.reply, decided.gates, lang, chat.id, answer)]
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
            await self.core.store.places.bind_chat(key, fork.chat_id, inc.is_group, opened.place, opened.name)
            lives_in = {"platform": inc.platform, "place": opened.place, "name": opened.name}
            text = t(f"forked_into_{opened.place}", lang, name=opened.name, **values)
            return Reply(text, "answer", {**data, "lives_in": lives_in})
        log.info("%s: a fork stays on the web (%s)", inc.platform, opened)
        text = t("forked_no_thread", lang, why=t(f"no_thread_{opened}", lang, platform=inc.platform.title()), **values)
        return Reply(text, "answer", {**data, "lives_in": None, "no_thread": opened})

    def _context(self, inc: Incoming, user: User, chat: Chat, grant: GroupGrant | None, lang: str, confirmed: bool) -> CommandContext:
        target = ServiceTarget(self.rewind, user, inc.platform, chat.id, grant)
        return CommandContext(target, lang, self.core.settings.base_url, confirmed)

    async def _turn(
        self, inc: Incoming, user: User, chat: Chat, grant: GroupGrant | None, lang: str, growing: GrowingAnswer | None = None
    ) -> list[Reply]:
        if not inc.text.strip():
            return []
        try:
            if growing is None:
                result = await self.core.turns.send(chat.id, inc.text)
            else:
                result = await self._streamed_turn(chat.id, inc.text, growing)
        except KazmaError as err:
            return [self._from_result(error_result(err, lang), lang)]
        asked, answer = await self._turn_rows(chat.id, result.turn_index)
        if asked is not None and inc.place and inc.message_id:
            await self.links.record(inc.place, inc.message_id, chat.id, asked, by_bot=False)
        if result.status == "stopped":
            said = stopped_words(result.reply)
            stopped = sentence("errors.turn_stopped", lang)
            return [Reply(f"{said}\n\n({stopped})" if said else stopped)]
        return [self._turn_reply(result.reply, result.gates, lang, chat.id, answer)]

    async def _turn_rows(self, chat_id: str, turn_index: int) -> tuple[int | None, int | None]:
        """The transcript rows of a turn: the person's message, and the answer (None where there is none yet)."""
        rows = [r for r in await self.core.store.transcript.transcript(chat_id, limit=TURN_ROWS) if r.turn_index == turn_index]
        asked = next((r.id for r in rows if r.role == "user"), None)
        answer = next((r.id for r in reversed(rows) if r.role == "assistant"), None)
        return asked, answer

    async def _streamed_turn(self, chat_id: str, text: str, growing: GrowingAnswer) -> TurnResult:
        """A turn whose answer's pieces are shown as they come, read off the chat's events."""
        started = await self.core.turns.begin(chat_id, text)
        async with self.core.events.subscribe(chat_id) as events:
            follow = asyncio.create_task(follow_turn(events, started.turn_index, growing))
            try:
                return await self.core.turns.finish(started)
            finally:
                follow.cancel()
                await asyncio.gather(follow, return_exceptions=True)

    def _turn_reply(
        self, text: str, gates: list[dict[str, Any]], lang: str, chat_id: str = "", row_id: int | None = None
    ) -> Reply:
        if not gates:
            return Reply(text, chat_id=chat_id, row_id=row_id, lang=lang)
        card = gates[0]
        labels = LABELS[lang]
        asked = approval_question(card["tool"], card["args"], lang)  # the web card's words
        return Reply(
            asked or labels["ask"].format(tool=card["tool"], args=value_text(card["args"], lang)),
            "approval",
            {"gates": gates},
            buttons=[Button(labels["approve"], f"{APPROVE}:{card['card_id']}"), Button(labels["deny"], f"{DENY}:{card['card_id']}")],
        )

    @staticmethod
    def _from_result(result: CommandResult, lang: str) -> Reply:
        buttons: list[Button] = []
        if result.kind == "confirm":
            labels = LABELS[lang]
            choices = result.value.choices if isinstance(result.value, RestoreQuestion) else []
            # A restore whose files would change too: one button for each of what it can take back.
            yes = [Button(labels[f"restore_{c.what}"], f"{CONFIRM}:{c.confirm}") for c in choices] or [
                Button(labels["confirm"], f"{CONFIRM}:{result.confirm}")
            ]
            buttons = [*yes, Button(labels["cancel"], f"{CANCEL}:")]
        return Reply(result.text, result.kind, result.data, result.ephemeral, buttons)
