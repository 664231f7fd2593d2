"""The input line: a message for the agent, or a slash command. Its text is never dropped
by the app: it is cleared only once the server has taken what was sent."""

from __future__ import annotations

from textual.widgets import Input

from kazma_ui.tui.sentences import say


class InputLine(Input):
    DEFAULT_CSS = """
    InputLine {
        dock: bottom;
    }
    """

    def __init__(self, lang: str = "en") -> None:
        super().__init__(placeholder=say("placeholder", lang), id="input")

    def clear_if(self, sent: str) -> None:
        """Clear what was sent, unless the person has typed something else meanwhile."""
        if self.value.strip() == sent:
            self.value = ""
