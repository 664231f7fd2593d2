"""The open chat: its transcript, replies as they stream in, and what commands answered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.containers import VerticalScroll
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

    def __init__(self, lang: str = "en") -> None:
        super().__init__(id="view")
        self.lang = lang
        self.entries: list[Entry] = []

    def texts(self) -> list[str]:
        """What the view shows, line by line (read off its widgets)."""
        return [str(child.content) for child in self.query(Static)]

    async def show_transcript(self, messages: list[dict[str, Any]]) -> None:
        """Show the chat as the server has it. When what is shown is still its beginning (a
        reconnect, a reload that took nothing back), only the rest is added: notes stay."""
        new = [Entry(m["role"], m["text"], m["turn_index"]) for m in messages]
        old = [e for e in self.entries if e.kind not in NOTES]
        if new[: len(old)] != old:
            await self.remove_children()
            self.entries = []
            old = []
        for entry in new[len(old):]:
            await self._add(entry)

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

    async def add_command(self, text: str) -> None:
        await self._add(Entry("command", text))

    async def _add(self, entry: Entry) -> None:
        self.entries.append(entry)
        await self.mount(Static(entry.shown(self.lang), classes=entry.kind, markup=False))
        self.scroll_end(animate=False)
