"""The Kazma terminal UI: chats, a streamed chat view, approvals and time travel, over HTTP.

One worker follows the open chat's event stream. It is also the connection watch:
when the stream breaks it shows the banner and reconnects with backoff, giving back the
id of the last event it showed: the server sends what was said meanwhile, or a `reload`
when it no longer has all of it, and the chat is then read afresh. The input line is
never cleared by a failure, only once the server has taken what was sent.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Header, Input, Static

from commands import render
from commands.i18n import error_text, step_label
from commands.parser import parse
from kazma_core.errors import KazmaError
from kazma_core.retry import Backoff
from kazma_ui.paging import PAGE
from kazma_ui.tui.client import ApiError, ConnectionLost, KazmaClient, ServerEvent
from kazma_ui.tui.sentences import key_labels, say
from kazma_ui.tui.slash import Outcome, SlashRunner
from kazma_ui.tui.widgets.approval_card import ApprovalCard
from kazma_ui.tui.widgets.banner import ConnectionBanner
from kazma_ui.tui.widgets.chat_list import ChatList
from kazma_ui.tui.widgets.chat_manage import DeleteDialog, RenameDialog
from kazma_ui.tui.widgets.chat_view import ChatView
from kazma_ui.tui.widgets.confirm import ConfirmDialog
from kazma_ui.tui.widgets.input_line import InputLine
from kazma_ui.tui.widgets.rewind_list import FORK, RewindList

log = logging.getLogger(__name__)
RETRY_FIRST = 0.5
RETRY_MAX = 10.0
NEXT_CHAT = ""  # notes for whichever chat is shown next
COMMAND = "command"  # a pending note that is a command's echo (shown as typed), not a note


class KazmaTui(App[None]):
    TITLE = "Kazma"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+n", "new_chat", "key_new_chat"),
        Binding("f2", "rename_chat", "key_rename"),
        Binding("f8", "delete_chat", "key_delete"),
    ]
    CSS = """
    #main { height: 1fr; }
    #cards { height: auto; }
    #working { height: 1; padding: 0 1; color: $accent; display: none; }
    #working.on { display: block; }
    """

    def __init__(
        self, url: str, token: str, *, lang: str = "en", retry_first: float = RETRY_FIRST, retry_max: float = RETRY_MAX
    ) -> None:
        super().__init__()
        key_labels(self, lang)
        self.client = KazmaClient(url, token, lang=lang)
        self.lang = lang
        self.backoff = Backoff(retry_first, retry_max)
        self.chat_id: str | None = None
        self.shown_chat: str | None = None  # the chat whose transcript the view shows
        self.chat_titles: dict[str, str] = {}
        self.attempt = 0
        self.last_event: tuple[str, str] | None = None  # (chat, id) of the last event shown, to resume after
        self.slash = SlashRunner(self.client, lang, self.ask)
        self._view_lock = asyncio.Lock()
        self._pending_notes: dict[str, list[tuple[str, bool | str]]] = {}
        self.working = False  # a turn of the open chat is running
        self.last_step: dict[str, Any] | None = None  # the newest step announced since the chat was shown

    def compose(self) -> ComposeResult:
        yield Header()
        yield ConnectionBanner(self.lang)
        with Horizontal(id="main"):
            yield ChatList(self.lang)
            with Vertical():
                yield ChatView(self.lang)
                yield Static(f"⋯ {say('working', self.lang)}", id="working", markup=False)
                yield Vertical(id="cards")
                yield InputLine(self.lang)
        yield Footer()

    @property
    def view(self) -> ChatView:
        return self.query_one(ChatView)

    @property
    def banner(self) -> ConnectionBanner:
        return self.query_one(ConnectionBanner)

    @property
    def input_line(self) -> InputLine:
        return self.query_one(InputLine)

    @property
    def cards(self) -> list[ApprovalCard]:
        return list(self.query(ApprovalCard))

    def on_mount(self) -> None:
        self.input_line.focus()
        self._follow_open_chat()

    async def on_unmount(self) -> None:
        await self.client.aclose()

    # the connection and the chat stream ---------------------------------------------------
    def _follow_open_chat(self) -> None:
        self.run_worker(self._follow(), group="follow", exclusive=True, exit_on_error=False)

    async def _follow(self) -> None:
        while True:
            try:
                await self._follow_once()
            except (ConnectionLost, ApiError) as err:
                if isinstance(err, ApiError) and err.code == "not_found" and self.chat_id is not None:
                    self.chat_id = None  # the chat went away meanwhile: open another
                    continue
                if isinstance(err, ApiError) and err.status < 500:
                    self.banner.show_stopped(error_text(err, self.lang))  # a bad token: retrying will not help
                    return
                await self._retry_later(error_text(err, self.lang))
            except Exception:
                log.exception("following chat %s failed", self.chat_id)
                await self._retry_later(say("stream_failed", self.lang))

    async def _retry_later(self, reason: str) -> None:
        self.attempt += 1
        delay = self.backoff.pause(self.attempt)
        self.banner.show_lost(reason, delay, self.attempt)
        await asyncio.sleep(delay)

    async def _follow_once(self) -> None:
        chat_id = self.chat_id or await self._choose_chat()
        resume = self.last_event[1] if self.last_event and self.last_event[0] == chat_id else None
        async with self.client.events(chat_id, resume) as events:
            self.attempt = 0
            self.banner.show_connected()
            await self._show_chats()
            if resume is None:
                await self._reload(chat_id)
            async for event in events:
                if not await self._on_event(chat_id, event):
                    return
                self.last_event = (chat_id, event.id)
        raise ConnectionLost(message_id="stream_closed", url=self.client.url)

    async def _choose_chat(self) -> str:
        chats = await self.client.chats()
        if not chats:
            chats = [await self.client.create_chat()]
        chat_id: str = chats[0]["thread_id"]
        self.chat_id = chat_id
        return chat_id

    async def _show_chats(self) -> None:
        chats = await self.client.chats()
        self.chat_titles = {c["thread_id"]: c["title"] for c in chats}
        await self.query_one(ChatList).show(chats, self.chat_id)
        self._show_title()

    def _show_title(self) -> None:
        """The chat's title; while a turn runs, a working sign and the newest step it saved."""
        title = self.chat_titles.get(self.chat_id or "", "")
        step = self.last_step
        if step is not None:
            label = step_label(step["turn_index"], step["iteration"], self.lang)
            title = f"{title} · {say('saved_step', self.lang, label=label, short_id=render.short_id(step['snapshot_id']))}"
        if self.working:
            title = f"{title} · {say('working', self.lang)}"
        self.sub_title = title
        self.query_one("#working").set_class(self.working, "on")  # the working sign above the input line

    def _set_working(self, on: bool, step: dict[str, Any] | None = None, *, forget_step: bool = False) -> None:
        self.working = on
        if step is not None or forget_step:
            self.last_step = step
        self._show_title()

    async def _reload(self, chat_id: str) -> None:
        """Show the chat as the server has it now, then any note waiting for that."""
        messages, more = await self.client.transcript(chat_id, limit=PAGE)
        approvals = await self.client.approvals(chat_id)
        async with self._view_lock:
            if chat_id != self.chat_id:
                return
            await self.view.show_transcript(messages, more)
            await self.query_one("#cards").remove_children()
            for card in approvals:
                if card["status"] == "pending":
                    await self._add_card(card)
            for text, alert in self._pending_notes.pop(chat_id, []) + self._pending_notes.pop(NEXT_CHAT, []):
                if alert is COMMAND:
                    await self.view.add_command(text)
                else:
                    await self.view.add_note(text, bool(alert))
            self.shown_chat = chat_id
        # The chat as the server has it now: a step named before may be gone (a restore deletes later ones).
        self._set_working(False, forget_step=True)

    async def _on_event(self, chat_id: str, event: ServerEvent) -> bool:
        """Show one event; False when the chat is gone and another must be opened."""
        data = event.data
        if event.type == "message":
            async with self._view_lock:
                await self.view.add_message(data["role"], data["text"], data["turn_index"])
            self._set_working(data["role"] == "user")
        elif event.type == "delta":
            async with self._view_lock:
                await self.view.grow(str(data["text"]))
            if not self.working:
                self._set_working(True)
        elif event.type == "tool":
            async with self._view_lock:
                await self.view.show_tool(data)
        elif event.type == "snapshot":
            self._set_working(True, data)
        elif event.type == "chat":  # renamed, or named by its first message
            await self._show_chats()
        elif event.type == "approval":
            await self._on_approval(data)
        elif event.type == "error":
            details = {k: v for k, v in data.items() if k not in ("error", "message")}
            err = ApiError(0, str(data.get("error", "error")), str(data.get("message", "")), **details)
            self._set_working(False)
            await self.note(error_text(err, self.lang), alert=True)
        elif event.type == "reload":
            return await self._on_reload(chat_id, data)
        return True

    async def _on_reload(self, chat_id: str, data: dict[str, Any]) -> bool:
        reason = data.get("reason")
        if reason == "deleted":
            self.chat_id = None  # the next chat opened says why
            if ("deleted", None) in self.slash.expected:
                self.slash.expected.discard(("deleted", None))  # deleted here: its note waits already
            else:
                self._pending_notes.setdefault(NEXT_CHAT, []).append((say("reloaded_deleted", self.lang), True))
            return False
        step_id = data.get("snapshot_id")
        if (reason, step_id) in self.slash.expected:
            self.slash.expected.discard((reason, step_id))
            return True  # this TUI's own change: the command shows the chat anew and says so
        if reason == "restored":
            to = say("restored_to", self.lang, short_id=render.short_id(step_id)) if step_id else ""
            self._pending_notes.setdefault(chat_id, []).append((say("reloaded_restored", self.lang, to=to), False))
        elif reason in ("forgotten", "reset"):
            self._pending_notes.setdefault(chat_id, []).append((say(f"reloaded_{reason}", self.lang), False))
        elif reason != "missed":  # events lost while the stream was broken: the banner said so already
            self._pending_notes.setdefault(chat_id, []).append((say("reloaded", self.lang), False))
        await self._reload(chat_id)
        return True

    # approvals ------------------------------------------------------------------------------
    async def _on_approval(self, card: dict[str, Any]) -> None:
        async with self._view_lock:
            if card["status"] == "pending":
                await self._add_card(card)
                self._set_working(False)
                return
            for shown in self.cards:
                if shown.card_id == card["card_id"]:
                    await shown.remove()
                    await self.view.add_note(say("approval_closed_as", self.lang, tool=card["tool"], status=card["status"]))
            if not self.cards:
                self.input_line.focus()

    async def _add_card(self, card: dict[str, Any]) -> None:
        if any(c.card_id == card["card_id"] for c in self.cards):
            return
        shown = ApprovalCard(card, self.lang)
        await self.query_one("#cards").mount(shown)
        # Not while the person is typing: a key meant for the input must not answer a card.
        if not self.input_line.value:
            shown.focus()

    @on(ApprovalCard.Decided)
    def decide(self, event: ApprovalCard.Decided) -> None:
        chat_id = self.chat_id
        if chat_id is not None:
            self.run_worker(self._decide(chat_id, event.card_id, event.decision), group="act", exit_on_error=False)

    async def _decide(self, chat_id: str, card_id: str, decision: str) -> None:
        try:
            await self.client.decide(chat_id, card_id, decision)
        except KazmaError as err:
            await self.note(error_text(err, self.lang), alert=True)
        async with self._view_lock:
            for shown in self.cards:
                if shown.card_id == card_id:
                    await shown.remove()
        self.input_line.focus()

    # what the person types --------------------------------------------------------------------
    @on(Input.Submitted, "#input")
    def submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text and self.chat_id is not None:
            self.run_worker(self._submit(self.chat_id, text), group="act", exit_on_error=False)

    async def _submit(self, chat_id: str, text: str) -> None:
        try:
            if text.split()[0].lower() == "/rewind":
                self.input_line.clear_if(text)
                await self._rewind(chat_id)
                return
            cmd = parse(text)
            if cmd is None:
                await self.client.send(chat_id, text)
                self.input_line.clear_if(text)
                return
            async with self._view_lock:
                echo = await self.view.add_command(text)
            outcome = await self.slash.run(cmd, chat_id)
            self.input_line.clear_if(text)
            if outcome.reload:
                # The chat is shown anew: the command and its answer come after what it brought back.
                async with self._view_lock:
                    await self.view.forget(echo)
                self._pending_notes.setdefault(chat_id, []).append((text, COMMAND))
            await self._show_outcome(chat_id, outcome)
        except ConnectionLost:
            await self.note(say("not_sent", self.lang), alert=True)
        except KazmaError as err:
            await self.note(error_text(err, self.lang), alert=True)
        except Exception:
            log.exception("the command %r failed", text)
            await self.note(f"Something went wrong with {text!r}; see the log. Nothing else was changed.", alert=True)

    async def _rewind(self, chat_id: str) -> None:
        """/rewind: pick one of the chat's past prompts; rewind to before it (or fork from there),
        and put its text in the input to edit and send again."""
        messages, _ = await self.client.transcript(chat_id)
        prompts = [m for m in messages if m["role"] == "user"]
        if not prompts:
            await self.note(say("rewind_none", self.lang))
            return
        chosen: asyncio.Future[tuple[str, dict[str, Any]] | None] = asyncio.get_running_loop().create_future()
        await self.push_screen(RewindList(prompts, self.lang), callback=chosen.set_result)
        picked = await chosen
        if picked is None:
            return
        action, row = picked
        if action == FORK:
            forked = await self.client.fork_from_message(chat_id, row["id"])
            self._pending_notes.setdefault(forked["thread_id"], []).append((say("rewound_fork", self.lang, title=forked["title"]), False))
            await self._show_chats()
            await self.open_chat(forked["thread_id"])
            self.input_line.value = row["text"]
            return
        point = await self.client.message_point(chat_id, row["id"])
        turns = 0
        if point.get("snapshot_id"):
            preview = await self.client.preview(chat_id, point["snapshot_id"])
            turns = preview["later_turns"]
        text = " ".join(str(row["text"]).split())
        if not await self.ask(say("rewind_confirm", self.lang, text=text[:60], turns=turns)):
            await self.note(say("cancelled", self.lang))
            return
        self.slash.expected.add(("restored", point.get("snapshot_id")))
        try:
            await self.client.restore_to_message(chat_id, row["id"])
        except BaseException:
            self.slash.expected.discard(("restored", point.get("snapshot_id")))
            raise
        self._pending_notes.setdefault(chat_id, []).append((say("rewound", self.lang), False))
        await self._reload(chat_id)
        self.input_line.value = row["text"]
        self.input_line.focus()

    async def _show_outcome(self, chat_id: str, outcome: Outcome) -> None:
        if outcome.open_chat is not None:
            self._pending_notes.setdefault(outcome.open_chat, []).append((outcome.text, outcome.alert))
            await self.open_chat(outcome.open_chat)
        elif outcome.reload:
            self._pending_notes.setdefault(chat_id, []).append((outcome.text, outcome.alert))
            await self._reload(chat_id)
        elif outcome.text:
            await self.note(outcome.text, alert=outcome.alert)

    async def note(self, text: str, alert: bool = False) -> None:
        async with self._view_lock:
            await self.view.add_note(text, alert)

    async def ask(self, question: str) -> bool:
        answered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        await self.push_screen(ConfirmDialog(question, self.lang), callback=lambda yes: answered.set_result(bool(yes)))
        return await answered

    # chats ------------------------------------------------------------------------------------
    async def open_chat(self, thread_id: str) -> None:
        self.chat_id = thread_id
        self.last_event = None  # the view starts empty: the chat is read whole
        async with self._view_lock:
            self.shown_chat = None
            await self.view.clear()
            await self.query_one("#cards").remove_children()
        self.query_one(ChatList).mark(thread_id)
        self._set_working(False, forget_step=True)
        self._follow_open_chat()

    @on(ChatView.OlderWanted)
    async def older_wanted(self, event: ChatView.OlderWanted) -> None:
        chat_id = self.chat_id
        if chat_id is None:
            return
        try:
            messages, more = await self.client.transcript(chat_id, before=event.before, limit=PAGE)
        except KazmaError as err:
            await self.note(error_text(err, self.lang), alert=True)
            return
        async with self._view_lock:
            if chat_id == self.chat_id:
                await self.view.show_older(messages, more)

    @on(ChatList.Opened)
    async def chat_opened(self, event: ChatList.Opened) -> None:
        if event.thread_id != self.chat_id:
            await self.open_chat(event.thread_id)
        self.input_line.focus()

    def action_new_chat(self) -> None:
        self.run_worker(self._new_chat(), group="act", exit_on_error=False)

    async def _new_chat(self) -> None:
        try:
            chat = await self.client.create_chat()
        except KazmaError as err:
            await self.note(error_text(err, self.lang), alert=True)
            return
        await self.open_chat(chat["thread_id"])
        self.input_line.focus()

    # rename and delete the open chat -----------------------------------------------------------
    def _title_of(self, chat_id: str) -> str:
        return self.chat_titles.get(chat_id, "")

    async def _choose(self, screen: RenameDialog | DeleteDialog) -> str | None:
        answered: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        # A lambda, not the bound C method: Textual counts a callback's parameters from its signature.
        await self.push_screen(screen, callback=lambda value: answered.set_result(value))  # noqa: PLW0108
        return await answered

    def action_rename_chat(self) -> None:
        if self.chat_id is not None:
            self.run_worker(self._rename(self.chat_id), group="act", exit_on_error=False)

    async def _rename(self, chat_id: str) -> None:
        title = await self._choose(RenameDialog(self._title_of(chat_id), self.lang))
        self.input_line.focus()
        if title is None:
            return
        try:
            renamed = await self.client.rename_chat(chat_id, title)
        except KazmaError as err:
            await self.note(error_text(err, self.lang), alert=True)
            return
        await self._show_chats()
        await self.note(say("renamed", self.lang, title=renamed["title"]))

    def action_delete_chat(self) -> None:
        if self.chat_id is not None:
            self.run_worker(self._delete(self.chat_id), group="act", exit_on_error=False)

    async def _delete(self, chat_id: str) -> None:
        title = self._title_of(chat_id)
        what = await self._choose(DeleteDialog(title, self.lang))
        self.input_line.focus()
        try:
            if what == "learned":
                self.slash.expected.add(("forgotten", None))  # this TUI's own change: said below, not as news
                await self.client.forget_chat(chat_id)
                await self.note(say("forgot", self.lang, title=title))
            elif what == "chat":
                # The chat's stream says it was deleted; the next chat opened says which one went.
                self._pending_notes.setdefault(NEXT_CHAT, []).append((say("deleted", self.lang, title=title), False))
                self.slash.expected.add(("deleted", None))
                await self.client.delete_chat(chat_id)
        except KazmaError as err:
            await self.note(error_text(err, self.lang), alert=True)
