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


class Accepted(BaseModel):
    status: Literal["running"]
    thread_id: str


class TranscriptMessage(BaseModel):
    id: int
    turn_index: int
    role: str
    text: str
    created_at: float


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
