"""A fake Discord (REST API and gateway websocket) on 127.0.0.1, for end-to-end bot tests.

It speaks just enough of Discord for discord.py 2.7: login (`GET /users/@me`, a 401 for a
wrong token), application info, the slash-command sync, channel messages, interaction
callbacks and follow-ups; and a gateway that says HELLO, answers heartbeats, answers
IDENTIFY with READY and one GUILD_CREATE, and lets a test inject MESSAGE_CREATE and
INTERACTION_CREATE events. Everything the bot posts is recorded in `sent`, in order.
A thread started from a message (`POST /channels/{id}/messages/{id}/threads`) is answered
with the thread channel and announced on the gateway with THREAD_CREATE before the answer,
as Discord does; people can then post and run slash commands in it (`channel=thread id`).
`fail_next(path_part, status, body)` answers the next request of that path with any error.
`PATCH /channels/{id}/messages/{id}` edits a message the bot posted as Discord does: it
answers the whole message with the new content and an `edited_timestamp`; 404 Unknown
Message (10008) for a message it does not know or an ephemeral one (only the interaction's token
reaches those; a non-ephemeral interaction answer is edited there like any of the bot's messages,
as discord/discord-api-docs#3090 reports), 403 (50005) for someone else's, 400 Invalid
Form Body (50035) past 2,000 characters. `in_channel` then reads the new content and
`edits` keeps each edit in order. Edits carry Discord's rate-limit headers, a bucket of
`edit_limit` (5) edits per `edit_window` (5 s) per channel, and past it a 429, so
discord.py paces itself as it does with Discord.

Discord's quirks that discord.py depends on are kept: Content-Type exactly
`application/json` (aiohttp's `json_response` adds a charset, and discord.py then reads
the body as text), a 4xx for unknown routes (on a 5xx discord.py retries silently), and
a 429 carries a `Via` header (without it discord.py takes it for a Cloudflare ban).
"""

from __future__ import annotations

import contextlib
import datetime
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiohttp import WSMsgType, web

from tests.helpers import WAIT, eventually

T = TypeVar("T")

APP_ID = 900000000000000001
BOT_ID = 900000000000000002
GUILD_ID = 900000000000000003
GENERAL = 900000000000000004  # a text channel of the guild
DM = 900000000000000005  # the DM channel between ALICE and the bot
ADMIN_ROLE = 900000000000000006
ALICE = 711111111111111111  # the guild's members; carol holds the admin role, dave owns the guild
BOB = 722222222222222222
CAROL = 733333333333333333
DAVE = 744444444444444444
EPHEMERAL = 64
ADMINISTRATOR = 8
CREATE_PUBLIC_THREADS = 1 << 35
PUBLIC_THREAD = 11
NAMES = {ALICE: "alice", BOB: "bob", CAROL: "carol", DAVE: "dave"}


def _user(uid: int, *, bot: bool = False) -> dict[str, Any]:
    name = "kazma" if uid == BOT_ID else NAMES[uid]
    return {"id": str(uid), "username": name, "global_name": name.title(), "discriminator": "0", "avatar": None, "bot": bot}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # Exactly "application/json": discord.py compares the header verbatim.
    headers = {"Content-Type": "application/json", **(headers or {})}
    return web.Response(body=json.dumps(data).encode(), status=status, headers=headers)


@dataclass
class Sent:
    """Something the bot made Discord show: a channel message, an interaction answer or an edit."""

    kind: str  # channel | callback | followup | edit
    message_id: int
    channel_id: int
    content: str
    flags: int = 0
    components: list[dict[str, Any]] = field(default_factory=list)
    interaction_id: int | None = None
    callback_type: int | None = None  # 4 message, 5 deferred message, 6 deferred update, 7 update

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def buttons(self) -> dict[str, str]:
        """label -> custom_id of the message's buttons."""
        return {b["label"]: b["custom_id"] for row in self.components for b in row.get("components", [])}


