"""The open chat: its transcript, replies as they stream in, and what commands answered."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static

from kazma_core.agent.activity import stopped_words
from kazma_core.catalogue import sentence
from kazma_ui.step_views import role_name

NOTES = ("note", "alert", "command")


@dataclass(frozen=True)
class Entry:
    """One line of the view: a transcript message (with its turn) or a note for the person."""

    kind: str  # user, assistant, error, stopped, system, note, alert
    text: str
    turn_index: int | None = None
    row_id: int | None = field(default=None, compare=False)  # the transcript row's id (None: from the stream)
    tools: tuple[dict[str, Any], ...] = field(default=(), compare=False)  # the turn's tool calls, on its answer row

    def shown(self, lang: str = "en") -> str:
        if self.kind == "command":
            return f"› {self.text}"
        if self.kind in NOTES:
            return self.text
        if self.kind == "stopped":  # what was said before the Stop, then the row's sentence in the person's language
            said = stopped_words(self.text)
            reason = sentence("errors.turn_stopped", lang)
            return f"{role_name('stopped', lang)}: {said}\n({reason})" if said else f"{role_name('stopped', lang)}: {reason}"
        return f"{role_name(self.kind, lang)}: {self.text}"


def tool_title(block: dict[str, Any], lang: str) -> str:
    """A tool call's line: the tool in people's words, and how it went."""
    state = sentence("tool_states." + str(block["state"]), lang)
    return f"⚙ {sentence(block['label_id'], lang)} · {state}"


class ToolLine(Static):
    """One tool call of a turn: one line, folded; opened (a click, or Enter on it), its arguments
    and its result. A single widget: a long chat draws hundreds of them."""

    DEFAULT_CSS = """
    ToolLine { margin-bottom: 1; color: $text-muted; }
    ToolLine:focus { text-style: bold; }
    """
    can_focus = True

    def __init__(self, block: dict[str, Any], lang: str) -> None:
        self.lang = lang
        self.call_id = str(block["call_id"])
        self.block = block
        self.collapsed = True
        super().__init__(self._text(), markup=False, classes="tool")

    @property
    def title(self) -> str:
        return tool_title(self.block, self.lang)

    @property
    def details(self) -> str:
        args = json.dumps(self.block.get("args") or {}, ensure_ascii=False)
        result = str(self.block.get("result") or "")
        more = int(self.block.get("result_chars") or 0) - len(result)
        return f"{args}\n{result}" + (f"\n… (+{more})" if more > 0 else "")

    def _text(self) -> str:
        said = str(self.block.get("said") or "")  # what the model said before asking for the tool
        line = f"▶ {self.title}" if self.collapsed else f"▼ {self.title}\n{self.details}"
        return f"{said}\n{line}" if said else line

    def toggle(self) -> None:
        self.collapsed = not self.collapsed
        self.update(self._text())

    def on_click(self) -> None:
        self.toggle()

    def key_enter(self) -> None:
        self.toggle()

    def update_block(self, block: dict[str, Any]) -> None:
        self.block = block
        self.update(self._text())


class ChatView(VerticalScroll):
    DEFAULT_CSS = """
    ChatView {
        height: 1fr;
        padding: 0 1;
    }
    ChatView > Static {
        margin-bottom: 1;
    }
    ChatView > .user {
        color: $accent;
    }
    ChatView > .command {
        color: $text-muted;
    }
    ChatView > .note {
        color: $text-muted;
        border-left: thick $primary;
        padding-left: 1;
    }
    ChatView > .alert, ChatView > .error {
        color: $warning;
        border-left: thick $error;
        padding-left: 1;
    }
    """

    class OlderWanted(Message):
        """The person scrolled to the top of a chat whose older messages are not shown yet."""

        def __init__(self, before: int) -> None:
            super().__init__()
            self.before = before

    def __init__(self, lang: str = "en") -> None:
        super().__init__(id="view")
        self.lang = lang
        self.entries: list[Entry] = []
        self.more = False  # older messages than the first shown are on the server
        self._asked = False  # an OlderWanted is on its way
        self._growing: Static | None = None  # the answer being said, drawn as it grows
        self._said = ""
        self._lines: dict[Widget, Entry] = {}  # a line added, and the entry it shows (to take it away again)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value <= 0 < old_value:
            self._ask_older()

    def _ask_older(self) -> None:
        first = next((e.row_id for e in self.entries if e.row_id is not None), None)
        if self.more and not self._asked and first is not None:
            self._asked = True
            self.post_message(self.OlderWanted(first))

    def texts(self) -> list[str]:
        """What the view shows, line by line (read off its widgets; tool calls are `tool_lines`)."""
        return [str(child.content) for child in self.children if isinstance(child, Static) and not isinstance(child, ToolLine)]

    def tool_lines(self) -> list[str]:
        """The tool calls shown, their titles in order."""
        return [line.title for line in self.query(ToolLine)]

    async def show_transcript(self, messages: list[dict[str, Any]], more: bool = False) -> None:
        """Show the chat as the server has it: all of it, or (`more`) its newest page. When what is
        shown still leads up to it (a reconnect, a reload that took nothing back), only the rest is
        added: notes and older pages read stay."""
        new = [_entry(m) for m in messages]
        old = [e for e in self.entries if e.kind not in NOTES]
        start = 0
        if more and new:
            start = next((i for i, e in enumerate(old) if e.row_id == new[0].row_id), len(old) + 1)
        shown = old[start:]
        if start > len(old) or new[: len(shown)] != shown:
            await self.clear()
            shown = []
        if not self.entries:
            self.more = more
        for entry in new[len(shown):]:
            await self._add(entry)
        self._asked = False
        if self.more and self.max_scroll_y == 0:
            self.call_after_refresh(self._fill_screen)

    def _fill_screen(self) -> None:
        """Older messages while nothing can be scrolled yet, judged once what was added is laid out
        (before, a busy machine could see an empty height and load the whole chat)."""
        if self.more and self.max_scroll_y == 0:
            self._ask_older()

    async def show_older(self, messages: list[dict[str, Any]], more: bool) -> None:
        """Older messages, put above those shown; what the person was reading stays in place."""
        entries = [_entry(m) for m in messages]
        height = self.virtual_size.height
        self.more = more
        if entries:
            self.entries[:0] = entries
            await self.mount(*(w for e in entries for w in self._widgets(e)), before=0)
        self._asked = False

        def keep_place() -> None:
            self.scroll_to(y=self.scroll_y + self.virtual_size.height - height, animate=False)
            if self.more and self.max_scroll_y == 0:
                self._ask_older()

        self.call_after_refresh(keep_place)

    async def clear(self) -> None:
        await self.remove_children()
        self.entries = []
        self._lines = {}
        self._growing = None

    async def add_message(self, role: str, text: str, turn_index: int) -> None:
        """A message from the stream; one the transcript already showed is not shown twice. The
        answer drawn as it grew gives way to it."""
        await self._end_growing()
        entry = Entry(role, text, turn_index)
        if entry not in self.entries:
            await self._add(entry)

    async def grow(self, text: str) -> None:
        """A piece of the answer being said: drawn at once, after what came before it."""
        if self._growing is None:
            self._said = ""
            self._growing = Static("", classes="assistant growing", markup=False)
            await self.mount(self._growing)
        self._said += text
        self._growing.update(f"{role_name('assistant', self.lang)}: {self._said}")
        self.scroll_end(animate=False)

    async def show_tool(self, block: dict[str, Any]) -> None:
        """A tool call starting (a new line) or ending (its line says how it went). Words said
        before it were not the answer: the answer starts afresh after it."""
        await self._end_growing()
        line = next((t for t in self.query(ToolLine) if t.call_id == str(block["call_id"])), None)
        if line is None:
            await self.mount(ToolLine(block, self.lang))
            self.scroll_end(animate=False)
        else:
            line.update_block(block)

    async def _end_growing(self) -> None:
        if self._growing is not None:
            await self._growing.remove()
            self._growing = None

    async def add_note(self, text: str, alert: bool = False) -> None:
        await self._add(Entry("alert" if alert else "note", text))

    async def add_command(self, text: str) -> Static:
        """A command as typed; the line shown, so that it can be taken away again (`forget`)."""
        return await self._add(Entry("command", text))

    def _widgets(self, entry: Entry) -> list[Widget]:
        """What shows an entry: its turn's tool calls first (on an answer row), then its text."""
        return [*(ToolLine(b, self.lang) for b in entry.tools), Static(entry.shown(self.lang), classes=entry.kind, markup=False)]

    async def forget(self, line: Static) -> None:
        """Take a line away (a command's echo that must come after what the command brought back)."""
        entry = self._lines.pop(line, None)
        if entry is not None:
            self.entries = [e for e in self.entries if e is not entry]
        await line.remove()

    async def _add(self, entry: Entry) -> Static:
        self.entries.append(entry)
        shown = {t.call_id for t in self.query(ToolLine)}  # drawn live already: not twice
        widgets = [w for w in self._widgets(entry) if not (isinstance(w, ToolLine) and w.call_id in shown)]
        await self.mount(*widgets)
        self.scroll_end(animate=False)
        line = widgets[-1]
        self._lines[line] = entry
        return line  # type: ignore[return-value]


def _entry(row: dict[str, Any]) -> Entry:
    return Entry(row["role"], row["text"], row["turn_index"], row.get("id"), tuple(row.get("tools") or ()))
