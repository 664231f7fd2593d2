"""Discord, on discord.py: slash commands, buttons and messages in; the gateway's replies out.

The slash commands are derived from the command registry; an interaction becomes the
text command it stands for ("/replay show 3f9a1c2e") and goes through `Gateway.handle`,
so every rule lives in one place. A button carries its action in its custom_id and goes
through `Gateway.press`. Plain messages are read in DMs, and in server channels where the
bot is mentioned (Discord sends the content of those without the privileged
message-content intent, so the bot does not ask for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import re
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Literal

import aiohttp
import discord
import yarl
from discord import app_commands

from bots.gateway import APPROVE, CONFIRM, Gateway, Incoming, NoThread, Opened, Reply, chat_title, split_text
from bots.streaming import DISCORD_EVERY, GrowingAnswer, LiveMessage
from commands import registry
from kazma_core.retry import Backoff, with_retries
from kazma_core.settings import Settings
from kazma_core.stores.message_links import MessageLink

log = logging.getLogger(__name__)

MESSAGE_LIMIT = 2000  # characters in one Discord message
CUSTOM_ID_LIMIT = 100  # characters in a component's custom_id
ACTION_PREFIX = "kazma:"
# Discord drops an interaction that is not answered within 3 s: past this, say "working on it" first.
ANSWER_WITHIN = 2.0
# discord.py reconnects by itself when the gateway drops the socket; this many drops in a row,
# without a session between them, end `run` so the supervisor logs it and backs off.
MAX_DROPS = 5
FAILURES_KEPT = 100  # the newest handler failures named in `failures`; every one is in the log
SEND_RETRIES = 3  # a message Discord answered with a 503, or not in time, is tried this many times more
SEND_AGAIN = Backoff(first=0.5, most=2.0)  # the pauses before those retries: 0.5, 1 and 2 s
SEND_FAILURES = (discord.DiscordServerError, asyncio.TimeoutError, aiohttp.ClientConnectionError)

CommandHandler = Callable[[discord.Interaction, str], Awaitable[None]]
MessageCommandHandler = Callable[[discord.Interaction, str, discord.Message], Awaitable[None]]


class DiscordUnavailable(ConnectionError):
    """Discord cannot be reached or refuses the bot; the supervisor logs this one line and retries."""


class GatewayUnstable(ConnectionError):
    """The Discord gateway keeps dropping the connection before a session starts."""


class ActionButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=re.escape(ACTION_PREFIX) + r"(?P<action>.+)"):
    """A reply's button; its custom_id is the gateway action, so a click still works after a restart."""

    def __init__(self, action: str, label: str = "", style: discord.ButtonStyle = discord.ButtonStyle.secondary) -> None:
        custom_id = ACTION_PREFIX + action
        if len(custom_id) > CUSTOM_ID_LIMIT:
            # Actions are short by construction (a verb and a card id, or a command with one step id).
            raise ValueError(f"button action {action[:40]!r}... is longer than Discord's {CUSTOM_ID_LIMIT}-character custom_id")
        super().__init__(discord.ui.Button(label=label or "…", style=style, custom_id=custom_id))
        self.action = action

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ActionButton:
        return cls(match["action"])

    async def callback(self, interaction: discord.Interaction) -> None:
        client = interaction.client
        if not isinstance(client, KazmaClient):
            return
        try:
            await client.adapter.on_press(interaction, self.action)
        except Exception:  # noqa: BLE001  (logged with its traceback by failed())
            # The top of the click dispatch: log it with the traceback, keep serving.
            client.adapter.failed(f"button {self.action}")


def _style(action: str) -> discord.ButtonStyle:
    verb = action.partition(":")[0]
    return {APPROVE: discord.ButtonStyle.success, CONFIRM: discord.ButtonStyle.danger}.get(verb, discord.ButtonStyle.secondary)


def _view(reply: Reply) -> discord.ui.View | None:
    if not reply.buttons:
        return None
    view = discord.ui.View(timeout=None)
    for button in reply.buttons:
        view.add_item(ActionButton(button.action, button.label, _style(button.action)))
    return view


def _pieces(reply: Reply) -> list[tuple[str, discord.ui.View | None]]:
    """The reply as Discord messages: cut under the length limit, its buttons on the last one."""
    texts = [t for t in split_text(reply.text, MESSAGE_LIMIT) if t.strip()] or ["…"]
    view = _view(reply)
    return [(text, view if i == len(texts) - 1 else None) for i, text in enumerate(texts)]


