"""Renaming and deleting the open chat: a title to type, and what a deletion takes (the whole chat,
or only what Kazma learned in it)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from kazma_ui.tui.sentences import key_labels, say
from kazma_ui.tui.widgets.confirm import DIALOG_CSS


class RenameDialog(ModalScreen["str | None"]):
    """The chat's new title (None: keep it)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "keep", "key_cancel")]
    DEFAULT_CSS = DIALOG_CSS.format(name="RenameDialog")

    def __init__(self, title: str, lang: str = "en") -> None:
        super().__init__()
        self.title_now = title
        self.lang = lang
        key_labels(self, lang)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(say("rename_prompt", self.lang, title=self.title_now), id="question", markup=False)
            yield Input(value=self.title_now, id="title", max_length=200)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        title = event.value.strip()
        self.dismiss(title if title and title != self.title_now else None)

    def action_keep(self) -> None:
        self.dismiss(None)


class DeleteDialog(ModalScreen["str | None"]):
    """What to delete: "chat" (all of it), "learned" (only what Kazma learned), or None (nothing)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "choose('chat')", "key_whole_chat"),
        Binding("l", "choose('learned')", "key_only_learned"),
        Binding("escape", "choose(None)", "key_keep_it"),
    ]
    DEFAULT_CSS = DIALOG_CSS.format(name="DeleteDialog")

    def __init__(self, title: str, lang: str = "en") -> None:
        super().__init__()
        self.question = say("delete_question", lang, title=title)
        self.lang = lang
        key_labels(self, lang)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="question", markup=False)
            with Horizontal():
                yield Button("c", id="chat", variant="error")
                yield Button("l", id="learned", variant="warning")
                yield Button("Esc", id="keep", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#keep", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None if event.button.id == "keep" else event.button.id)

    def action_choose(self, what: str | None) -> None:
        self.dismiss(what)
