"""The open chat: its transcript, replies as they stream in, and what commands answered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

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

    def shown(self, lang: str = "en") -> str:
        if self.kind == "command":
            return f"› {self.text}"
        if self.kind in NOTES:
            return self.text
        if self.kind == "stopped":  # the row's sentence, in the person's language
            return f"{role_name('stopped', lang)}: {sentence('errors.turn_stopped', lang)}"
        return f"{role_name(self.kind, lang)}: {self.text}"


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
        """What the view shows, line by line (read off its widgets)."""
        return [str(child.content) for child in self.query(Static)]

    async def show_transcript(self, messages: list[dict[str, Any]], more: bool = False) -> None:
        """Show the chat as the server has it: all of it, or (`more`) its newest page. When what is
        shown still leads up to it (a reconnect, a reload that took nothing back), only the rest is
        added: notes and older pages read stay."""
        new = [Entry(m["role"], m["text"], m["turn_index"], m.get("id")) for m in messages]
        old = [e for e in self.entries if e.kind not in NOTES]
        start = 0
        if more and new:
            start = next((i for i, e in enumerate(old) if e.row_id == new[0].row_id), len(old) + 1)
        shown = old[start:]
        if start > len(old) or new[: len(shown)] != shown:
            await self.remove_children()
            self.entries = []
            shown = []
        if not self.entries:
            self.more = more
        for entry in new[len(shown):]:
            await self._add(entry)
        self._asked = False
        if self.more and self.max_scroll_y == 0:
            self.call_after_refresh(self._ask_older)  # nothing to scroll yet: fill the screen

    async def show_older(self, messages: list[dict[str, Any]], more: bool) -> None:
        """Older messages, put above those shown; what the person was reading stays in place."""
        entries = [Entry(m["role"], m["text"], m["turn_index"], m.get("id")) for m in messages]
        height = self.virtual_size.height
        self.more = more
        if entries:
            self.entries[:0] = entries
            await self.mount(*(Static(e.shown(self.lang), classes=e.kind, markup=False) for e in entries), before=0)
        self._asked = False

        def keep_place() -> None:
            self.scroll_to(y=self.scroll_y + self.virtual_size.height - height, animate=False)
            if self.more and self.max_scroll_y == 0:
                self._ask_older()

        self.call_after_refresh(keep_place)

    async def clear(self) -> None:
        await self.remove_children()
        self.entries = []

    async def add_message(self, role: str, text: str, turn_index: int) -> None:
        """A message from the stream; one the transcript already showed is not shown twice."""
        entry = Entry(role, text, turn_index)
        if entry not in self.entries:
            await self._add(entry)

    async def add_note(self, text: str, alert: bool = False) -> None:
        await self._add(Entry("alert" if alert else "note", text))

    async def add_command(self, text: str) -> Static:
        """A command as typed; the line shown, so that it can be taken away again (`forget`)."""
        return await self._add(Entry("command", text))

    async def forget(self, line: Static) -> None:
        """Take a line away (a command's echo that must come after what the command brought back)."""
        children = list(self.query(Static))
        if line in children:
            del self.entries[children.index(line)]
            await line.remove()

    async def _add(self, entry: Entry) -> Static:
        self.entries.append(entry)
        line = Static(entry.shown(self.lang), classes=entry.kind, markup=False)
        await self.mount(line)
        self.scroll_end(animate=False)
        return line
