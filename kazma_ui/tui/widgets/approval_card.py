"""An approval card: a tool call that waits for a yes or no, answered with `a` or `d`."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Static

from commands.render import approval_question
from kazma_ui.tui.sentences import key_labels, say

ARGS_SHOWN = 200


def describe(card: dict[str, Any], lang: str = "en") -> str:
    """The card in people's words, as every surface says it (what will be written where, the text)."""
    asked = approval_question(str(card.get("tool", "")), card.get("args") or {}, lang)
    if asked:
        return f"{asked}\n{say('approval_keys', lang)}"
    args = ", ".join(f"{k}={v!r}" for k, v in (card.get("args") or {}).items())
    if len(args) > ARGS_SHOWN:
        args = args[: ARGS_SHOWN - 1] + "…"
    return say("approval_needed", lang, call=f"{card.get('tool', '?')}({args})")


class ApprovalCard(Static, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "decide('approve')", "key_approve"),
        Binding("d", "decide('deny')", "key_deny"),
    ]
    DEFAULT_CSS = """
    ApprovalCard {
        height: auto;
        padding: 0 1;
        border: round $warning;
    }
    ApprovalCard:focus {
        border: round $accent;
        background: $boost;
    }
    """

    class Decided(Message):
        def __init__(self, card_id: str, decision: str) -> None:
            super().__init__()
            self.card_id = card_id
            self.decision = decision

    def __init__(self, card: dict[str, Any], lang: str = "en") -> None:
        super().__init__(describe(card, lang), markup=False)
        key_labels(self, lang)
        self.card_id: str = card["card_id"]
        self.tool: str = card.get("tool", "?")

    def action_decide(self, decision: str) -> None:
        self.post_message(self.Decided(self.card_id, decision))