def _command(path: str, spec: dict[str, Any], handler: CommandHandler) -> app_commands.Command[Any, ..., None]:
    """One slash command from its registry definition; its options become the typed command's words."""
    options = spec["options"]

    async def callback(interaction: discord.Interaction, **values: str | None) -> None:
        words = tuple(value for o in options if (value := values.get(o["name"])))
        await handler(interaction, registry.leaf(path).typed(words))

    def parameter(option: dict[str, Any]) -> inspect.Parameter:
        if option["required"]:
            return inspect.Parameter(option["name"], inspect.Parameter.KEYWORD_ONLY,
                                     annotation=app_commands.Range[str, 1, option["max_length"]])
        # An optional word with fixed choices ("here"): Discord offers the choice, and it may be left out.
        return inspect.Parameter(option["name"], inspect.Parameter.KEYWORD_ONLY, default=None,
                                 annotation=Literal[tuple(option["choices"])] | None)

    # discord.py reads a command's options off its callback's signature.
    callback.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=discord.Interaction)]
        + [parameter(o) for o in options]
    )
    callback.__discord_app_commands_param_description__ = {o["name"]: o["description"] for o in options}  # type: ignore[attr-defined]
    return app_commands.Command(name=spec["name"], description=spec["description"], callback=callback)


def slash_commands(handler: CommandHandler) -> list[app_commands.Command[Any, ..., None] | app_commands.Group]:
    """The registry's commands offered on Discord, as discord.py app commands."""
    out: list[app_commands.Command[Any, ..., None] | app_commands.Group] = []
    for spec in registry.slash_definitions("discord"):
        if not spec["subcommands"]:
            out.append(_command(spec["name"], spec, handler))
            continue
        group = app_commands.Group(name=spec["name"], description=spec["description"])
        for sub in spec["subcommands"]:
            group.add_command(_command(f"{spec['name']} {sub['name']}", sub, handler))
        out.append(group)
    return out


def _message_command(action: registry.MessageAction, handler: MessageCommandHandler) -> app_commands.ContextMenu:
    async def callback(interaction: discord.Interaction, message: discord.Message) -> None:
        await handler(interaction, action.path, message)

    return app_commands.ContextMenu(name=action.name.en, callback=callback)


def message_commands(handler: MessageCommandHandler) -> list[app_commands.ContextMenu]:
    """The registry's message actions as Discord message commands (type 3: a message's Apps menu)."""
    return [_message_command(action, handler) for action in registry.MESSAGE_ACTIONS]


async def _patiently(send: Callable[[], Awaitable[Any]]) -> Any:
    """Post a message, trying again when Discord answers a 5xx discord.py does not retry itself
    (503) or does not answer in time: an answer is not dropped for a passing outage.
    (discord.py waits out rate limits and retries 500, 502, 504 and 524 on its own.)"""

    def note(err: BaseException, pause: float) -> None:
        log.warning("discord: a message did not go through (%s: %s); trying again in %.1f s", type(err).__name__, err, pause)

    return await with_retries(SEND_AGAIN, SEND_RETRIES + 1, send, again=lambda err: isinstance(err, SEND_FAILURES), note=note)


def _live(channel: discord.abc.Messageable) -> LiveMessage:
    """A growing answer in this channel: posted, then edited (discord.py keeps to the bucket's pace too)."""

    async def post(text: str) -> discord.Message:
        return await _patiently(functools.partial(channel.send, text))  # type: ignore[no-any-return]

    async def edit(message: discord.Message, text: str) -> None:
        await _patiently(functools.partial(message.edit, content=text))

    return LiveMessage(post, edit, MESSAGE_LIMIT, DISCORD_EVERY)


async def _send(channel: discord.abc.Messageable, pieces: list[tuple[str, discord.ui.View | None]]) -> list[tuple[str, str]]:
    """Post a reply's pieces in a channel: (id, text) of each message, to link them to the reply's row."""
    posted = []
    for text, view in pieces:
        extra: dict[str, Any] = {"view": view} if view else {}
        sent = await _patiently(functools.partial(channel.send, text, **extra))
        posted.append((str(sent.id), text))
    return posted


