"""Slack on slack-bolt: slash commands, DMs, mentions and buttons in; Block Kit out.

HTTP mode serves `/slack/events` through the web server (bolt checks each request's
signature) and Socket Mode, when an app token is set, keeps a websocket open. Either
way the rules are the gateway's: this module maps Slack payloads to `Incoming`, and
`Reply`s to Block Kit. Slack ids stop here: mentions in a message are turned into names
before the text reaches the agent.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import time
import weakref
from dataclasses import dataclass, replace
from typing import Any

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
    async_default_handlers,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient
from starlette.requests import Request
from starlette.responses import Response

from bots.gateway import APPROVE, CONFIRM, Button, Gateway, Incoming, NoThread, Opened, Reply, alongside, chat_title, split_text
from bots.streaming import SLACK_EVERY, GrowingAnswer, LiveMessage
from commands import registry
from kazma_core.errors import KazmaError
from kazma_core.settings import Settings, SlackSettings
from kazma_core.stores.message_links import MessageLink

log = logging.getLogger(__name__)

HTTP_PATH = "/slack/events"
SECTION_LIMIT = 3000  # a section's mrkdwn text
SECTIONS_PER_MESSAGE = 10  # well under Slack's 50 blocks and 40,000 characters
VALUE_LIMIT = 2000  # a button's value
LABEL_LIMIT = 75  # a button's text
ACTION_PREFIX = "kazma:"
PROFILE_SECONDS = 300.0
PROFILES_KEPT = 1000
RATE_LIMIT_RETRIES = 5
SERVER_ERROR_RETRIES = 3
SOCKET_CONNECT_SECONDS = 30.0
SOCKET_CHECK_SECONDS = 5.0
SOCKET_CHECKS_DOWN = 3  # the SDK reconnects by itself; this long down, the supervisor takes over

_MENTION = re.compile(r"<([@#!])([^>|]+)(?:\|([^>]*))?>")
_LINK_REF = re.compile(r"<((?:https?|mailto):[^>|]+)(?:\|([^>]*))?>")
_MD_LINK = re.compile(r"\[([^\]\n|]+)\]\((https?://[^\s)|]+)\)")
_MD_BOLD = re.compile(r"\*\*(.+?)\*\*")
_MD_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.M)


class AnyServerErrorRetryHandler(AsyncServerErrorRetryHandler):
    """slack-sdk's server-error retry, for every 5xx (its own covers 500 and 503 only; a proxy answers 502 and 504)."""

    async def _can_retry_async(
        self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None, error: Exception | None = None,
    ) -> bool:
        return response is not None and response.status_code >= 500


def retry_handlers() -> list[AsyncRetryHandler]:
    """What slack-sdk tries again, for the Web API and response URLs alike: a lost connection,
    a rate limit (after Retry-After), and a 5xx (whatever its body)."""
    return [
        *async_default_handlers(),
        AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        AnyServerErrorRetryHandler(max_retry_count=SERVER_ERROR_RETRIES),
    ]


class SlackUnavailable(KazmaError):
    code = "slack_unavailable"
    status = 503


@dataclass(frozen=True)
class Profile:
    name: str
    is_admin: bool
    locale: str | None


def mrkdwn(text: str) -> str:
    """Markdown as Slack's mrkdwn: &, < and > escaped, bold, links and headings converted (not in code)."""
    parts = text.split("```")
    for i, raw in enumerate(parts):
        part = raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        if i % 2 == 0:
            part = _MD_LINK.sub(r"<\2|\1>", _MD_BOLD.sub(r"*\1*", _MD_HEADING.sub(r"*\1*", part)))
        parts[i] = part
    return "```".join(parts)


def _button(index: int, button: Button) -> dict[str, Any]:
    if len(button.action) > VALUE_LIMIT:
        raise ValueError(f"a Slack button's value holds {VALUE_LIMIT} characters, not {len(button.action)}")
    element: dict[str, Any] = {
        "type": "button", "action_id": f"{ACTION_PREFIX}{index}", "value": button.action,
        "text": {"type": "plain_text", "text": button.label[:LABEL_LIMIT]},
    }
    if button.action.partition(":")[0] in (APPROVE, CONFIRM):
        element["style"] = "primary"
    return element


def messages(reply: Reply) -> list[dict[str, Any]]:
    """A reply as Slack messages (text and blocks): sections of at most 3000 characters, buttons last."""
    pieces = [p for p in split_text(mrkdwn(reply.text), SECTION_LIMIT) if p.strip()] or ["…"]
    out: list[dict[str, Any]] = []
    for start in range(0, len(pieces), SECTIONS_PER_MESSAGE):
        group = pieces[start:start + SECTIONS_PER_MESSAGE]
        blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": p}} for p in group]
        out.append({"text": group[0], "blocks": blocks})
    if reply.buttons:
        out[-1]["blocks"].append({"type": "actions", "elements": [_button(i, b) for i, b in enumerate(reply.buttons)]})
    return out


