"""A fake Telegram Bot API server on 127.0.0.1, for end-to-end tests of the Telegram bot.

It serves `/bot{token}/{method}` as the Bot API does: form-encoded requests whose
non-string values are JSON, answers `{"ok": true, "result": ...}`, 401 for another token,
404 for a method it does not know. `getUpdates` hands out what a test pushed, holding the
long poll about 0.1 s. `sendMessage` is checked as Telegram checks it (HTML tags, 4096
visible characters, 64-byte callback data) and recorded in `sent` as a person would read
it. `flood(method, seconds)` makes the next call of that method answer 429 retry_after;
`hiccup(method, status, body)` makes it answer an error of any shape (a proxy's HTML 502).
A `getUpdates` held when another comes ends with 409 Conflict, as Telegram's does (one
poller per token); `conflicts` counts them. `createForumTopic` works as Telegram documents it: in a supergroup with topics (`is_forum`)
where the bot may manage topics, or in a private chat when the bot has topics turned on
(`has_topics_enabled` in getMe); it answers 400 otherwise.
`editMessageText` edits a message the bot sent as Telegram does: it answers the same
Message with the new `text` and an `edit_date`, 400 "message is not modified" for the same
text and markup, 400 "message to edit not found" for another message; `sent` then reads the
new text and `edits` keeps each edit in order. `edit_interval(seconds)` makes it answer 429
retry_after for an edit that comes sooner than that after the last post or edit in the
chat (Telegram's flood control; its Bot FAQ says about one message a second per chat).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import itertools
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.helpers import WAIT, eventually

T = TypeVar("T")

HOLD = 0.1  # how long getUpdates waits for an update before answering []
JSON_PARAMS = {"reply_markup", "reply_parameters", "commands", "allowed_updates", "link_preview_options", "scope"}
INT_PARAMS = {"chat_id", "user_id", "message_id", "message_thread_id", "offset", "timeout", "limit"}
HTML_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "pre", "a", "tg-spoiler",
             "blockquote", "span", "tg-emoji"}
TAG = re.compile(r"</?([a-zA-Z][\w-]*)[^>]*>")
BOT = {"id": 7000000001, "is_bot": True, "first_name": "Kazma", "username": "KazmaBot",
       "can_join_groups": True, "can_read_all_group_messages": False, "supports_inline_queries": False}
ADMIN_RIGHTS = {
    "can_be_edited": False, "is_anonymous": False, "can_manage_chat": True, "can_delete_messages": True,
    "can_manage_video_chats": True, "can_restrict_members": True, "can_promote_members": False,
    "can_change_info": True, "can_invite_users": True, "can_post_stories": False, "can_edit_stories": False,
    "can_delete_stories": False,
}


def person(user_id: int, first_name: str, language_code: str = "en") -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": first_name, "language_code": language_code}


def private_chat(user: dict[str, Any]) -> dict[str, Any]:
    return {"id": user["id"], "type": "private", "first_name": user["first_name"]}


def group_chat(chat_id: int, title: str, *, forum: bool = False) -> dict[str, Any]:
    chat: dict[str, Any] = {"id": chat_id, "type": "supergroup", "title": title}
    if forum:
        chat["is_forum"] = True
    return chat


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    status: int = 200


@dataclass
class Sent:
    """One message the bot posted, as the person reads it."""

    chat_id: int
    text: str  # tags removed, entities unescaped
    raw: str
    parse_mode: str | None
    thread_id: int | None
    reply_to: int | None
    message: dict[str, Any]  # the Message the fake answered with

    def buttons(self) -> list[tuple[str, str]]:
        """(label, callback_data) of its inline keyboard, in order."""
        rows = (self.message.get("reply_markup") or {}).get("inline_keyboard") or []
        return [(b["text"], b["callback_data"]) for row in rows for b in row]


@dataclass(frozen=True)
class Topic:
    chat_id: int
    message_thread_id: int
    name: str


@dataclass
class FakeTelegram:
    token: str
    base_url: str = ""  # "http://127.0.0.1:<port>/bot" once started
    bot: dict[str, Any] = field(default_factory=lambda: dict(BOT))
    calls: list[Call] = field(default_factory=list)
    sent: list[Sent] = field(default_factory=list)
    members: dict[tuple[int, int], str] = field(default_factory=dict)  # (chat, user) -> status; default member
    updates: list[dict[str, Any]] = field(default_factory=list)
    topics: list[Topic] = field(default_factory=list)
    no_topic_rights: set[int] = field(default_factory=set)  # chats where the bot may not manage topics
    conflicts: int = 0  # held getUpdates ended with 409 because another came meanwhile
    edits: list[Sent] = field(default_factory=list)  # each editMessageText carried out, in order (the text then)
    flooded_edits: int = 0  # edits answered 429 by the flood control of `edit_interval`
    _edit_interval: float = 0.0
    _last_write: dict[int, float] = field(default_factory=dict)  # chat -> monotonic time of its last post or edit
    _held: asyncio.Future[None] | None = None  # the getUpdates held right now
    _confirmed: int = 0  # the highest offset asked for: updates below it are not handed out again
    _flood: dict[str, int] = field(default_factory=dict)
    _hiccups: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    _stalls: dict[str, float] = field(default_factory=dict)
    _chats: dict[int, dict[str, Any]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _pushed: asyncio.Event = field(default_factory=asyncio.Event)

    # -- what a test does ---------------------------------------------------------------
    def push(self, update: dict[str, Any]) -> None:
        self.updates.append({"update_id": next(self._ids), **update})
        self._pushed.set()

    def message(self, user: dict[str, Any], chat: dict[str, Any], text: str, *, thread_id: int | None = None,
                reply_to: Sent | None = None) -> dict[str, Any]:
        """A text message from a person, with the entities Telegram adds (command, @mention),
        in a forum topic (`thread_id`) or in reply to a message of the bot (`reply_to`)."""
        self._chats[chat["id"]] = chat
        entities = []
        command = text.split()[0] if text.startswith("/") else ""
        if command:
            entities.append({"type": "bot_command", "offset": 0, "length": _utf16(command)})
        for m in re.finditer(r"@\w+", text):
            if m.start() >= len(command):
                entities.append({"type": "mention", "offset": _utf16(text[: m.start()]), "length": _utf16(m[0])})
        msg: dict[str, Any] = {"message_id": next(self._ids), "date": int(time.time()), "chat": chat, "from": user, "text": text}
        if entities:
            msg["entities"] = entities
        if thread_id is not None:
            msg.update(message_thread_id=thread_id, is_topic_message=True)
        if reply_to is not None:
            msg["reply_to_message"] = reply_to.message
        self.push({"message": msg})
        return msg

    def press(self, user: dict[str, Any], sent: Sent, label: str) -> None:
        """A person presses the button with this label under a message the bot posted."""
        data = dict(sent.buttons())[label]
        self.push({"callback_query": {"id": str(next(self._ids)), "from": user, "chat_instance": "ci",
                                      "message": sent.message, "data": data}})

    def flood(self, method: str, retry_after: int) -> None:
        """The next call of `method` answers 429 Too Many Requests, retry after this many seconds."""
        self._flood[method] = retry_after

    def hiccup(self, method: str, status: int = 502, body: str = "<html><body>502 Bad Gateway</body></html>",
               content_type: str = "text/html", times: int = 1) -> None:
        """The next `times` calls of `method` answer this error instead (a proxy's page, a 5xx, ...)."""
        self._hiccups.setdefault(method, []).extend([(status, body, content_type)] * times)

    def edit_interval(self, seconds: float) -> None:
        """From now on an edit sooner than `seconds` after the chat's last post or edit answers 429."""
        self._edit_interval = seconds

    def stall(self, method: str, seconds: float) -> None:
        """The next call of `method` gets no answer for `seconds` (then a 504), and is not carried out."""
        self._stalls[method] = seconds

    def called(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def to(self, chat_id: int) -> list[Sent]:
        return [s for s in self.sent if s.chat_id == chat_id]

    async def wait_for(self, found: Callable[[], T | None], timeout: float = WAIT) -> T:
        """The first truthy value of `found()` (bounded)."""
        return await eventually(found, lambda: f"the fake Telegram; the bot sent {[s.text[:80] for s in self.sent]}", timeout)

    async def replies(self, chat_id: int, after: int, count: int = 1, timeout: float = 10.0) -> list[Sent]:
        """The messages posted to a chat after the first `after` of them, once `count` have come."""
        await self.wait_for(lambda: len(self.to(chat_id)) >= after + count, timeout)
        return self.to(chat_id)[after:]

    # -- the Bot API ----------------------------------------------------------------------
    async def _method(self, request: Request) -> Response:
        method = request.path_params["method"]
        params = _params(await request.body())
        if request.path_params["token"] != self.token:
            self.calls.append(Call(method, params, 401))
            return _fail(401, "Unauthorized")
        retry_after = self._flood.pop(method, None)
        if retry_after is not None:
            self.calls.append(Call(method, params, 429))
            return _fail(429, f"Too Many Requests: retry after {retry_after}", parameters={"retry_after": retry_after})
        stall = self._stalls.pop(method, None)
        if stall is not None:
            self.calls.append(Call(method, params, 504))
            await asyncio.sleep(stall)
            return _fail(504, "Gateway Timeout")
        hiccups = self._hiccups.get(method)
        if hiccups:
            status, body, content_type = hiccups.pop(0)
            self.calls.append(Call(method, params, status))
            return Response(body, status_code=status, media_type=content_type)
        self.calls.append(Call(method, params))
        handler = getattr(self, f"_api_{method}", None)
        if handler is None:
            return _fail(404, "Not Found")
        result = await handler(params)
        if isinstance(result, Response):
            return result
        return JSONResponse({"ok": True, "result": result})

    async def _api_getMe(self, params: dict[str, Any]) -> Any:
        return self.bot

    async def _api_deleteWebhook(self, params: dict[str, Any]) -> Any:
        return True

    async def _api_setWebhook(self, params: dict[str, Any]) -> Any:
        return True

    async def _api_setMyCommands(self, params: dict[str, Any]) -> Any:
        return True

    async def _api_answerCallbackQuery(self, params: dict[str, Any]) -> Any:
        return True

    async def _api_getUpdates(self, params: dict[str, Any]) -> Any:
        if self._held is not None and not self._held.done():
            self._held.set_result(None)  # the poll held until now ends with 409, as Telegram's does
            self.conflicts += 1
        # As Telegram: an update is confirmed (never handed out again) once asked for with a higher offset.
        self._confirmed = offset = max(params.get("offset") or 0, self._confirmed)
        if params.get("timeout") and not any(u["update_id"] >= offset for u in self.updates):
            held = self._held = asyncio.get_running_loop().create_future()
            self._pushed.clear()
            pushed = asyncio.ensure_future(self._pushed.wait())
            try:
                await asyncio.wait({pushed, held}, timeout=HOLD, return_when=asyncio.FIRST_COMPLETED)
            finally:
                pushed.cancel()
            if held.done():
                return _fail(409, "Conflict: terminated by other getUpdates request; "
                                  "make sure that only one bot instance is running")
            held.cancel()
        return [u for u in self.updates if u["update_id"] >= offset]

    async def _api_getChatMember(self, params: dict[str, Any]) -> Any:
        status = self.members.get((params["chat_id"], params["user_id"]), "member")
        member: dict[str, Any] = {"status": status, "user": {"id": params["user_id"], "is_bot": False, "first_name": "x"}}
        if status == "administrator":
            member.update(ADMIN_RIGHTS)
        if status == "creator":
            member["is_anonymous"] = False
        return member

    def _text_of(self, params: dict[str, Any]) -> tuple[str, str, str | None] | JSONResponse:
        """(text as read, raw, parse_mode) of a message to post or edit, or Telegram's 400."""
        raw, mode = str(params.get("text", "")), params.get("parse_mode")
        text = raw
        if mode == "HTML":
            bad = next((m[1] for m in TAG.finditer(raw) if m[1].lower() not in HTML_TAGS), None)
            if bad is not None or re.search(r"<(?![a-zA-Z/])", raw):
                return _fail(400, f"Bad Request: can't parse entities: unsupported start tag \"{bad}\"")
            text = html.unescape(TAG.sub("", raw))
        if not text.strip():
            return _fail(400, "Bad Request: message text is empty")
        if _utf16(text) > 4096:
            return _fail(400, "Bad Request: message is too long")
        markup = params.get("reply_markup")
        for row in (markup or {}).get("inline_keyboard", []):
            for button in row:
                if len(button.get("callback_data", "").encode()) > 64:
                    return _fail(400, "Bad Request: BUTTON_DATA_INVALID")
        return text, raw, mode

    async def _api_sendMessage(self, params: dict[str, Any]) -> Any:
        checked = self._text_of(params)
        if isinstance(checked, JSONResponse):
            return checked
        text, raw, mode = checked
        markup = params.get("reply_markup")
        chat_id, thread = params["chat_id"], params.get("message_thread_id")
        self._last_write[chat_id] = time.monotonic()
        message: dict[str, Any] = {
            "message_id": next(self._ids), "date": int(time.time()), "from": self.bot, "text": text,
            "chat": self._chats.get(chat_id, {"id": chat_id, "type": "private", "first_name": "?"}),
        }
        if markup:
            message["reply_markup"] = markup
        if thread is not None:
            message.update(message_thread_id=thread, is_topic_message=True)
        reply_to = (params.get("reply_parameters") or {}).get("message_id")
        self.sent.append(Sent(chat_id, text, raw, mode, thread, reply_to, message))
        return message

    async def _api_createForumTopic(self, params: dict[str, Any]) -> Any:
        chat_id, name = params["chat_id"], str(params.get("name", ""))
        chat = self._chats.get(chat_id, {"type": "private"})
        if chat["type"] == "private":
            if not self.bot.get("has_topics_enabled"):
                return _fail(400, "Bad Request: the chat is not a forum")
        elif not chat.get("is_forum"):
            return _fail(400, "Bad Request: the chat is not a forum")
        elif chat_id in self.no_topic_rights:
            return _fail(400, "Bad Request: not enough rights to create a topic")
        if not 1 <= len(name) <= 128:
            return _fail(400, "Bad Request: TOPIC_NAME_INVALID")
        topic = Topic(chat_id, next(self._ids), name)
        self.topics.append(topic)
        return {"message_thread_id": topic.message_thread_id, "name": name, "icon_color": 7322096}

    def in_topic(self, chat_id: int, thread_id: int) -> list[Sent]:
        return [s for s in self.sent if s.chat_id == chat_id and s.thread_id == thread_id]

    async def _api_editMessageText(self, params: dict[str, Any]) -> Any:
        chat_id = params.get("chat_id")
        sent = next((s for s in self.sent if s.chat_id == chat_id and s.message["message_id"] == params.get("message_id")), None)
        if sent is None:
            return _fail(400, "Bad Request: message to edit not found")
        checked = self._text_of(params)
        if isinstance(checked, JSONResponse):
            return checked
        text, raw, mode = checked
        markup = params.get("reply_markup")
        if text == sent.text and raw == sent.raw and markup == sent.message.get("reply_markup"):
            return _fail(400, "Bad Request: message is not modified: specified new message content and reply markup "
                              "are exactly the same as a current content and reply markup of the message")
        now = time.monotonic()
        wait = self._edit_interval - (now - self._last_write.get(chat_id, -1e9))
        if wait > 0:
            self.flooded_edits += 1
            retry_after = max(1, round(wait))
            return _fail(429, f"Too Many Requests: retry after {retry_after}", parameters={"retry_after": retry_after})
        self._last_write[chat_id] = now
        sent.text, sent.raw, sent.parse_mode = text, raw, mode
        sent.message["text"] = text
        sent.message["edit_date"] = int(time.time())
        sent.message.pop("reply_markup", None)  # as Telegram: an edit without a keyboard removes it
        if markup:
            sent.message["reply_markup"] = markup
        self.edits.append(Sent(sent.chat_id, text, raw, mode, sent.thread_id, sent.reply_to, dict(sent.message)))
        return sent.message

    async def _api_editMessageReplyMarkup(self, params: dict[str, Any]) -> Any:
        for sent in self.sent:
            if sent.chat_id == params["chat_id"] and sent.message["message_id"] == params["message_id"]:
                sent.message.pop("reply_markup", None)
                if params.get("reply_markup"):
                    sent.message["reply_markup"] = params["reply_markup"]
                return sent.message
        return _fail(400, "Bad Request: message to edit not found")

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/bot{token}/{method}", self._method, methods=["GET", "POST"])])


def _params(body: bytes) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key, value in parse_qsl(body.decode(), keep_blank_values=True):
        if key in JSON_PARAMS:
            params[key] = json.loads(value)
        elif key in INT_PARAMS:
            params[key] = int(value)
        else:
            params[key] = value
    return params


def _fail(code: int, description: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"ok": False, "error_code": code, "description": description, **extra}, status_code=code)


@contextlib.asynccontextmanager
async def serve_fake_telegram(token: str) -> AsyncIterator[FakeTelegram]:
    """Start the fake on a free port of 127.0.0.1; stop it on exit."""
    fake = FakeTelegram(token)
    config = uvicorn.Config(fake.app(), host="127.0.0.1", port=0, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    task.result()
                    raise RuntimeError("the fake Telegram server stopped before it started")
                await asyncio.sleep(0.01)
        fake.base_url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/bot"
        yield fake
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)
