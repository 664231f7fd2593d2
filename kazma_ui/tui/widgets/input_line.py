"""The input line: a message for the agent, or a slash command. Its text is never dropped
by the app: it is cleared only once the server has taken what was sent."""

from __future__ import annotations

from textual.widgets import Input

PLACEHOLDER = "Message, or a command (/help)"


class InputLine(Input):
    DEFAULT_CSS = """
    InputLine {
        dock: bottom;
    }
    """

    def __init__(self) -> None:
        super().__init__(placeholder=PLACEHOLDER, id="input")

    def clear_if(self, sent: str) -> None:
        """Clear what was sent, unless the person has typed something else meanwhile."""
        if self.value.strip() == sent:
            self.value = ""