def _is_dm(channel_id: str, channel_name: str | None) -> bool:
    return channel_name == "directmessage" or channel_id.startswith("D")


def _key(channel: str, thread_ts: str | None) -> str:
    """The Slack chat a message belongs to: a channel or DM, or a thread in one."""
    return f"{channel}:{thread_ts}" if thread_ts else channel


def _place(team: str, channel: str) -> str:
    """Where a Slack message is found: its workspace's channel (a message's ts is unique there)."""
    return f"slack:{team}:{channel}"


def _thread_of(message: dict[str, Any]) -> str | None:
    """The thread a message is in; a thread's first message is in the channel itself."""
    thread_ts = message.get("thread_ts")
    return thread_ts if thread_ts and thread_ts != message.get("ts") else None


class SlackAdapter:
    name = "slack"

    def __init__(self, gateway: Gateway, settings: SlackSettings) -> None:
        self.gateway = gateway
        self.api_url = settings.api_url
        self.app_token = settings.app_token.get_secret_value()
        self.signing_secret = settings.signing_secret.get_secret_value()
        self.http_path: str | None = None if self.app_token else HTTP_PATH
        self.exclusive = bool(self.app_token)  # Socket Mode: one socket; HTTP mode: any replica answers
        self.client = AsyncWebClient(token=settings.bot_token.get_secret_value(), base_url=settings.api_url,
                                     retry_handlers=retry_handlers())
        self.app = AsyncApp(signing_secret=self.signing_secret, client=self.client, logger=log)
        self._requests = AsyncSlackRequestHandler(self.app)
        self._socket: AsyncSocketModeHandler | None = None
        self._profiles: dict[tuple[str, str], tuple[float, Profile]] = {}
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        for spec in registry.slash_definitions("slack"):  # every command the registry offers on Slack
            self.app.command(f"/{spec['name']}")(self._on_command)
        self.app.event("message")(self._on_message)
        self.app.event("app_mention")(self._on_mention)
        self.app.action(re.compile(f"^{ACTION_PREFIX}"))(self._on_button)
        for message_action in registry.MESSAGE_ACTIONS:  # declared in `kazma slack-manifest` too
            self.app.shortcut(message_action.key)(self._on_shortcut)
        self.app.error(self._on_error)

    # -- lifecycle -------------------------------------------------------------------------
    async def run(self) -> None:
        if not self.app_token and not self.signing_secret:
            raise SlackUnavailable(message_id="slack_no_mode")
        await self._call("auth.test", "KAZMA_SLACK__BOT_TOKEN")
        if self.app_token:
            await self._connect_socket()
            await alongside(self._watch(), self.gateway.follow_rewinds("slack", self.edit))
        else:
            # HTTP mode: the web server brings the requests; here, only the marking of rewound answers.
            await self.gateway.follow_rewinds("slack", self.edit)

    async def _connect_socket(self) -> None:
        self._socket = AsyncSocketModeHandler(self.app, self.app_token, logger=log)
        # The SDK retries a failing connection for ever; ask for the address ourselves so a
        # rejected app token raises, and bound the connection so an unreachable Slack does.
        self._socket.client.wss_uri = await self._call("apps.connections.open", "KAZMA_SLACK__APP_TOKEN")
        try:
            connecting = self._socket.connect_async()  # type: ignore[no-untyped-call]  # unannotated in slack_sdk
            await asyncio.wait_for(connecting, SOCKET_CONNECT_SECONDS)
        except TimeoutError as err:
            raise SlackUnavailable(message_id="slack_socket_slow", seconds=f"{SOCKET_CONNECT_SECONDS:.0f}") from err

    async def _watch(self) -> None:
        """Serve until cancelled, or raise once the Socket Mode connection stays down."""
        down = 0
        while self._socket is not None:
            await asyncio.sleep(SOCKET_CHECK_SECONDS)
            down = 0 if await self._socket.client.is_connected() else down + 1
            if down >= SOCKET_CHECKS_DOWN:
                raise SlackUnavailable(message_id="slack_socket_lost")

    async def _call(self, method: str, setting: str) -> Any:
        """auth.test or apps.connections.open, with a failure told as what to fix."""
        try:
            if method == "auth.test":
                return await self.client.auth_test()
            return (await self.client.apps_connections_open(app_token=self.app_token))["url"]
        except SlackApiError as err:
            raise SlackUnavailable(message_id="slack_refused", method=method, error=err.response.get("error"), setting=setting) from err
        except (aiohttp.ClientError, OSError) as err:
            raise SlackUnavailable(message_id="slack_unreachable", url=self.api_url, error=f"{type(err).__name__}: {err}") from err

    async def close(self) -> None:
        if self._socket is not None:
            socket, self._socket = self._socket, None
            await socket.close_async()  # type: ignore[no-untyped-call]  # unannotated in slack_sdk

    async def http(self, request: Request) -> Response:
        if not self.signing_secret:
            # Without a secret every signature would check out: take nothing rather than anything.
            return Response("Slack's signing secret is not set on this server.", status_code=503)
        return await self._requests.handle(request)

    # -- who and where ---------------------------------------------------------------------
    async def _profile(self, team: str, user_id: str) -> Profile | None:
        """What users.info says of a person, kept a few minutes; None when Slack will not say."""
        now = time.monotonic()
        kept = self._profiles.get((team, user_id))
        if kept is not None and kept[0] > now:
            return kept[1]
        try:
            info = (await self.client.users_info(user=user_id, include_locale=True))["user"]
        except SlackApiError as err:
            log.warning("Slack users.info failed (%s): answering without the person's locale or admin role", err.response.get("error"))
            return None
        except (aiohttp.ClientError, OSError) as err:
            log.warning("Slack users.info failed (%s: %s): answering without the person's locale or admin role", type(err).__name__, err)
            return None
        profile_info = info.get("profile") or {}
        profile = Profile(
            name=profile_info.get("display_name") or profile_info.get("real_name") or info.get("name") or "someone",
            is_admin=bool(info.get("is_admin") or info.get("is_owner")),
            locale=info.get("locale"),
        )
        if len(self._profiles) >= PROFILES_KEPT:
            self._profiles = {k: v for k, v in self._profiles.items() if v[0] > now}
        self._profiles[(team, user_id)] = (now + PROFILE_SECONDS, profile)
        return profile

    async def _incoming(
        self, team: str, user_id: str, user_name: str, channel: str, thread_ts: str | None,
        is_group: bool, title: str, text: str = "", deciding: bool = False,
    ) -> Incoming:
        """An `Incoming`; Slack is asked for the person's role and locale only when they matter."""
        inc = Incoming(
            "slack", user_id, user_name, _key(channel, thread_ts), title,
            text=text, is_group=is_group, team=team, place=_place(team, channel),
        )
        known = await self.gateway.core.store.users.user_for_identity(inc.identity)
        needs_admin = is_group and deciding
        if not needs_admin and known is not None and known.lang:
            return inc
        profile = await self._profile(team, user_id)
        if profile is None:
            return inc
        return replace(inc, user_name=user_name or profile.name, is_admin=needs_admin and profile.is_admin, locale=profile.locale)

    async def _plain(self, team: str, text: str, bot_user_id: str | None) -> str:
        """A message's text with Slack's markup read: no ids left, the bot's own mention dropped."""
        if bot_user_id:
            text = re.sub(f"<@{re.escape(bot_user_id)}(?:\\|[^>]*)?>", "", text)
        text = _LINK_REF.sub(lambda m: m.group(2) or m.group(1), text)
        names: dict[str, str] = {}
        for kind, ident, label in set(_MENTION.findall(text)):
            if kind == "@" and not label:
                profile = await self._profile(team, ident)
                names[ident] = profile.name if profile else "someone"

        def name(m: re.Match[str]) -> str:
            kind, ident, label = m.group(1), m.group(2), m.group(3)
            if kind == "@":
                return "@" + (label or names.get(ident, "someone"))
            if kind == "#":
                return "#" + (label or "channel")
            return "@" + (label or ident.split("^")[0]).lstrip("@")  # <!here>, <!subteam^S1|@team>

        text = _MENTION.sub(name, text)
        return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&").strip()

    # -- Slack in ----------------------------------------------------------------------------
    async def _on_command(self, ack: Any, command: dict[str, Any], respond: Any) -> None:
        await ack()
        channel, channel_name = command["channel_id"], command.get("channel_name")
        is_group = not _is_dm(channel, channel_name)
        title = (
            chat_title("slack_dm") if not is_group
            else chat_title("slack_channel_named", channel=channel_name) if channel_name else chat_title("slack_channel")
        )
        text = f"{command['command']} {command.get('text', '')}".strip()
        # Slack names no thread in a slash command: it is the channel's (in a thread, mention Kazma instead).
        async with self._lock(channel):
            inc = await self._incoming(
                command["team_id"], command["user_id"], command.get("user_name", ""), channel, None, is_group, title,
                text=text, deciding=True,
            )
            for reply in await self.gateway.handle(inc):
                for message in messages(reply):
                    await self._respond(respond, message, response_type="ephemeral" if reply.ephemeral else "in_channel")

    async def _on_message(self, event: dict[str, Any], body: dict[str, Any], context: Any) -> None:
        if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id"):
            return  # in channels, Kazma answers mentions only; edits and bots' messages are not questions
        await self._converse(event, body, context, chat_title("slack_dm"))

    async def _on_mention(self, event: dict[str, Any], body: dict[str, Any], context: Any) -> None:
        if event.get("bot_id"):
            return
        await self._converse(event, body, context, chat_title("slack_thread" if event.get("thread_ts") else "slack_channel"))

    async def _converse(self, event: dict[str, Any], body: dict[str, Any], context: Any, title: str) -> None:
        team = body.get("team_id") or event.get("team") or ""  # the workspace, as slash commands name it
        channel, thread_ts = event["channel"], event.get("thread_ts")
        is_group = event.get("channel_type", "channel") != "im"
        async with self._lock(_key(channel, thread_ts)):
            text = await self._plain(team, event.get("text", ""), context.get("bot_user_id"))
            inc = await self._incoming(
                team, event["user"], "", channel, thread_ts, is_group, title, text=text, deciding=text.startswith("/"),
            )
            await self._answer_in_place(replace(inc, message_id=str(event.get("ts", ""))), channel, thread_ts, event["user"], is_group)

    async def _answer_in_place(self, inc: Incoming, channel: str, thread_ts: str | None, user: str, is_group: bool) -> None:
        growing = GrowingAnswer(self._live(channel, thread_ts))
        for reply in await self.gateway.handle(inc, growing):
            posts = messages(reply)
            posted = []
            if growing.posted and reply.kind == "answer" and not reply.buttons:
                # The answer was shown as it grew: its message takes the final text, the rest follows.
                await growing.finish(reply.text)
                posted.append((str(growing.handle), reply.text))
                posts, growing = posts[1:], GrowingAnswer(growing.live)
            for message in posts:
                if reply.ephemeral and is_group:
                    await self.client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, **message)
                else:
                    sent = await self.client.chat_postMessage(channel=channel, thread_ts=thread_ts, **message)
                    if not posted:  # a very long answer is linked by its first message, which holds its text to put back
                        posted.append((str(sent["ts"]), reply.text))
            await self.gateway.posted(inc.place, reply, posted)

    async def _on_shortcut(self, ack: Any, shortcut: dict[str, Any], respond: Any) -> None:
        """A message shortcut ("Fork from here", "Rewind to here"): the command on that message's step,
        asked first, answered to the person alone."""
        await ack()
        action = registry.message_action(shortcut.get("callback_id", ""))
        if action is None or shortcut.get("type") != "message_action":
            return
        channel_info, message, user = shortcut.get("channel") or {}, shortcut.get("message") or {}, shortcut["user"]
        channel = channel_info.get("id", "")
        thread_ts = _thread_of(message)
        is_group = not _is_dm(channel, channel_info.get("name"))
        team = (shortcut.get("team") or {}).get("id") or user.get("team_id") or ""
        async with self._lock(_key(channel, thread_ts)):
            inc = await self._incoming(
                team, user["id"], user.get("username") or user.get("name", ""), channel, thread_ts, is_group,
                chat_title("slack_dm") if not is_group else chat_title("slack_channel"), deciding=True,
            )
            target = str(shortcut.get("message_ts") or message.get("ts") or "")
            for reply in await self.gateway.on_message_command(inc, action.path, target):
                for part in messages(reply):
                    await self._respond(respond, part, response_type="ephemeral", thread_ts=thread_ts)

    async def edit(self, link: MessageLink, text: str) -> bool:
        """Say something else in a message the bot posted (a rewound answer, or its text put back)."""
        channel = link.place.split(":", 2)[2]
        try:
            await self.client.chat_update(channel=channel, ts=link.message, **messages(Reply(text))[0])
        except SlackApiError as err:  # deleted meanwhile, or too old to edit
            log.info("Slack: a rewound answer was not edited (%s)", err.response.get("error"))
            return False
        return True

    def _live(self, channel: str, thread_ts: str | None) -> LiveMessage:
        """A growing answer where the person asked: posted, then updated (chat.update)."""

        async def post(text: str) -> str:
            posted = await self.client.chat_postMessage(channel=channel, thread_ts=thread_ts, **messages(Reply(text))[0])
            return str(posted["ts"])

        async def edit(ts: str, text: str) -> None:
            await self.client.chat_update(channel=channel, ts=ts, **messages(Reply(text))[0])

        # Each write shows the text's first message (`messages`); a longer answer's rest is posted after it.
        return LiveMessage(post, edit, 40_000, SLACK_EVERY)

    async def _on_button(self, ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        container, message = body.get("container") or {}, body.get("message") or {}
        channel_info = body.get("channel") or {}
        channel = channel_info.get("id") or container.get("channel_id") or ""
        thread_ts = _thread_of(message) or container.get("thread_ts")
        is_group = not _is_dm(channel, channel_info.get("name"))
        user = body["user"]
        team = (body.get("team") or {}).get("id") or user.get("team_id") or ""
        async with self._lock(_key(channel, thread_ts)):
            inc = await self._incoming(
                team, user["id"], user.get("username") or user.get("name", ""), channel, thread_ts, is_group,
                chat_title("slack_channel" if is_group else "slack_dm"), deciding=True,
            )
            opener = functools.partial(self._open_thread, channel)
            replies = await self.gateway.press(inc, body["actions"][0]["value"], opener)
            card = None if container.get("is_ephemeral") else str(container.get("message_ts") or message.get("ts") or "") or None
            await self._answer_press(respond, replies, card, inc.place, thread_ts)

    async def _answer_press(
        self, respond: Any, replies: list[Reply], card: str | None, place: str, thread_ts: str | None
    ) -> None:
        """The answers to a button, through its response URL; `card`: the ts of the pressed message when it
        is in the channel (None when it was shown to the person alone)."""
        first, was_ephemeral = True, card is None
        for reply in replies:
            for part in messages(reply):
                kind = "ephemeral" if reply.ephemeral else "in_channel"
                if first and reply.ephemeral == was_ephemeral:
                    # The answer takes the place of the card whose button was pressed.
                    await self._respond(respond, part, response_type=kind, replace_original=True, thread_ts=thread_ts)
                    if card is not None:
                        # A turn's answer (after an approval) now reads in the bot's own message: chat.update
                        # can mark it when a restore takes it back. Linked by that first message, as a long
                        # answer posted in place is.
                        await self.gateway.posted(place, reply, [(card, reply.text)])
                elif first and was_ephemeral:
                    # A private question answered for everyone: the question goes, the answer is posted.
                    await self._respond(respond, {}, delete_original=True)
                    await self._respond(respond, part, response_type=kind, replace_original=False, thread_ts=thread_ts)
                else:
                    await self._respond(respond, part, response_type=kind, replace_original=False, thread_ts=thread_ts)
                first = False

    async def _open_thread(self, channel: str, name: str, intro: str) -> Opened | NoThread:
        """A thread for a fork: under a first message, in the same channel or DM, saying what it is forked from."""
        try:
            posted = await self.client.chat_postMessage(channel=channel, **messages(Reply(intro))[0])
        except SlackApiError as err:
            said = str(err.response.get("error"))
            log.info("Slack: no thread for a fork (%s)", said)
            return "no_permission" if said in ("not_in_channel", "channel_not_found", "restricted_action") else "failed"
        except (aiohttp.ClientError, OSError) as err:
            log.warning("Slack: no thread for a fork (%s: %s)", type(err).__name__, err)
            return "failed"
        return Opened(f"{channel}:{posted['ts']}", name, "thread")

    def _lock(self, key: str) -> asyncio.Lock:
        """One chat's messages are answered one after the other, in the order they came."""
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def _respond(self, respond: Any, message: dict[str, Any], **options: Any) -> None:
        # The response URL through slack-sdk's webhook client with the same retries as the Web API
        # (bolt's own `respond` has none for a 5xx or a rate limit).
        webhook = AsyncWebhookClient(respond.response_url, retry_handlers=retry_handlers(), logger=log)
        answer = await webhook.send_dict({**message, **{k: v for k, v in options.items() if v is not None}})
        if answer.status_code != 200:
            log.warning("Slack refused an answer to a response URL: %s %s", answer.status_code, answer.body)

    async def _on_error(self, error: Exception, body: dict[str, Any]) -> None:
        log.error("Slack request failed (%s)", body.get("type") or body.get("command") or "?", exc_info=error)


def build(gateway: Gateway, settings: Settings) -> SlackAdapter | None:
    """The Slack adapter, or None when no bot token is set."""
    if not settings.slack.configured:
        return None
    return SlackAdapter(gateway, settings.slack)
