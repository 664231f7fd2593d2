"""What a command answers: plain text in the person's language, plus a typed value.

Each surface formats a result its own way: the web chat reads the value's JSON (`data`,
in the API's names, as the command route sends it), a chat app turns a question into
buttons, the TUI opens a fork's chat. The rewind service's own results (`Restored`,
`Undone`, `Cleared`) are values as they are; the rest are declared here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict

from kazma_ui.rewind_results import (
    Comparison,
    Forked,
    RestorePreview,
    Shape,
    StepDetail,
    StepView,
    TurnStep,
    absent_when_none,
    chat_field,
    wire,
)


@dataclass(frozen=True)
class CommandResult:
    kind: Literal["answer", "confirm", "error"]
    text: str
    value: Shape | None = None
    code: str | None = None
    ephemeral: bool = False  # only the person who asked needs to see it

    @property
    def data(self) -> dict[str, Any]:
        """The value as JSON, in the API's names: what the web chat's command route sends."""
        return self.value.model_dump(mode="json") if self.value is not None else {}

    @property
    def confirm(self) -> str | None:
        """The command to run when the person says yes to a question, typed in full."""
        return self.value.confirm if isinstance(self.value, Question) else None


# --- questions before a change ----------------------------------------------------------------

class Question(Shape):
    confirm: str


class RestoreChoice(Shape):
    """One answer to a restore's question when files would change: what it takes back, and its command."""

    what: str  # conversation | files | both
    confirm: str


class RestoreQuestion(Question):
    preview: RestorePreview
    # When the chat's tools changed files after the step: one button each (pydantic copies the default).
    choices: list[RestoreChoice] = []  # noqa: RUF012


class ForkQuestion(Question):
    step: StepView | None = wire("snapshot")  # None: from before the chat's first message, a new empty chat


class ClearQuestion(Question):
    steps: int


# --- answers ----------------------------------------------------------------------------------

class PageAnswer(Shape):
    """The web chat's answer to time travel: the chat's step count and the Time Travel page."""

    chat_id: str = chat_field()
    steps: int
    link: str


class ListedStep(TurnStep):
    short_id: str  # the first characters of its id, enough to type it


class ListedTurn(Shape):
    turn_index: int
    questions: list[str]
    steps: list[ListedStep]  # labelled in the person's language


class ListAnswer(Shape):
    chat_id: str = chat_field()
    turns: list[ListedTurn]  # every turn, also those the text left out for its length
    count: int | None = absent_when_none()  # steps in all; absent when there are none
    link: str


class ShowAnswer(Shape):
    step: StepDetail


class CompareAnswer(Shape):
    comparison: Comparison


class NoStepsAnswer(Shape):
    chat_id: str = chat_field()
    steps: int


class ForkAnswer(Forked):
    link: str  # the new chat on the web
    label: str  # the step it was forked from, in the person's language
    here: bool  # "/fork <step> here": a chat app opens no thread or topic for it


class StopAnswer(Shape):
    chat_id: str = chat_field()
    stopped: bool


class ResetAnswer(Shape):
    chat_id: str = chat_field()


class MemoryOffAnswer(Shape):
    chat_id: str = chat_field()
    memory: bool


class HelpLine(Shape):
    usage: str
    description: str


class HelpAnswer(Shape):
    commands: list[HelpLine]


class Refusal(Shape):
    """A refusal's code with its parameters (gates, candidates, usage, ...), as an error's JSON has them."""

    model_config = ConfigDict(extra="allow")
    error: str