def _administers(permissions: discord.Permissions | None) -> bool:
    return permissions is not None and (permissions.administrator or permissions.manage_guild)


class KazmaClient(discord.Client):
    """One connection's client: a new one for every `run`, so no state outlives a failure."""

    def __init__(self, adapter: DiscordAdapter) -> None:
        # Kazma never joins voice: discord.py's warnings about missing voice libraries would mislead.
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
        super().__init__(
            intents=discord.Intents.default(),
            guild_ready_timeout=adapter.guild_ready_timeout,
            allowed_mentions=discord.AllowedMentions.none(),  # an answer never pings anyone
        )
        self.adapter = adapter
        self.tree = app_commands.CommandTree(self)
        self.tree.error(adapter.command_failed)
        for command in slash_commands(adapter.on_command):
            self.tree.add_command(command)
        for menu in message_commands(adapter.on_message_command):
            self.tree.add_command(menu)
        self.synced = False
        self.drops = 0
        self.gave_up = False
        self.serving: asyncio.Task[None] | None = None  # the login-and-connect task that `run` awaits

    async def setup_hook(self) -> None:
        self.add_dynamic_items(ActionButton)

    async def on_ready(self) -> None:
        self.drops = 0
        if not self.synced:
            await self.tree.sync()
            self.synced = True
            log.info("discord bot ready as %s; slash commands synced", self.user)

    async def on_resumed(self) -> None:
        self.drops = 0

    async def on_disconnect(self) -> None:
        self.drops += 1
        if self.drops >= MAX_DROPS and not self.gave_up and self.serving is not None:
            self.gave_up = True
            self.serving.cancel()

    async def on_message(self, message: discord.Message) -> None:
        await self.adapter.on_message(message)

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        self.adapter.failed(f"event {event_method}")


