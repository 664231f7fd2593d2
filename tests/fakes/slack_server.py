"""A fake Slack (Web API, response URLs and a Socket Mode websocket) on 127.0.0.1, for end-to-end tests.

- `POST|GET /api/{method}`: the Web API. Arguments are read from the query, a form or a
  JSON body; the token from `Authorization: Bearer`. Served: `auth.test`, `users.info`,
  `chat.postMessage`, `chat.postEphemeral`, `apps.connections.open`; any other method
  answers `unknown_method`. A bot token other than `bot_token` gets `invalid_auth`.
- `chat.update` edits a message the bot posted, as Slack documents: it answers `ok` with
  `channel`, `ts`, `text` and the `message`; `message_not_found` for a ts it does not
  know in that channel, `cant_update_message` for someone else's, `no_text` without text or
  blocks, `msg_too_long` past 40,000 characters. `shown(channel)` reads the bot's messages
  as they read now, `updates` keeps each update in order. `update_interval(seconds)`
  answers 429 `ratelimited` (with Retry-After) to an update sooner than that after the
  channel's last post or update (Slack's per-method tiers; chat.update is Tier 3).
- `rate_limit(method, times)`: the next `times` calls of that method answer HTTP 429
  `ratelimited` with `Retry-After: 0`, as Slack does.
- `fail_next(method_or_url_id, status, body)`: the next call answers an error of any shape
  (a proxy's HTML 502, a 500), for a Web API method or a response URL's id.
- `POST /respond/{id}`: a response URL; each body is recorded in `responses`. A URL made for a
  message of the channel (`response_url((channel, ts))`, as a button's is) does to it what Slack
  does: `replace_original` puts the new text and blocks in that message (same ts, still the bot's,
  so chat.update still edits it), `delete_original` deletes it.
- `GET /link/`: the Socket Mode websocket. It says hello; `send_envelope` pushes an
  envelope to the connected app, whose acknowledgements land in `acks`.

Tests wait on what the fake recorded (`wait_for`), never on the app's HTTP answer:
Slack apps acknowledge first and answer through the Web API or the response URL later.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiohttp import WSMsgType, web

T = TypeVar("T")
WAIT_TIMEOUT = 10.0


@dataclass(frozen=True)
class ApiCall:
    method: str
    args: dict[str, Any]
    token: str | None
    ok: bool
    answer: dict[str, Any] = field(default_factory=dict)  # what the fake answered (a posted message's ts)


@dataclass(frozen=True)
class SlackUser:
    id: str
    team_id: str
    name: str
    is_admin: bool = False
    is_owner: bool = False
    locale: str = "en-US"


@dataclass
class FakeSlack:
    bot_token: str
    app_token: str = ""
    team_id: str = "T0KAZMA01"
    bot_user_id: str = "U0KAZMABOT"
    url: str = ""  # "http://127.0.0.1:<port>" once started
    users: dict[str, SlackUser] = field(default_factory=dict)
    calls: list[ApiCall] = field(default_factory=list)  # every Web API call, answered or not
    responses: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (response URL id, body)
    acks: list[dict[str, Any]] = field(default_factory=list)  # Socket Mode acknowledgements
    _limited: dict[str, int] = field(default_factory=dict)
    _failures: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # what was answered with a failure, in order
    messages: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (channel, ts) -> message, as it reads now
    updates: list[dict[str, Any]] = field(default_factory=list)  # each chat.update carried out: {"channel", "ts", "text"}
    updates_limited: int = 0  # chat.update calls answered 429 by `update_interval`
    _update_interval: float = 0.0
    _last_write: dict[str, float] = field(default_factory=dict)  # channel -> monotonic time of its last post or update
    _url_messages: dict[str, tuple[str, str]] = field(default_factory=dict)  # response URL id -> (channel, ts) it answers
    _socket: web.WebSocketResponse | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    # -- what a test sets up and reads -----------------------------------------------------
    @property
    def api_url(self) -> str:
        return f"{self.url}/api/"

    def add_user(self, user_id: str, name: str, **kwargs: Any) -> SlackUser:
        self.users[user_id] = SlackUser(user_id, self.team_id, name, **kwargs)
        return self.users[user_id]

    def response_url(self, message: tuple[str, str] | None = None) -> str:
        """A response URL; for a button of a message of the channel, `message` is its (channel, ts)."""
        ident = uuid.uuid4().hex[:12]
        if message is not None:
            self._url_messages[ident] = message
        return f"{self.url}/respond/{ident}"

    def rate_limit(self, method: str, times: int = 1) -> None:
        self._limited[method] = self._limited.get(method, 0) + times

    def fail_next(self, target: str, status: int = 502, body: str = "<html><body>502 Bad Gateway</body></html>",
                  content_type: str = "text/html", times: int = 1) -> None:
        """The next `times` calls of a Web API method, or of a response URL (its id), answer this error."""
        self._failures.setdefault(target, []).extend([(status, body, content_type)] * times)

    def _failing(self, target: str) -> web.Response | None:
        queue = self._failures.get(target)
        if not queue:
            return None
        status, body, content_type = queue.pop(0)
        self.failed.append(target)
        return web.Response(text=body, status=status, content_type=content_type)

    def update_interval(self, seconds: float) -> None:
        """From now on a chat.update sooner than `seconds` after the channel's last post or update answers 429."""
        self._update_interval = seconds

    def shown(self, channel: str) -> list[str]:
        """The texts of the bot's messages in a channel, in the order posted, as they read now."""
        return [m["text"] for (ch, _), m in self.messages.items() if ch == channel]

    def called(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method == method]

    def posts(self, *methods: str) -> list[dict[str, Any]]:
        """The messages the app posted (chat.postMessage unless other methods are named)."""
        wanted = methods or ("chat.postMessage",)
        return [c.args for c in self.calls if c.method in wanted and c.ok]

    def answers(self, url: str) -> list[dict[str, Any]]:
        """What the app sent to one response URL."""
        ident = url.rsplit("/", 1)[1]
        return [body for rid, body in self.responses if rid == ident]

    async def wait_for(self, probe: Callable[[], T | None], timeout: float = WAIT_TIMEOUT) -> T:
        """The first truthy value of `probe()`, re-checked whenever the fake records something."""

        async def until() -> T:
            async with self._changed:
                while not (value := probe()):
                    await self._changed.wait()
                return value

        return await asyncio.wait_for(until(), timeout)

    async def send_envelope(self, kind: str, payload: dict[str, Any]) -> str:
        """Push a Socket Mode envelope to the connected app; its id, to find the ack."""
        socket = await self.wait_for(lambda: self._socket)
        envelope_id = uuid.uuid4().hex
        await socket.send_json(
            {"envelope_id": envelope_id, "type": kind, "accepts_response_payload": kind != "events_api", "payload": payload}
        )
        return envelope_id

    async def _record(self, action: Callable[[], None]) -> None:
        async with self._changed:
            action()
            self._changed.notify_all()

    # -- the Web API -----------------------------------------------------------------------
    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            args.update(await request.json())
        elif request.can_read_body:
            args.update(await request.post())
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else args.get("token")
        failing = self._failing(method)
        if failing is not None:
            await self._record(lambda: self.calls.append(ApiCall(method, args, token, False)))
            return failing
        channel = str(args.get("channel", ""))
        too_soon = (method == "chat.update" and (args.get("channel"), args.get("ts")) in self.messages
                    and time.monotonic() - self._last_write.get(channel, -1e9) < self._update_interval)
        if too_soon:
            self.updates_limited += 1
        if self._limited.get(method, 0) > 0 or too_soon:
            if not too_soon:
                self._limited[method] -= 1
            await self._record(lambda: self.calls.append(ApiCall(method, args, token, False)))
            return web.json_response({"ok": False, "error": "ratelimited"}, status=429, headers={"Retry-After": "0"})
        answer = self._answer(method, args, token)
        await self._record(lambda: self.calls.append(ApiCall(method, args, token, bool(answer["ok"]), answer)))
        return web.json_response(answer)

    def _answer(self, method: str, args: dict[str, Any], token: str | None) -> dict[str, Any]:
        if method == "apps.connections.open":
            if not self.app_token or token != self.app_token:
                return {"ok": False, "error": "invalid_auth"}
            return {"ok": True, "url": f"ws://{self.url.removeprefix('http://')}/link/?ticket={uuid.uuid4().hex}"}
        if token != self.bot_token:
            return {"ok": False, "error": "invalid_auth"}
        if method == "auth.test":
            return {"ok": True, "url": "https://kazma-test.slack.com/", "team": "Kazma", "user": "kazma",
                    "team_id": self.team_id, "user_id": self.bot_user_id, "bot_id": "B0KAZMABOT", "is_enterprise_install": False}
        if method == "users.info":
            user = self.users.get(str(args.get("user")))
            if user is None:
                return {"ok": False, "error": "user_not_found"}
            info = {"id": user.id, "team_id": user.team_id, "name": user.name, "is_admin": user.is_admin,
                    "is_owner": user.is_owner, "is_bot": False, "profile": {"display_name": user.name, "real_name": user.name}}
            if str(args.get("include_locale")).lower() in ("true", "1"):
                info["locale"] = user.locale
            return {"ok": True, "user": info}
        if method in ("chat.postMessage", "chat.postEphemeral"):
            if not args.get("channel") or not (args.get("text") or args.get("blocks")):
                return {"ok": False, "error": "no_text" if args.get("channel") else "channel_not_found"}
            ts = f"{int(time.time())}.{next(self._ts):06d}"
            if method == "chat.postEphemeral":
                return {"ok": True, "message_ts": ts}
            message = {"type": "message", "text": args.get("text", ""), "ts": ts, "bot_id": "B0KAZMABOT"}
            if args.get("blocks"):
                message["blocks"] = args["blocks"]
            self.messages[(str(args["channel"]), ts)] = message
            self._last_write[str(args["channel"])] = time.monotonic()
            return {"ok": True, "channel": args["channel"], "ts": ts, "message": dict(message)}
        if method == "chat.update":
            channel, ts = str(args.get("channel", "")), str(args.get("ts", ""))
            message = self.messages.get((channel, ts))
            if message is None:
                return {"ok": False, "error": "message_not_found"}
            if message.get("bot_id") != "B0KAZMABOT":
                return {"ok": False, "error": "cant_update_message"}
            if not (args.get("text") or args.get("blocks")):
                return {"ok": False, "error": "no_text"}
            if len(str(args.get("text", ""))) > 40000:
                return {"ok": False, "error": "msg_too_long"}
            message["text"] = args.get("text", "")
            if "blocks" in args:
                message["blocks"] = args["blocks"]
            message["edited"] = {"user": self.bot_user_id, "ts": f"{int(time.time())}.000000"}
            self._last_write[channel] = time.monotonic()
            self.updates.append({"channel": channel, "ts": ts, "text": message["text"]})
            return {"ok": True, "channel": channel, "ts": ts, "text": message["text"], "message": dict(message)}
        return {"ok": False, "error": "unknown_method"}

    async def _respond(self, request: web.Request) -> web.Response:
        body = await request.json()
        ident = request.match_info["ident"]
        failing = self._failing(ident)
        if failing is not None:
            return failing
        original = self._url_messages.get(ident)
        if original in self.messages and body.get("delete_original"):
            del self.messages[original]
        elif original in self.messages and body.get("replace_original"):
            message = self.messages[original]
            message["text"] = body.get("text", "")
            message.pop("blocks", None)
            message.update({"blocks": body["blocks"]} if body.get("blocks") else {})
        await self._record(lambda: self.responses.append((ident, body)))
        return web.Response(text="ok")

    # -- Socket Mode -----------------------------------------------------------------------
    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        await socket.send_json({"type": "hello", "num_connections": 1, "debug_info": {"host": "fake"},
                                "connection_info": {"app_id": "A0KAZMA01"}})
        await self._record(lambda: setattr(self, "_socket", socket))
        try:
            async for message in socket:
                if message.type == WSMsgType.TEXT:
                    ack = json.loads(message.data)
                    await self._record(lambda ack=ack: self.acks.append(ack))
        finally:
            if self._socket is socket:
                self._socket = None
        return socket

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_post("/respond/{ident}", self._respond)
        app.router.add_get("/link/", self._link)
        return app

    async def close_socket(self) -> None:
        if self._socket is not None:
            await self._socket.close()


@contextlib.asynccontextmanager
async def serve_fake_slack(bot_token: str, app_token: str = "") -> AsyncIterator[FakeSlack]:
    """Start the fake on a free port of 127.0.0.1; stop it on exit."""
    fake = FakeSlack(bot_token=bot_token, app_token=app_token)
    runner = web.AppRunner(fake.app(), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    fake.url = f"http://127.0.0.1:{port}"
    try:
        yield fake
    finally:
        await fake.close_socket()
        await runner.cleanup()
