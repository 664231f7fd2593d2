"""The yes/no question asked before a change: a restore, a fork, clearing the steps."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from kazma_ui.tui.sentences import key_labels, say

# A question over the chat, its buttons under it: every dialog of the terminal looks the same.
DIALOG_CSS = """
{name} {{
    align: center middle;
}}
{name} > Vertical {{
    width: 80%;
    max-width: 100;
    height: auto;
    border: thick $warning;
    background: $surface;
    padding: 1 2;
}}
{name} #question {{
    height: auto;
    margin-bottom: 1;
}}
{name} Horizontal {{
    height: auto;
    align: center middle;
}}
{name} Button {{
    margin: 0 2;
}}
"""


class ConfirmDialog(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "key_yes"),
        Binding("n", "answer(False)", "key_no"),
        Binding("escape", "answer(False)", "key_cancel"),
    ]
    DEFAULT_CSS = DIALOG_CSS.format(name="ConfirmDialog")

    def __init__(self, question: str, lang: str = "en") -> None:
        super().__init__()
        key_labels(self, lang)
        self.question = question
        self.lang = lang

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question, id="question", markup=False)
            with Horizontal():
                yield Button(say("yes", self.lang), id="yes", variant="warning")
                yield Button(say("no", self.lang), id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
