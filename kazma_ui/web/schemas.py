"""Typed request and response bodies of the HTTP API (the OpenAPI description comes from these)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kazma_ui.rewind_results import Lineage


class ErrorBody(BaseModel):
    error: str
    message: str
    # The sentence's id in the catalogue (kazma_core/catalogue/errors.py); the body's other fields
    # are its parameters, so a client can say it in the person's language.
    message_id: str | None = None
    gates: list[dict[str, Any]] | None = None


class LivesIn(BaseModel):
    """Where a chat lives in a chat app: a whole chat there, or a thread or topic opened for a fork."""

    platform: Literal["telegram", "discord", "slack"]
    place: Literal["chat", "thread", "topic"]
    name: str  # the thread's or topic's name ("" for a whole chat)


class ChatOut(BaseModel):
    thread_id: str
    title: str
    created_at: float
    turns: int
    forked_from: Lineage | None
    lives_in: LivesIn | None = None  # null: a chat of the web (or the terminal) only
    # How many versions (edits, regenerates) of this conversation there are; the list shows the newest once.
    versions: int = 1
    found: str | None = None  # a search (?q=): the first message that holds the words ("" when the title did)


class ChatList(BaseModel):
    chats: list[ChatOut]


class NewChat(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str | None = Field(default=None, max_length=200)


class Rename(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(max_length=1000)  # the limit itself is the service's (a 422 naming it)


class NewMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Some text besides spaces. Its longest is a setting (limits.max_message_chars), checked by the
    # turn runner (a 422 that names it); the app writes the running value into its OpenAPI description.
    text: str = Field(min_length=1, json_schema_extra={"pattern": r"\S"})


class Gate(BaseModel):
    card_id: str
    tool: str
    args: dict[str, Any]
    status: str
    turn_index: int
    expires_at: float


class TurnOut(BaseModel):
    reply: str
    turn_index: int
    status: Literal["done", "awaiting_approval", "stopped"]
    gates: list[Gate]


class EditedMessage(BaseModel):
    """The edited text of a person's message (its longest: limits.max_message_chars, as a message's)."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, json_schema_extra={"pattern": r"\S"})


class VersionOut(BaseModel):
    """A new version of the conversation (an edit or a regenerate) and its first turn's answer."""

    thread_id: str  # the new version
    version_of: str  # the chat it came from, not touched
    reply: str
    turn_index: int
    status: Literal["done", "awaiting_approval", "stopped"]
    gates: list[Gate]


class TurnVersionsOut(BaseModel):
    turn_index: int
    versions: list[str]  # a chat holding each version of this turn, oldest first
    current: int  # the position in `versions` of the chat asked about


class VersionChat(ChatOut):
    """One chat of a conversation's versions: which chat it was made from and anew from which turn
    (both null for the conversation's first chat)."""

    version_of: str | None = None
    turn_index: int | None = None


class VersionList(BaseModel):
    turns: list[TurnVersionsOut]
    # Every version of the conversation you have, oldest first (empty when it has one version).
    chats: list[VersionChat] = []


class Accepted(BaseModel):
    status: Literal["running"]
    thread_id: str


class ToolBlock(BaseModel):
    """One tool call of a turn, as the `tool` event shows it (kazma_core/agent/activity.py)."""

    turn_index: int
    call_id: str
    name: str
    label: str  # the tool in people's words (English); `label_id` names it in the catalogue
    label_id: str
    state: Literal["running", "done", "failed"]
    args: dict[str, Any]
    result: str  # its first 2,000 characters
    result_chars: int  # its whole length
    said: str = ""  # what the model said before asking for it (on a reply's first call), shown above the block


class TranscriptMessage(BaseModel):
    id: int
    turn_index: int
    role: str
    text: str
    created_at: float
    # An answer's Markdown rendered and sanitised (kazma_ui/web/markdown.py); null for other roles.
    html: str | None = None
    tools: list[ToolBlock] | None = None  # on a turn's answer row: the tool calls of that turn, in order


class Transcript(BaseModel):
    thread_id: str
    messages: list[TranscriptMessage]
    running: bool = False  # a turn of this chat runs now (it can be stopped)
    more: bool = False  # a page: older messages come before its first (ask again with before=<its id>)


class ApprovalList(BaseModel):
    approvals: list[Gate]


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decision: Literal["approve", "deny"]


class Done(BaseModel):
    ok: bool = True


class Stopped(BaseModel):
    stopped: bool  # a turn was running and has ended; false when nothing ran
    thread_id: str
