"""The connection banner: hidden while the server answers, a warning while it does not."""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

from kazma_ui.tui.sentences import say


class ConnectionBanner(Static):
    DEFAULT_CSS = """
    ConnectionBanner {
        height: auto;
        padding: 0 1;
        background: $error;
        color: $text;
        display: none;
    }
    ConnectionBanner.-lost {
        display: block;
    }
    """

    lost: reactive[bool] = reactive(False)

    def __init__(self, lang: str = "en") -> None:
        super().__init__("", id="banner", markup=False)
        self.lang = lang

    def watch_lost(self, lost: bool) -> None:
        self.set_class(lost, "-lost")

    def show_lost(self, reason: str, retry_in: float, attempt: int) -> None:
        self.update(say("reconnecting", self.lang, reason=reason, seconds=f"{retry_in:.1f}", attempt=attempt))
        self.lost = True

    def show_stopped(self, reason: str) -> None:
        """A refusal that retrying cannot fix (a bad token): say it and stay up."""
        self.update(reason)
        self.lost = True

    def show_connected(self) -> None:
        self.update("")
        self.lost = False
