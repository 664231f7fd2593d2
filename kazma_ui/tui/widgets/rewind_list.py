"""/rewind: the chat's past prompts, newest first with their time. Enter rewinds to before the
chosen one (its text then waits in the input, to edit and send again); f forks from there."""

from __future__ import annotations

import time
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kazma_ui.tui.sentences import key_labels, say

RESTORE = "restore"
FORK = "fork"
SHOWN_CHARS = 70


def when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


def prompt_line(row: dict[str, Any]) -> str:
    text = " ".join(str(row["text"]).split())
    return f"{when(row['created_at'])}  {text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + '…'}"


class RewindList(ModalScreen[tuple[str, dict[str, Any]] | None]):
    """Answers (RESTORE or FORK, the chosen prompt's row), or None when left with Escape."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "key_cancel"),
        Binding("f", "fork", "key_fork_here"),
    ]
    DEFAULT_CSS = """
    RewindList { align: center middle; }
    RewindList > Vertical {
        width: 90%; max-width: 110; height: auto; max-height: 80%; border: thick $accent; background: $surface; padding: 1 2;
    }
    RewindList #rewind-help { height: auto; margin-bottom: 1; }
    RewindList OptionList { height: auto; max-height: 20; }
    """

    def __init__(self, prompts: list[dict[str, Any]], lang: str = "en") -> None:
        super().__init__()
        self.prompts = sorted(prompts, key=lambda r: r["id"], reverse=True)  # newest first
        self.lang = lang
        key_labels(self, lang)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(say("rewind_help", self.lang), id="rewind-help", markup=False)
            yield OptionList(*(Option(prompt_line(r), id=str(r["id"])) for r in self.prompts), id="rewind-prompts")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def _chosen(self) -> dict[str, Any] | None:
        at = self.query_one(OptionList).highlighted
        return self.prompts[at] if at is not None and 0 <= at < len(self.prompts) else None

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss((RESTORE, self.prompts[event.option_index]))

    def action_fork(self) -> None:
        chosen = self._chosen()
        if chosen is not None:
            self.dismiss((FORK, chosen))

    def action_leave(self) -> None:
        self.dismiss(None)