@dataclass
class FakeDiscord:
    token: str
    base: str = ""  # "http://127.0.0.1:<port>" once started
    sent: list[Sent] = field(default_factory=list)
    synced: list[list[dict[str, Any]]] = field(default_factory=list)  # bodies of PUT .../commands
    identified: list[dict[str, Any]] = field(default_factory=list)  # IDENTIFY payloads
    rate_limited: list[str] = field(default_factory=list)  # paths answered with a 429
    unknown_routes: list[str] = field(default_factory=list)
    drop_gateway: bool = False  # close each gateway socket when the bot identifies or resumes
    threads: dict[int, dict[str, Any]] = field(default_factory=dict)  # id -> thread channel
    threads_allowed: bool = True  # the bot holds CREATE_PUBLIC_THREADS (in its permissions and the channel's)
    deleted: list[int] = field(default_factory=list)  # ids of messages the bot deleted
    edits: list[Sent] = field(default_factory=list)  # each channel message edit carried out, in order (the content then)
    edit_limit: int = 5  # edits per channel in one window, as Discord's bucket for message edits
    edit_window: float = 5.0
    edits_limited: int = 0  # edits answered 429 because the channel's bucket was empty
    _edit_bucket: dict[int, tuple[float, int]] = field(default_factory=dict)  # channel -> (window start, edits in it)
    _failures: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    _limits: dict[str, float] = field(default_factory=dict)  # path part -> retry_after of the next 429
    _messages: dict[int, dict[str, Any]] = field(default_factory=dict)  # id -> message payload
    _interactions: dict[int, dict[str, Any]] = field(default_factory=dict)  # id -> interaction payload
    _sockets: list[web.WebSocketResponse] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(910000000000000000))
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def api_base(self) -> str:
        return f"{self.base}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"{self.base.replace('http', 'ws', 1)}/gateway"

    # -- what a test does ------------------------------------------------------------------
    def rate_limit_next(self, path_part: str, retry_after: float) -> None:
        """Answer the next POST whose path contains `path_part` with a 429."""
        self._limits[path_part] = retry_after

    def fail_next(self, path_part: str, status: int = 502, body: str = "<html>502 Bad Gateway</html>",
                  content_type: str = "text/html", times: int = 1) -> None:
        """The next `times` requests whose path contains `path_part` answer this error."""
        self._failures.setdefault(path_part, []).extend([(status, body, content_type)] * times)

    def _failing(self, path: str) -> web.Response | None:
        for part, queue in self._failures.items():
            if part in path and queue:
                status, body, content_type = queue.pop(0)
                return web.Response(body=body.encode(), status=status, headers={"Content-Type": content_type})
        return None

    def in_thread(self, thread: int) -> list[Sent]:
        return self.in_channel(thread)

    async def message(
        self, author: int, content: str, *, channel: int = GENERAL, mention: bool = True, mentions: tuple[int, ...] = ()
    ) -> int:
        """A person posts a message: in the guild's channel (mentioning the bot), or in the DM.
        `mentions`: the people "<@id>" in `content` names. Returns the message's id."""
        in_guild = channel != DM
        text = f"<@{BOT_ID}> {content}" if in_guild and mention else content
        named = [_user(uid) for uid in mentions] + ([_user(BOT_ID, bot=True)] if in_guild and mention else [])
        payload = self._message(next(self._ids), channel, _user(author), text, mentions=named, member_of=author)
        await self._dispatch("MESSAGE_CREATE", payload)
        return int(payload["id"])

    async def message_command(self, user: int, name: str, message_id: int, *, channel: int = GENERAL, locale: str = "en-US") -> int:
        """A person picks a message command (type 3) in a message's Apps menu: Discord sends the message
        it was used on as `data.target_id`, and the message itself under `data.resolved.messages`."""
        command = next(c for body in reversed(self.synced) for c in body if c.get("type") == 3 and c["name"] == name)
        target = self._messages[message_id]
        data = {"id": command.get("id", str(next(self._ids))), "name": name, "type": 3, "target_id": str(message_id),
                "resolved": {"messages": {str(message_id): target}}}
        return await self._interact(2, user, channel, locale, data)

    async def slash(self, user: int, command: str, *words: str, channel: int = GENERAL, locale: str = "en-US") -> int:
        """A person runs a slash command: "replay", "show", "<step>" is /replay show step:<step>."""
        options = self._options(command, list(words))
        data = {"id": str(next(self._ids)), "name": command, "type": 1, "options": options}
        return await self._interact(2, user, channel, locale, data)

    async def click(self, user: int, message: Sent, label: str, *, locale: str = "en-US") -> int:
        """A person presses a button of a message the bot sent."""
        data = {"custom_id": message.buttons[label], "component_type": 2}
        return await self._interact(3, user, message.channel_id, locale, data, message=self._messages[message.message_id])

    async def until(self, found: Callable[[], T | None], timeout: float = WAIT) -> T:
        """The first truthy value of `found()` (bounded)."""
        return await eventually(found, lambda: f"the fake Discord; the bot sent {[(s.kind, s.content[:80]) for s in self.sent]}", timeout)

    def answers(self, interaction_id: int) -> list[Sent]:
        """What the bot showed in answer to one interaction (its response, edits and follow-ups)."""
        return [s for s in self.sent if s.interaction_id == interaction_id]

    def snowflakes(self) -> set[str]:
        """Every Discord id this fake has used: people, guild, channels, messages, interactions."""
        fixed = {APP_ID, BOT_ID, GUILD_ID, GENERAL, DM, ADMIN_ROLE, *NAMES}
        return {str(i) for i in (*fixed, *self._messages, *self._interactions)}

    def in_channel(self, channel: int) -> list[Sent]:
        """The bot's messages in a channel (or thread), but those it deleted."""
        return [s for s in self.sent if s.kind == "channel" and s.channel_id == channel and s.message_id not in self.deleted]

    # -- payloads ---------------------------------------------------------------------------
    def _member(self, uid: int) -> dict[str, Any]:
        roles = [str(ADMIN_ROLE)] if uid == CAROL else []
        joined = "2026-01-01T00:00:00+00:00"
        return {"user": _user(uid), "roles": roles, "joined_at": joined, "deaf": False, "mute": False, "flags": 0}

    def _message(
        self, mid: int, channel: int, author: dict[str, Any], content: str, *, flags: int = 0,
        components: list[dict[str, Any]] | None = None, mentions: list[dict[str, Any]] | None = None,
        member_of: int | None = None,
    ) -> dict[str, Any]:
        message = {
            "id": str(mid), "channel_id": str(channel), "author": author, "content": content,
            "timestamp": "2026-01-01T00:00:00+00:00", "edited_timestamp": None, "tts": False,
            "mention_everyone": False, "mentions": mentions or [], "mention_roles": [], "attachments": [],
            "embeds": [], "pinned": False, "type": 0, "flags": flags, "components": components or [],
        }
        if channel != DM:
            message["guild_id"] = str(GUILD_ID)
            if member_of is not None:
                message["member"] = {k: v for k, v in self._member(member_of).items() if k != "user"}
        self._messages[mid] = message
        return message

    def _options(self, command: str, words: list[str]) -> list[dict[str, Any]]:
        if command == "replay" or command == "memory":
            sub, *args = words
            names = {"show": ["step"], "restore": ["step"], "compare": ["a", "b"]}.get(sub, [])
            return [{"name": sub, "type": 1, "options": [{"name": n, "type": 3, "value": v} for n, v in zip(names, args, strict=False)]}]
        return [{"name": n, "type": 3, "value": w} for n, w in zip(("step", "here"), words, strict=False)]

    async def _interact(
        self, kind: int, user: int, channel: int, locale: str, data: dict[str, Any], message: dict[str, Any] | None = None
    ) -> int:
        iid = next(self._ids)
        payload: dict[str, Any] = {
            "id": str(iid), "application_id": str(APP_ID), "type": kind, "token": f"token-{iid}", "version": 1,
            "channel_id": str(channel), "locale": locale, "data": data, "app_permissions": "2248473465835073",
            "entitlements": [], "attachment_size_limit": 10485760, "authorizing_integration_owners": {"0": str(GUILD_ID)},
        }
        if channel == DM:
            payload.update(user=_user(user), context=1, channel={"id": str(channel), "type": 1})
        else:
            permissions = str(ADMINISTRATOR) if user in (CAROL, DAVE) else "3072"
            where = self.threads.get(channel) or {"id": str(channel), "type": 0, "name": "general", "guild_id": str(GUILD_ID)}
            payload.update(guild_id=str(GUILD_ID), guild_locale="en-US", context=0,
                           member={**self._member(user), "permissions": permissions}, channel=where)
            if not self.threads_allowed:
                payload["app_permissions"] = str(int(payload["app_permissions"]) & ~CREATE_PUBLIC_THREADS)
        if message is not None:
            payload["message"] = message
        self._interactions[iid] = payload
        await self._dispatch("INTERACTION_CREATE", payload)
        return iid

    # -- REST -----------------------------------------------------------------------------
    async def _users_me(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        return _json(_user(BOT_ID, bot=True))

    async def _application(self, request: web.Request) -> web.Response:
        return _json({
            "id": str(APP_ID), "name": "Kazma", "description": "", "icon": None, "bot_public": True,
            "bot_require_code_grant": False, "owner": _user(DAVE), "verify_key": "0" * 64, "flags": 0,
        })

    async def _sync(self, request: web.Request) -> web.Response:
        body = await request.json()
        for command in body:
            # Discord: a message command (type 3) has a name of 1-32 characters, no description, no options.
            if command.get("type") == 3 and (command.get("description") or command.get("options") or not 1 <= len(command["name"]) <= 32):
                return _json({"message": "Invalid Form Body", "code": 50035}, 400)
        self.synced.append(body)
        # Discord answers each command whole: a message command's description is there, empty.
        return _json([{"description": "", **c, "id": str(next(self._ids)), "application_id": str(APP_ID), "version": "1"}
                      for c in body])

    def _limited(self, path: str) -> web.Response | None:
        for part, retry_after in list(self._limits.items()):
            if part in path:
                del self._limits[part]
                self.rate_limited.append(path)
                return _json({"message": "You are being rate limited.", "retry_after": retry_after, "global": False}, 429,
                             {"Via": "1.1 google", "Retry-After": str(retry_after), "X-RateLimit-Scope": "user"})
        return None

    async def _channel_message(self, request: web.Request) -> web.Response:
        limited = self._limited(request.path) or self._failing(request.path)
        if limited is not None:
            return limited
        body = await request.json()
        channel = int(request.match_info["channel"])
        mid = next(self._ids)
        message = self._message(mid, channel, _user(BOT_ID, bot=True), body.get("content", ""), components=body.get("components"))
        self.sent.append(Sent("channel", mid, channel, message["content"], 0, message["components"]))
        return _json(message)

    async def _callback(self, request: web.Request) -> web.Response:
        limited = self._limited(request.path) or self._failing(request.path)
        if limited is not None:
            return limited
        iid = int(request.match_info["interaction"])
        interaction = self._interactions.get(iid)
        if interaction is None or request.match_info["token"] != interaction["token"]:
            return _json({"message": "Unknown interaction", "code": 10062}, 404)
        body = await request.json()
        kind, data = body["type"], body.get("data") or {}
        channel = int(interaction["channel_id"])
        answer: dict[str, Any] = {"interaction": {"id": str(iid), "type": interaction["type"]}}
        if kind == 7:  # update the message the button is on
            message = self._messages[int(interaction["message"]["id"])]
            message.update({k: data[k] for k in ("content", "components") if k in data})
            mid = int(message["id"])
        else:
            mid = next(self._ids)
            message = self._message(mid, channel, _user(BOT_ID, bot=True), data.get("content", ""),
                                    flags=data.get("flags", 0), components=data.get("components"))
        self.sent.append(Sent("callback", mid, channel, message["content"], message["flags"], message["components"], iid, kind))
        answer["interaction"].update(response_message_id=str(mid), response_message_loading=kind == 5,
                                     response_message_ephemeral=bool(message["flags"] & EPHEMERAL))
        if kind in (4, 7):
            answer["resource"] = {"type": kind, "message": message}
        return _json(answer)

    async def _start_thread(self, request: web.Request) -> web.Response:
        """POST /channels/{channel}/messages/{message}/threads: a public thread on a message."""
        failing = self._failing(request.path)
        if failing is not None:
            return failing
        channel, mid = int(request.match_info["channel"]), int(request.match_info["message"])
        if channel == DM or channel in self.threads:
            return _json({"message": "Cannot execute action on this channel type", "code": 50024}, 400)
        if not self.threads_allowed:
            return _json({"message": "Missing Permissions", "code": 50013}, 403)
        if mid not in self._messages or int(self._messages[mid]["channel_id"]) != channel:
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        body = await request.json()
        name = str(body.get("name", ""))
        if not 1 <= len(name) <= 100:
            return _json({"message": "Invalid Form Body", "code": 50035}, 400)
        # A thread started from a message takes the message's id.
        thread = {
            "id": str(mid), "guild_id": str(GUILD_ID), "parent_id": str(channel), "owner_id": str(BOT_ID),
            "name": name, "type": PUBLIC_THREAD, "last_message_id": None, "rate_limit_per_user": 0,
            "message_count": 0, "member_count": 1, "total_message_sent": 0, "flags": 0,
            "thread_metadata": {"archived": False, "auto_archive_duration": body.get("auto_archive_duration", 1440),
                                "archive_timestamp": "2026-01-01T00:00:00+00:00", "locked": False},
        }
        self.threads[mid] = thread
        self._messages[mid]["thread"] = thread
        await self._dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return _json(thread)

    async def _delete_message(self, request: web.Request) -> web.Response:
        mid = int(request.match_info["message"])
        message = self._messages.get(mid)
        if message is None or int(message["channel_id"]) != int(request.match_info["channel"]):
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        self.deleted.append(mid)
        return web.Response(status=204)

    async def _edit_message(self, request: web.Request) -> web.Response:
        """PATCH /channels/{channel}/messages/{message}: the bot edits a message it posted."""
        failing = self._failing(request.path)
        if failing is not None:
            return failing
        channel, mid = int(request.match_info["channel"]), int(request.match_info["message"])
        message = self._messages.get(mid)
        if message is None or int(message["channel_id"]) != channel or mid in self.deleted:
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        if message["author"]["id"] != str(BOT_ID):
            return _json({"message": "Cannot edit a message authored by another user", "code": 50005}, 403)
        if message["flags"] & EPHEMERAL:  # only the interaction's token reaches an ephemeral message
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        now = time.monotonic()
        start, used = self._edit_bucket.get(channel, (now, 0))
        if now - start >= self.edit_window:
            start, used = now, 0
        reset_after = max(0.0, self.edit_window - (now - start))
        bucket = {"X-RateLimit-Limit": str(self.edit_limit), "X-RateLimit-Bucket": f"edit-{channel}",
                  "X-RateLimit-Reset-After": f"{reset_after:.3f}", "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}"}
        if used >= self.edit_limit:
            self.edits_limited += 1
            return _json({"message": "You are being rate limited.", "retry_after": round(reset_after, 3), "global": False}, 429,
                         {**bucket, "X-RateLimit-Remaining": "0", "Retry-After": str(max(1, round(reset_after))),
                          "X-RateLimit-Scope": "user", "Via": "1.1 google"})
        body = await request.json()
        content = body.get("content", message["content"])
        if content is not None and len(content) > 2000:
            return _json({"message": "Invalid Form Body", "code": 50035, "errors": {"content": {"_errors": [
                {"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}]}}}, 400)
        self._edit_bucket[channel] = (start, used + 1)
        message.update({k: body[k] for k in ("content", "components", "embeds") if k in body and body[k] is not None})
        message["edited_timestamp"] = datetime.datetime.now(datetime.UTC).isoformat()
        for sent in self.sent:
            if sent.message_id == mid and sent.kind == "channel":
                sent.content, sent.components = message["content"], message["components"]
        self.edits.append(Sent("message_edit", mid, channel, message["content"], message["flags"], message["components"]))
        return _json(message, headers={**bucket, "X-RateLimit-Remaining": str(self.edit_limit - used - 1)})

    def _interaction_of(self, token: str) -> dict[str, Any] | None:
        return next((i for i in self._interactions.values() if i["token"] == token), None)

    async def _followup(self, request: web.Request) -> web.Response:
        limited = self._limited(request.path) or self._failing(request.path)
        if limited is not None:
            return limited
        interaction = self._interaction_of(request.match_info["token"])
        if interaction is None:
            return _json({"message": "Unknown Webhook", "code": 10015}, 404)
        body = await request.json()
        channel, mid = int(interaction["channel_id"]), next(self._ids)
        message = self._message(mid, channel, _user(BOT_ID, bot=True), body.get("content", ""),
                                flags=body.get("flags", 0), components=body.get("components"))
        message["webhook_id"] = str(APP_ID)
        self.sent.append(
            Sent("followup", mid, channel, message["content"], message["flags"], message["components"], int(interaction["id"]))
        )
        return _json(message)

    async def _edit_original(self, request: web.Request) -> web.Response:
        interaction = self._interaction_of(request.match_info["token"])
        if interaction is None or "message" not in interaction:
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        body = await request.json()
        message = self._messages[int(interaction["message"]["id"])]
        message.update({k: body[k] for k in ("content", "components") if k in body})
        self.sent.append(Sent("edit", int(message["id"]), int(message["channel_id"]), message["content"], message["flags"],
                              message["components"], int(interaction["id"])))
        return _json(message)

    async def _unknown(self, request: web.Request) -> web.Response:
        self.unknown_routes.append(f"{request.method} {request.path}")
        return _json({"message": "404: Not Found", "code": 0}, 404)

    # -- gateway ----------------------------------------------------------------------------
    async def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        if not self._sockets:
            raise AssertionError("no bot is connected to the fake gateway")
        for ws in list(self._sockets):
            await ws.send_str(json.dumps({"op": 0, "t": event, "s": next(self._seq), "d": data}))

    def _guild(self) -> dict[str, Any]:
        everyone = {"id": str(GUILD_ID), "name": "@everyone", "permissions": "3072", "position": 0, "color": 0,
                    "hoist": False, "managed": False, "mentionable": False, "flags": 0}
        admin = {**everyone, "id": str(ADMIN_ROLE), "name": "admins", "permissions": str(ADMINISTRATOR), "position": 1}
        return {
            "id": str(GUILD_ID), "name": "Kazma Lab", "owner_id": str(DAVE), "unavailable": False, "member_count": 5,
            "roles": [everyone, admin], "emojis": [], "stickers": [], "features": [], "large": False,
            "channels": [{"id": str(GENERAL), "type": 0, "name": "general", "position": 0, "permission_overwrites": [],
                          "guild_id": str(GUILD_ID)}],
            "members": [self._member(u) for u in (ALICE, BOB, CAROL, DAVE)]
            + [{**self._member(ALICE), "user": _user(BOT_ID, bot=True)}],
            "threads": [], "voice_states": [], "presences": [], "stage_instances": [], "guild_scheduled_events": [],
            "joined_at": "2026-01-01T00:00:00+00:00", "preferred_locale": "en-US",
        }

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}}))
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                if frame["op"] == 1:
                    await ws.send_str(json.dumps({"op": 11}))
                elif self.drop_gateway and frame["op"] in (2, 6):  # IDENTIFY or RESUME
                    await ws.close(code=4000)
                    break
                elif frame["op"] == 2:
                    if frame["d"]["token"] != self.token:
                        await ws.close(code=4004, message=b"Authentication failed.")
                        break
                    self.identified.append(frame["d"])
                    ready = {
                        "v": 10, "user": _user(BOT_ID, bot=True), "session_id": "session-1",
                        "resume_gateway_url": self.gateway_url, "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
                        "application": {"id": str(APP_ID), "flags": 0}, "private_channels": [],
                    }
                    await ws.send_str(json.dumps({"op": 0, "t": "READY", "s": next(self._seq), "d": ready}))
                    await ws.send_str(json.dumps({"op": 0, "t": "GUILD_CREATE", "s": next(self._seq), "d": self._guild()}))
                    self._sockets.append(ws)
        finally:
            if ws in self._sockets:
                self._sockets.remove(ws)
        return ws

    def app(self) -> web.Application:
        app = web.Application()
        api = "/api/v10"
        app.router.add_get(f"{api}/users/@me", self._users_me)
        app.router.add_get(f"{api}/oauth2/applications/@me", self._application)
        app.router.add_put(f"{api}/applications/{{app}}/commands", self._sync)
        app.router.add_post(f"{api}/channels/{{channel}}/messages", self._channel_message)
        app.router.add_post(f"{api}/channels/{{channel}}/messages/{{message}}/threads", self._start_thread)
        app.router.add_delete(f"{api}/channels/{{channel}}/messages/{{message}}", self._delete_message)
        app.router.add_patch(f"{api}/channels/{{channel}}/messages/{{message}}", self._edit_message)
        app.router.add_post(f"{api}/interactions/{{interaction}}/{{token}}/callback", self._callback)
        app.router.add_post(f"{api}/webhooks/{{app}}/{{token}}", self._followup)
        app.router.add_patch(f"{api}/webhooks/{{app}}/{{token}}/messages/@original", self._edit_original)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/{tail:.*}", self._unknown)
        return app


@contextlib.asynccontextmanager
async def serve_fake_discord(token: str) -> AsyncIterator[FakeDiscord]:
    """Start the fake on a free port of 127.0.0.1; stop it (and drop its sockets) on exit."""
    fake = FakeDiscord(token)
    runner = web.AppRunner(fake.app(), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    fake.base = f"http://127.0.0.1:{port}"
    try:
        yield fake
    finally:
        for ws in list(fake._sockets):
            await ws.close()
        await runner.cleanup()