class DiscordAdapter:
    name = "discord"
    http_path: str | None = None
    exclusive = True  # one gateway session per bot

    def __init__(
        self, gateway: Gateway, token: str, *, api_base: str, gateway_url: str, guild_ready_timeout: float = 2.0
    ) -> None:
        self.gateway = gateway
        self.token = token
        self.api_base = api_base.rstrip("/")
        self.gateway_url = gateway_url
        self.guild_ready_timeout = guild_ready_timeout
        self.answer_within = ANSWER_WITHIN
        self.client: KazmaClient | None = None
        # Where handlers failed, newest last, each logged with its traceback too.
        self.failures: deque[str] = deque(maxlen=FAILURES_KEPT)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    # -- lifecycle ------------------------------------------------------------------------
    async def run(self) -> None:
        """Log in, connect and serve until cancelled; a rejected token or a lost platform raises."""
        # discord.py reads both from class attributes (process-wide); one Discord bot per process.
        discord.http.Route.BASE = self.api_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(self.gateway_url)
        client = self.client = KazmaClient(self)
        # reconnect=False: a lost connection raises here, and the supervisor retries with
        # backoff and one log line, instead of discord.py retrying for ever on its own.
        client.serving = asyncio.ensure_future(client.start(self.token, reconnect=False))
        marking = asyncio.ensure_future(self.gateway.follow_rewinds("discord", self.edit))
        try:
            await client.serving
        except discord.LoginFailure as err:
            raise DiscordUnavailable(f"Discord refused the token ({err}). Check KAZMA_DISCORD__TOKEN.") from None
        except (discord.HTTPException, aiohttp.ClientError, OSError) as err:
            raise DiscordUnavailable(
                f"Discord at {self.api_base} could not be used ({type(err).__name__}: {err}). "
                "Check the network, KAZMA_DISCORD__API_BASE and KAZMA_DISCORD__GATEWAY_URL."
            ) from None
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if client.gave_up and not (current is not None and current.cancelling()):
                raise GatewayUnstable(f"the Discord gateway dropped the connection {MAX_DROPS} times in a row") from None
            raise
        finally:
            marking.cancel()
            client.serving.cancel()
            await client.close()

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()

    async def http(self, request: Any) -> Any:
        raise NotImplementedError("the Discord bot takes no HTTP requests: it connects to the gateway")

    def failed(self, where: str) -> None:
        log.exception("discord %s failed", where)  # noqa: LOG004  (failed() is called in except blocks)
        self.failures.append(where)

    async def command_failed(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        name = interaction.command.qualified_name if interaction.command else "?"
        log.error("discord /%s failed", name, exc_info=error)
        self.failures.append(f"/{name}")

    # -- platform update -> Incoming ---------------------------------------------------------
    def _incoming(
        self, author: discord.abc.User, guild: discord.Guild | None, guild_id: int | None, channel: Any, channel_id: int,
        text: str, *, is_admin: bool, locale: str | None,
    ) -> Incoming:
        if guild_id is None:
            title = chat_title("discord_dm", name=author.display_name)
        else:
            server = guild.name if guild else chat_title("discord_server")
            named = getattr(channel, "name", None) or chat_title("discord_channel_unnamed")
            title = chat_title("discord_channel", server=server, channel=named)
        return Incoming(
            platform="discord", place=_place(channel_id), user_id=str(author.id), user_name=author.display_name,
            chat_key=f"{guild_id or 'dm'}:{channel_id}", chat_title=title, text=text,
            is_group=guild_id is not None, is_admin=guild_id is not None and is_admin, locale=locale,
        )

    def _from_interaction(self, interaction: discord.Interaction, text: str = "") -> Incoming:
        return self._incoming(
            interaction.user, interaction.guild, interaction.guild_id, interaction.channel, interaction.channel_id or 0,
            text, is_admin=_administers(interaction.permissions), locale=str(interaction.locale),
        )

    def _from_message(self, message: discord.Message) -> Incoming | None:
        """A message for the bot: any DM, or a server message that mentions it (mention removed)."""
        me = self.client.user if self.client else None
        if me is None or message.author.bot:
            return None
        mentioned = next((user for user in message.mentions if user.id == me.id), None)
        if message.guild is not None and mentioned is None:
            return None
        # As a person reads it: "<@id>" and "<#id>" become "@name" and "#name", so no
        # Discord id reaches the agent through the text.
        text = message.clean_content
        if mentioned is not None:
            shown = message.guild.get_member(me.id) if message.guild else None
            text = text.replace(f"@{(shown or mentioned).display_name}", " ").strip()
        perms = message.author.guild_permissions if isinstance(message.author, discord.Member) else None
        return self._incoming(
            message.author, message.guild, message.guild.id if message.guild else None, message.channel,
            message.channel.id, text, is_admin=_administers(perms), locale=None,
        )

    # -- handlers ---------------------------------------------------------------------------
    # discord.py runs each event in a task of its own; a lock per chat keeps one chat's
    # messages and commands in the order they came, while other chats go on meanwhile.
    def _lock(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def _in_order(self, key: str, work: Awaitable[list[Reply]]) -> list[Reply]:
        async with self._lock(key):
            return await work

    async def on_message(self, message: discord.Message) -> None:
        incoming = self._from_message(message)
        if incoming is None:
            return
        incoming = replace(incoming, message_id=str(message.id))
        async with self._lock(incoming.chat_key):
            growing = GrowingAnswer(_live(message.channel))
            for reply in await self.gateway.handle(incoming, growing):
                pieces = _pieces(reply)
                posted = []
                if growing.posted and reply.kind == "answer" and not reply.buttons:
                    # The answer was shown as it grew: its message takes the final text, the rest follows.
                    await growing.finish(pieces[0][0])
                    posted.append((str(growing.handle.id), pieces[0][0]))
                    pieces, growing = pieces[1:], GrowingAnswer(growing.live)
                posted += await _send(message.channel, pieces)
                await self.gateway.posted(incoming.place, reply, posted)

    async def on_message_command(self, interaction: discord.Interaction, path: str, message: discord.Message) -> None:
        """"Fork from here" or "Rewind to here" on a message: the command on that message's step."""
        incoming = self._from_interaction(interaction)
        work = self.gateway.on_message_command(incoming, path, str(message.id))
        await self._answer(interaction, self._in_order(incoming.chat_key, work), click=False)

    async def edit(self, link: MessageLink, text: str) -> bool:
        """Say something else in a message the bot posted (a rewound answer, or its text put back)."""
        if self.client is None:
            return False
        channel = self.client.get_partial_messageable(int(link.place.partition(":")[2]))
        try:
            await channel.get_partial_message(int(link.message)).edit(content=text[:MESSAGE_LIMIT])
        except (discord.NotFound, discord.Forbidden) as err:
            log.info("discord: a rewound answer was not edited (%s)", err)
            return False
        return True

    async def on_command(self, interaction: discord.Interaction, text: str) -> None:
        incoming = self._from_interaction(interaction, text)
        await self._answer(interaction, self._in_order(incoming.chat_key, self.gateway.handle(incoming)), click=False)

    async def on_press(self, interaction: discord.Interaction, action: str) -> None:
        incoming = self._from_interaction(interaction)
        opener = functools.partial(self._open_thread, interaction)
        await self._answer(interaction, self._in_order(incoming.chat_key, self.gateway.press(incoming, action, opener)), click=True)

    async def _open_thread(self, interaction: discord.Interaction, name: str, intro: str) -> Opened | NoThread:
        """A public thread for a fork, started from the bot's message that says what it is forked from."""
        if interaction.guild_id is None:
            return "dm"
        channel = interaction.channel
        if isinstance(channel, discord.Thread):
            channel = channel.parent  # a thread holds no threads: the fork's opens in the channel beside it
        if not isinstance(channel, discord.TextChannel):
            log.info("discord: no thread for a fork in a %s", type(channel).__name__)
            return "failed"
        if not interaction.app_permissions.create_public_threads:
            return "no_permission"
        try:
            starter = await channel.send(intro)
        except discord.Forbidden:
            return "no_permission"
        except (discord.HTTPException, aiohttp.ClientError, OSError) as err:
            log.warning("discord: no thread for a fork (%s: %s)", type(err).__name__, err)
            return "failed"
        try:
            thread = await starter.create_thread(name=name)
        except (discord.HTTPException, aiohttp.ClientError, OSError) as err:
            log.warning("discord: no thread for a fork (%s: %s)", type(err).__name__, err)
            # Its first message would say "talk here" where nothing continues the fork: it goes.
            with contextlib.suppress(discord.HTTPException, aiohttp.ClientError, OSError):
                await starter.delete()
            return "no_permission" if isinstance(err, discord.Forbidden) else "failed"
        return Opened(f"{interaction.guild_id}:{thread.id}", thread.name, "thread")

    async def _answer(self, interaction: discord.Interaction, work: Awaitable[list[Reply]], *, click: bool) -> None:
        task = asyncio.ensure_future(work)
        try:
            done, _ = await asyncio.wait({task}, timeout=self.answer_within)
            if not done:
                # After a deferral the first follow-up takes the deferred message's place (and its
                # ephemeral flag, which most command answers have).
                if click:
                    await interaction.response.defer()
                else:
                    await interaction.response.defer(ephemeral=True, thinking=True)
            replies = await task
        finally:
            task.cancel()
        if click and replies and replies[0].kind != "error":
            # Answered: its buttons go, so nobody confirms or approves twice. A refusal keeps
            # them (the approval is still the owner's to answer).
            if interaction.response.is_done():
                await interaction.edit_original_response(view=None)
            else:
                await interaction.response.edit_message(view=None)
        for reply in replies:
            if reply.row_id is not None and self.client is not None and interaction.channel_id is not None:
                # A turn's answer (after an approval): a message of the channel, which the bot may edit at any
                # time, where a follow-up is edited only through the interaction's token, for 15 minutes; so a
                # restore marks it "rewound" and an undo puts its text back, however much later.
                channel = self.client.get_partial_messageable(interaction.channel_id)
                await self.gateway.posted(_place(interaction.channel_id), reply, await _send(channel, _pieces(reply)))
                continue
            for text, view in _pieces(reply):
                extra: dict[str, Any] = {"view": view} if view else {}
                if interaction.response.is_done():
                    await _patiently(functools.partial(interaction.followup.send, text, ephemeral=reply.ephemeral, **extra))
                else:
                    await interaction.response.send_message(text, ephemeral=reply.ephemeral, **extra)
        if not interaction.response.is_done():
            await interaction.response.defer()


def _place(channel_id: int) -> str:
    """Where a Discord message is found: its channel (or thread)."""
    return f"discord:{channel_id}"


def build(gateway: Gateway, settings: Settings) -> DiscordAdapter | None:
    """The Discord bot, when a token is set (KAZMA_DISCORD__TOKEN)."""
    if not settings.discord.configured:
        return None
    token = settings.discord.token.get_secret_value().strip()
    return DiscordAdapter(gateway, token, api_base=settings.discord.api_base, gateway_url=settings.discord.gateway_url)
