"""What the rewind service answers: one definition of each shape, for every surface.

The service returns these; the HTTP API serves them as its response models; the TUI reads
the API's JSON back into them; commands/ words them. Inside, fields use the code's words
(a chat, a step); each field the SPEC names otherwise on the wire (thread_id, snapshot_id,
snapshot) has that name as its alias, and the models serialise by alias, so the JSON is
the SPEC's. Field order is the order of the JSON, which clients have always received.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Shape(BaseModel):
    """Built by field name inside, read from and written to JSON by the SPEC's names."""

    model_config = ConfigDict(frozen=True, validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)


def wire(name: str) -> Any:
    """A field whose JSON name is `name` (a validation alias, not `alias`, so type checkers still
    see the field's own name in the constructor)."""
    return Field(validation_alias=name, serialization_alias=name)


def chat_field() -> Any:
    return wire("thread_id")


def step_field() -> Any:
    return wire("snapshot_id")


def absent_when_none() -> Any:
    """A field left out of the JSON when it has no value (a message without tool calls has no
    "tool_calls" key at all), as the API has always sent it."""
    return Field(default=None, exclude_if=lambda value: value is None)


# --- a saved message, as a person reads it -------------------------------------------------------

class SideEffect(Shape):
    """A change to the world a tool made (a file written, ...): a restore does not undo it."""

    kind: str
    tool: str
    args: dict[str, Any]


class ToolCallView(Shape):
    name: str | None
    args: dict[str, Any] | None
    text: str  # "remember (fact: tea)"


class MessageView(Shape):
    role: str
    text: str
    tool_calls: list[ToolCallView] | None = absent_when_none()
    name: str | None = absent_when_none()
    side_effect: SideEffect | None = absent_when_none()
    said: str  # the words, or the calls it makes when it has none


class _Position(Shape):
    position: int  # counted from 0


class PlacedMessage(MessageView, _Position):
    """A message with its position; bases in this order put `position` first in the JSON."""


class ChangedMessage(Shape):
    position: int
    a: MessageView
    b: MessageView


# --- steps ----------------------------------------------------------------------------------------

class StepView(Shape):
    """A step as a list shows it, with its label ("turn 2, step 1"), never its state."""

    step_id: str = step_field()
    chat_id: str = chat_field()
    turn_index: int
    iteration: int
    label: str
    created_at: float
    model: str
    questions: list[str]
    message_count: int
    size: int
    truncated: bool
    # What the step did: in words ("used calculator", English) and as the step words' terms, for
    # a surface to word it in its reader's language (kazma_ui.step_views.step_action).
    action: str = ""
    did: dict[str, Any] | None = None


class TurnStep(Shape):
    step: int  # the iteration, numbered within its turn
    step_id: str = step_field()
    label: str
    truncated: bool
    action: str = ""
    did: dict[str, Any] | None = None


class Turn(Shape):
    turn_index: int
    questions: list[str]
    steps: list[TurnStep]


class StepList(Shape):
    """A chat's steps in capture order, and its turns, each once with its steps."""

    chat_id: str = chat_field()
    steps: list[StepView] = wire("snapshots")
    turns: list[Turn]


class ChatWithSteps(Shape):
    chat_id: str = chat_field()
    title: str
    steps: int
    bytes: int
    last_at: float


class StepDetail(Shape):
    """One step with its messages and the state's other fields, as they were saved."""

    step: StepView = wire("snapshot")
    messages: list[MessageView]
    plan: Any = None
    routing: Any = None
    cost: Any = None
    scratchpad: Any = None
    model: Any = None
    gates: Any = None
    # A page of the messages (?before=&limit=): the position of its first, and whether older remain.
    first: int = 0
    more: bool = False
    # The messages from this position on are new since the chat's previous step (what this step added).
    added_from: int = 0


# --- restore, undo, fork, clear -------------------------------------------------------------------

class FileView(Shape):
    """A file a restore with files would change in the person's folder."""

    path: str
    change: str  # restored | removed
    changed_since: bool  # changed by something other than this chat's tools: a restore asks for "force"
    diff: str | None = None  # a short unified diff, for text


class RestorePreview(Shape):
    """What a restore to a step would take back, and the side effects it will not undo."""

    step: StepView = wire("snapshot")
    side_effects: list[SideEffect]
    later_steps: int
    later_turns: int
    restorable: bool
    files: list[FileView] = []  # what "what": "files" or "both" would change (empty: nothing)


class UndoOffer(Shape):
    step_id: str = step_field()  # the step the restore went to
    expires_at: float


class Restored(Shape):
    chat_id: str = chat_field()
    step: StepView = wire("snapshot")
    turn_index: int
    removed_steps: int
    undo: UndoOffer | None = None
    what: str = "conversation"  # conversation | files | both
    files: list[FileView] = []  # the files it changed


class PutBack(Shape):
    """How much of each kind an undo put back."""

    messages: int
    memories: int
    forgotten_again: int  # facts the restore had brought back, forgotten again
    cards: int
    steps: int
    files: int | None = absent_when_none()  # files put back as they were before the restore (a restore with files)


class Undone(Shape):
    chat_id: str = chat_field()
    undone_step_id: str = wire("undone_snapshot_id")
    turn_index: int
    back: PutBack


class Lineage(Shape):
    """Where a fork came from: its source chat and step (and the step's turn and iteration)."""

    chat_id: str = chat_field()
    step_id: str | None = step_field()
    turn_index: int | None = None
    iteration: int | None = None


class Forked(Shape):
    chat_id: str = chat_field()  # the new chat
    title: str
    forked_from: Lineage | None
    step_id: str | None = step_field()  # the new chat's copy of the step
    files: list[FileView] = []  # with "files": true, the step's files put in the forker's folder


class Cleared(Shape):
    chat_id: str = chat_field()
    deleted: int


# --- compare --------------------------------------------------------------------------------------

class ComparedStep(Shape):
    """One side of a comparison: the step, with the model and message count of its state."""

    step_id: str = step_field()
    chat_id: str = chat_field()
    turn_index: int
    iteration: int
    created_at: float
    model: str | None
    questions: list[str]
    message_count: int
    size: int
    truncated: bool
    label: str


class MessageChanges(Shape):
    added: list[PlacedMessage]
    removed: list[PlacedMessage]
    changed: list[ChangedMessage]  # same position, different message
    same: int


class Sides(Shape):
    a: Any
    b: Any


class Comparison(Shape):
    a: ComparedStep
    b: ComparedStep
    messages: MessageChanges
    plan: Sides
    routing: Sides
    cost: dict[str, int | float]  # b's minus a's, per counter
    model: Sides
    text: str  # the summary, short enough for a chat message
