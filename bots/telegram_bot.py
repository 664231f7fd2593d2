"""Telegram, on python-telegram-bot: messages and button presses in, the gateway's replies out.

Polling, or a webhook whose requests must carry the secret token. Every rule (who may do
what, commands, turns, approvals) is the gateway's; this module maps a Telegram update to
an `Incoming`, asks the chat's admins only when a change needs it, and posts the replies
as HTML pieces under Telegram's length limit, with inline keyboards for buttons.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import html
import logging
import re
import secrets
import weakref
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from telegram import (
    Bot,
    BotCommand,
    Chat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    MessageEntity,
    ReplyParameters,
    Update,
    User,
)
from telegram.constants import ChatMemberStatus, ChatType, MessageLimit, ParseMode
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from bots.gateway import (
    CANCEL,
    CONFIRM,
    Button,
    Gateway,
    Incoming,
    NoThread,
    Opened,
    Reply,
    alongside,
    chat_title,
    on_message_step,
    split_text,
)
from bots.streaming import TELEGRAM_EVERY, GrowingAnswer, LiveMessage
from commands.parser import parse
from commands.registry import group_admin, telegram_menu
from kazma_core.errors import KazmaError
from kazma_core.retry import Backoff, with_retries
from kazma_core.settings import Settings, TelegramSettings
from kazma_core.stores.message_links import MessageLink

log = logging.getLogger(__name__)

UPDATES = ["message", "callback_query"]
POLL_SECONDS = 10
WATCH_SECONDS = 60.0  # how often a running bot checks that its token is still accepted
CALLBACK_BYTES = 64  # Telegram's limit on a button's callback_data
LONG_ACTIONS_KEPT = 1024
FLOOD_WAITS = 5  # RetryAfter answers waited out for one request before giving up on it
NETWORK_RETRIES = 3  # a request Telegram answered with a 5xx, garbage or nothing is tried this many times more
SEND_AGAIN = Backoff(first=0.5, most=2.0)  # the pauses before those retries: 0.5, 1 and 2 s
STOP_GRACE = 5.0  # seconds replies in progress may take to finish when the bot stops
TOAST_CHARS = 200  # Telegram's limit on a callback answer's text
GROUPS = (ChatType.GROUP, ChatType.SUPERGROUP)
ADMINS = (ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR)


class PatientLimiter(AIORateLimiter):
    """PTB's rate limiter (Telegram's flood limits kept, RetryAfter waited out) that also tries a
    request again when Telegram answers a 5xx, a body that is not JSON, or nothing in time: a
    reply is not dropped for a passing outage. A refusal (400, 403) is not tried again.

    A timed-out message may have reached Telegram: a person may then read it twice, never zero times.
    """

    async def process_request(
        self, callback: Callable[..., Coroutine[Any, Any, Any]], args: Any, kwargs: dict[str, Any],
        endpoint: str, data: dict[str, Any], rate_limit_args: int | None,
    ) -> Any:
        def note(err: BaseException, pause: float) -> None:
            log.warning("telegram %s failed (%s); trying again in %.1f s", endpoint, err, pause)

        request = functools.partial(super().process_request, callback, args, kwargs, endpoint, data, rate_limit_args)
        return await with_retries(SEND_AGAIN, NETWORK_RETRIES + 1, request, again=_passing, note=note)


def _passing(err: BaseException) -> bool:
    """A failure that may pass: a 5xx, no answer in time, or a body that is not JSON (a plain
    TelegramError: "Invalid server response"). A refusal (BadRequest, Forbidden) is final."""
    return not isinstance(err, BadRequest) and (isinstance(err, NetworkError) or type(err) is TelegramError)


class TelegramUnavailable(KazmaError):
    """Telegram cannot be reached or refuses the bot; the supervisor retries."""

    code = "telegram_unavailable"
    status = 503


class TelegramMisconfigured(KazmaError):
    code = "telegram_misconfigured"
    status = 500


def build(gateway: Gateway, settings: Settings) -> TelegramAdapter | None:
    if not settings.telegram.configured:
        return None
    return TelegramAdapter(gateway, settings.telegram)


class TelegramAdapter:
    name = "telegram"
    http_path: str | None = None  # the webhook, when used, is served by PTB on its own port

    def __init__(self, gateway: Gateway, settings: TelegramSettings) -> None:
        self.gateway = gateway
        self.settings = settings
        self._token = settings.token.get_secret_value()
        self._hide_token = _HideToken(self._token)
        self._app: Application[Any, Any, Any, Any, Any, Any] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._long_actions: OrderedDict[str, str] = OrderedDict()
        self.serving = asyncio.Event()  # set while updates are taken (the webhook listens, or polling runs)
        # Telegram answers a second poller 409; every replica may serve the webhook.
        self.exclusive = settings.mode == "polling"

    # lifecycle -------------------------------------------------------------------------------
    async def run(self) -> None:
        self._check_settings()
        # httpx logs every request URL, and the Bot API puts the token in the URL.
        logging.getLogger("httpx").addFilter(self._hide_token)
        app = self._app = self._application()
        try:
            await self._start(app)
            await alongside(self._watch(app.bot), self.gateway.follow_rewinds("telegram", functools.partial(self._edit, app.bot)))
        finally:
            await self.close()

    async def _start(self, app: Application[Any, Any, Any, Any, Any, Any]) -> None:
        s = self.settings
        try:
            await app.initialize()  # getMe: the token is checked here
            self.gateway.bot_name = app.bot.username
            await self._set_menu(app.bot)
            await app.start()
            updater = app.updater
            if updater is None:
                raise TelegramMisconfigured(message_id="telegram_no_updater")
            if s.mode == "webhook":
                await updater.start_webhook(
                    listen=s.webhook_listen, port=s.webhook_port, url_path=urlsplit(s.webhook_url).path or "/",
                    webhook_url=s.webhook_url, secret_token=s.webhook_secret.get_secret_value(),
                    allowed_updates=UPDATES,
                )
            else:
                await updater.start_polling(
                    poll_interval=0, timeout=POLL_SECONDS, allowed_updates=UPDATES, error_callback=self._polling_failed,
                )
        except InvalidToken:
            raise self._rejected() from None
        except TelegramError as err:
            raise TelegramUnavailable(message_id="telegram_unreachable", url=s.base_url, error=self._redact(str(err))) from None
        self.serving.set()
        log.info("telegram bot @%s is serving (%s)", app.bot.username, s.mode)

    async def _watch(self, bot: Bot) -> None:
        """Serve until cancelled; raise when the token is revoked meanwhile. Polling then
        stops for good and PTB only logs it, so the token is checked now and then."""
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            try:
                await bot.get_me()
            except InvalidToken:
                raise self._rejected() from None
            except TelegramError as err:  # a passing outage: polling retries by itself
                log.info("telegram: the token check did not get through (%s)", self._redact(str(err)))

    def _rejected(self) -> TelegramUnavailable:
        return TelegramUnavailable(message_id="telegram_token_rejected", url=self.settings.base_url)

    async def close(self) -> None:
        self.serving.clear()
        app, self._app = self._app, None
        if app is not None:
            try:
                if app.updater is not None and app.updater.running:
                    # Stopping waits for the poll in flight, which fails when Telegram just revoked
                    # the token or went away: the reason the bot stops is the error `run` raises.
                    await app.updater.stop()
            except TelegramError as err:
                log.info("telegram: polling ended with %s while stopping", self._redact(str(err)))
            if app.running:
                await app.stop()
            if self._tasks:
                _, late = await asyncio.wait(set(self._tasks), timeout=STOP_GRACE)
                for task in late:
                    task.cancel()
                await asyncio.gather(*late, return_exceptions=True)
            await app.shutdown()
            await app.bot.shutdown()  # also when initialize failed half-way: its HTTP clients are open
        logging.getLogger("httpx").removeFilter(self._hide_token)

    async def http(self, request: Any) -> Any:
        raise TelegramMisconfigured(message_id="telegram_no_http")

    def _check_settings(self) -> None:
        s = self.settings
        if s.mode == "webhook" and not (s.webhook_secret.get_secret_value() and s.webhook_url):
            raise TelegramMisconfigured(message_id="telegram_webhook_settings")

    def _application(self) -> Application[Any, Any, Any, Any, Any, Any]:
        base = self.settings.base_url
        builder = ApplicationBuilder().token(self._token).base_url(base).rate_limiter(PatientLimiter(max_retries=FLOOD_WAITS))
        if base.endswith("/bot"):
            builder = builder.base_file_url(base[: -len("bot")] + "file/bot")
        app = builder.build()
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & filters.TEXT, self._on_message))
        app.add_handler(CallbackQueryHandler(self._on_press))
        return app

    async def _set_menu(self, bot: Bot) -> None:
        for lang, code in (("en", None), ("ar", "ar")):
            menu = [BotCommand(name, description) for name, description in telegram_menu(lang)]
            await bot.set_my_commands(menu, language_code=code)

    def _polling_failed(self, err: TelegramError) -> None:
        log.warning("telegram polling failed (%s: %s); retrying", type(err).__name__, self._redact(str(err)))

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "<token>")

    # updates ---------------------------------------------------------------------------------
    # PTB hands over updates one at a time; each is answered in a task of its own so a long
    # turn in one chat does not hold up the others, and a lock per chat keeps a chat in order.
    async def _on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        self._spawn(self._answer_message(update, context.bot))

    async def _on_press(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        self._spawn(self._answer_press(update, context.bot))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(self._guarded(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guarded(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception:
            # The dispatch loop's one broad except: one update's failure must not stop the bot.
            log.exception("telegram: an update could not be answered")

    def _lock(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def _answer_message(self, update: Update, bot: Bot) -> None:
        message = update.message
        if message is None or message.from_user is None or not message.text:
            return
        thread = message.message_thread_id if message.is_topic_message else None
        text = self._addressed(message, bot, await self._fork_topic(message.chat, thread))
        if text is None:
            return
        # /stop must reach the running turn, not wait behind it in the chat's queue.
        in_order = contextlib.nullcontext() if self.gateway.at_once(text) else self._lock(_chat_key(message.chat, thread))
        async with in_order:
            replied = message.reply_to_message
            changes = self._changes(text, replying=replied is not None)
            inc = await self._incoming(bot, message.chat, message.from_user, thread, text, changes)
            # Links to transcript rows are by the chat's message ids (a topic's messages are numbered with the chat's).
            inc = replace(inc, message_id=str(message.message_id), replied=str(replied.message_id) if replied else "")
            growing = GrowingAnswer(self._live(bot, message.chat.id, thread, message.message_id))
            replies = await self.gateway.handle(inc, growing)
            await self._post(bot, message.chat.id, thread, replies, message.message_id, growing)

    async def _answer_press(self, update: Update, bot: Bot) -> None:
        query = update.callback_query
        if query is None:
            return
        message = query.message
        if message is None or query.data is None:
            await query.answer()
            return
        thread = message.message_thread_id if isinstance(message, Message) and message.is_topic_message else None
        action = self._long_actions.get(query.data, f"{CANCEL}:") if query.data.startswith("#") else query.data
        async with self._lock(_chat_key(message.chat, thread)):
            verb, _, command = action.partition(":")
            inc = await self._incoming(bot, message.chat, query.from_user, thread, "", verb == CONFIRM and self._changes(command))
            # Kazma, an admin where it may open topics, reads every message of a topic: no mention needed there.
            replies = await self.gateway.press(inc, action, functools.partial(self._open_topic, bot, message.chat), thread_hears_all=True)
            refused = next((r.text for r in replies if r.kind == "error"), None)
            try:
                await query.answer(refused[:TOAST_CHARS] if refused else None)
            except BadRequest as err:  # a press answered late ("query is too old") still gets its reply
                log.info("telegram: a button press was answered late (%s)", err)
            await self._post(bot, message.chat.id, thread, replies, message.message_id)
            if replies and refused is None and isinstance(message, Message) and message.reply_markup:
                # The question is answered: its buttons go, so nobody presses them twice.
                await message.edit_reply_markup(None)

    async def _open_topic(self, bot: Bot, chat: Chat, name: str, intro: str) -> Opened | NoThread:
        """A forum topic for a fork, with `intro` as its first message: in a group with topics,
        or in a private chat when the bot has topics turned on there."""
        if chat.type == ChatType.PRIVATE:
            if not bot.bot.has_topics_enabled:
                return "no_topics"
        elif chat.type != ChatType.SUPERGROUP or not chat.is_forum:
            return "no_topics"
        try:
            topic = await bot.create_forum_topic(chat.id, name)
        except (BadRequest, Forbidden) as err:
            said = str(err).lower()
            log.info("telegram: no topic for a fork (%s)", err)
            if "right" in said or isinstance(err, Forbidden):
                return "no_permission"
            return "no_topics" if "forum" in said or "topic" in said else "failed"
        except TelegramError as err:
            log.warning("telegram: no topic for a fork (%s: %s)", type(err).__name__, self._redact(str(err)))
            return "failed"
        try:
            await self._post(bot, chat.id, topic.message_thread_id, [Reply(intro)], None)
        except TelegramError as err:  # the topic is there and is the fork's: only its first line is missing
            log.warning("telegram: a fork's topic got no first message (%s)", self._redact(str(err)))
        return Opened(_chat_key(chat, topic.message_thread_id), topic.name, "topic")

    async def _fork_topic(self, chat: Chat, thread: int | None) -> bool:
        """Whether a group's topic is one Kazma opened for a fork: everything said there is for the fork."""
        if thread is None or chat.type not in GROUPS:
            return False
        return await self.gateway.core.store.places.place_of(f"telegram:{_chat_key(chat, thread)}") == "topic"

    def _addressed(self, message: Message, bot: Bot, fork_topic: bool = False) -> str | None:
        """The text meant for Kazma, or None: in a group, only commands for this bot and
        messages that mention it or reply to it (an admin bot sees every message there),
        but in a topic opened for a fork, where every message is the fork's."""
        text = message.text or ""
        first = message.entities[0] if message.entities else None
        if first is not None and first.type == MessageEntity.BOT_COMMAND and first.offset == 0:
            _, _, target = message.parse_entity(first).partition("@")
            return text if not target or target.lower() == (bot.username or "").lower() else None
        if message.chat.type not in GROUPS:
            return text
        mention = f"@{bot.username}".lower()
        mentioned = any(
            (e.type == MessageEntity.MENTION and message.parse_entity(e).lower() == mention)
            or (e.type == MessageEntity.TEXT_MENTION and e.user is not None and e.user.id == bot.id)
            for e in message.entities
        )
        replied = message.reply_to_message is not None and message.reply_to_message.from_user is not None \
            and message.reply_to_message.from_user.id == bot.id
        if not (mentioned or replied or fork_topic):
            return None
        return re.sub(re.escape(mention), "", text, flags=re.I).strip()

    def _changes(self, text: str, replying: bool = False) -> bool:
        """Whether only a group's admins may run the command: only those need the platform's word on admins.
        In reply to a message, "/replay" is a restore of that message's step."""
        command = parse(text, self.gateway.bot_name)
        on_step = on_message_step(command, text) if replying and command is not None else None
        return group_admin(on_step[0] if on_step else getattr(command, "path", ""))

    async def _incoming(self, bot: Bot, chat: Chat, user: User, thread: int | None, text: str, changes: bool) -> Incoming:
        group = chat.type in GROUPS
        return Incoming(
            platform="telegram", place=_place(chat.id), user_id=str(user.id), user_name=user.full_name, chat_key=_chat_key(chat, thread),
            chat_title=chat_title("telegram", name=chat.effective_name or user.full_name), text=text, is_group=group,
            is_admin=group and changes and await self._is_admin(bot, chat.id, user.id), locale=user.language_code,
        )

    async def _is_admin(self, bot: Bot, chat_id: int, user_id: int) -> bool:
        try:
            member = await bot.get_chat_member(chat_id, user_id)
        except TelegramError as err:
            log.warning("telegram: could not ask whether a user administers a chat (%s); treating them as a member", err)
            return False
        return member.status in ADMINS

    # replies ---------------------------------------------------------------------------------
    def _live(self, bot: Bot, chat_id: int, thread: int | None, reply_to: int) -> LiveMessage:
        """A growing answer in this chat: posted in reply to the person's message, then edited."""

        async def post(text: str) -> Message:
            return await self._send(bot, chat_id, thread, text, None, reply_to)

        async def edit(message: Message, text: str) -> None:
            change = functools.partial(bot.edit_message_text, chat_id=chat_id, message_id=message.message_id)
            try:
                try:
                    await change(to_html(text), parse_mode=ParseMode.HTML)
                except BadRequest as err:
                    if "entities" not in str(err).lower():
                        raise
                    await change(text)  # formatting Telegram refused: say it plainly
            except BadRequest as err:
                if "not modified" not in str(err).lower():  # the same text again is no failure
                    raise

        # Half the limit: Telegram counts UTF-16 units, and a growing text is not measured twice.
        return LiveMessage(post, edit, MessageLimit.MAX_TEXT_LENGTH // 2, TELEGRAM_EVERY)

    async def _post(
        self, bot: Bot, chat_id: int, thread: int | None, replies: list[Reply], reply_to: int | None,
        growing: GrowingAnswer | None = None,
    ) -> None:
        for reply in replies:
            # Telegram counts UTF-16 units: an emoji is two, so a text with any is cut at half the length.
            wide = len(reply.text.encode("utf-16-le")) > 2 * len(reply.text)
            limit = MessageLimit.MAX_TEXT_LENGTH // (2 if wide else 1)
            pieces = [p for p in split_text(reply.text, limit) if p.strip()]
            posted = []
            if growing is not None and growing.posted and reply.kind == "answer" and not reply.buttons and pieces:
                # The answer was shown as it grew: its message takes the final text, the rest follows.
                first = split_text(pieces[0], growing.live.limit)
                await growing.finish(first[0])
                posted.append((str(growing.handle.message_id), first[0]))
                pieces = [p for p in [*first[1:], *pieces[1:]] if p.strip()]
                growing, reply_to = None, None
            for i, piece in enumerate(pieces):
                markup = self._keyboard(reply.buttons) if i == len(pieces) - 1 else None
                sent = await self._send(bot, chat_id, thread, piece, markup, reply_to if i == 0 else None)
                posted.append((str(sent.message_id), piece))
            await self.gateway.posted(_place(chat_id), reply, posted)

    async def _edit(self, bot: Bot, link: MessageLink, text: str) -> bool:
        """Say something else in a message the bot posted (a rewound answer, or its text put back)."""
        chat_id = int(link.place.partition(":")[2])
        try:
            await bot.edit_message_text(to_html(text), chat_id, int(link.message), parse_mode=ParseMode.HTML)
        except BadRequest as err:  # deleted meanwhile, or the text is the same already
            log.info("telegram: a rewound answer was not edited (%s)", err)
            return False
        return True

    async def _send(
        self, bot: Bot, chat_id: int, thread: int | None, text: str, markup: InlineKeyboardMarkup | None, reply_to: int | None,
    ) -> Message:
        send = functools.partial(
            bot.send_message, chat_id, message_thread_id=thread, reply_markup=markup,
            reply_parameters=ReplyParameters(reply_to, allow_sending_without_reply=True) if reply_to else None,
        )
        try:
            return await send(to_html(text), parse_mode=ParseMode.HTML)
        except BadRequest as err:
            if "entities" not in str(err).lower():
                raise
            return await send(text)  # formatting Telegram refused: say it plainly

    def _keyboard(self, buttons: list[Button]) -> InlineKeyboardMarkup | None:
        if not buttons:
            return None
        return InlineKeyboardMarkup([[InlineKeyboardButton(b.label, callback_data=self._callback_data(b.action)) for b in buttons]])

    def _callback_data(self, action: str) -> str:
        """The action itself when Telegram can carry it; else a short key to it kept here
        (a key this process no longer knows is pressed as Cancel, which changes nothing)."""
        if len(action.encode()) <= CALLBACK_BYTES:
            return action
        key = "#" + secrets.token_urlsafe(16)
        self._long_actions[key] = action
        while len(self._long_actions) > LONG_ACTIONS_KEPT:
            self._long_actions.popitem(last=False)
        return key


def _place(chat_id: int) -> str:
    """Where Telegram numbers a message: its chat (a topic's messages are numbered with the chat's)."""
    return f"telegram:{chat_id}"


def _chat_key(chat: Chat, thread: int | None) -> str:
    return f"{chat.id}:{thread}" if thread else str(chat.id)


_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
_INLINE = re.compile(r"`([^`\n]+)`|\*\*([^*\n]+)\*\*")


def to_html(text: str) -> str:
    """Plain text, escaped for Telegram's HTML mode, with Markdown code and bold kept as such."""

    def inline(part: str) -> str:
        return _INLINE.sub(lambda m: f"<code>{m[1]}</code>" if m[1] is not None else f"<b>{m[2]}</b>", html.escape(part, quote=False))

    out, last = [], 0
    for m in _FENCE.finditer(text):
        out += [inline(text[last : m.start()]), f"<pre>{html.escape(m[1], quote=False)}</pre>"]
        last = m.end()
    out.append(inline(text[last:]))
    return "".join(out)


class _HideToken(logging.Filter):
    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if self.token in text:
            record.msg, record.args = text.replace(self.token, "<token>"), None
        return True
