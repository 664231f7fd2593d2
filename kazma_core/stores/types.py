"""The domain's records, whatever store or engine keeps them (steps: stores/snapshots.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kazma_core.catalogue.errors import Said

# additional_kwargs of an AI message that closes a turn without an answer: {"role", "text"} of its row
NOTE_KEY = "kazma_note"


@dataclass(frozen=True)
class User:
    id: str
    name: str
    role: str
    lang: str


@dataclass(frozen=True)
class Chat:
    id: str
    owner_id: str
    title: str
    created_at: float
    last_turn: int
    forked_from: dict[str, Any] | None


@dataclass(frozen=True)
class Place:
    """Where a chat lives in a chat app: the platform, and a whole chat or a thread or topic there."""

    platform: str  # telegram | discord | slack
    place: str  # chat | thread | topic
    label: str  # the thread's or topic's name, as the platform shows it ("" for a whole chat)


@dataclass(frozen=True)
class TranscriptRow:
    id: int
    turn_index: int
    role: str
    text: str
    created_at: float


@dataclass(frozen=True)
class Fact:
    id: int
    turn_index: int
    text: str


@dataclass(frozen=True)
class Card:
    id: str
    chat_id: str
    turn_index: int
    tool_call_id: str
    tool: str
    args: dict[str, Any]
    status: str
    created_at: float
    expires_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "card_id": self.id,
            "tool": self.tool,
            "args": self.args,
            "status": self.status,
            "turn_index": self.turn_index,
            "expires_at": self.expires_at,
        }


@dataclass
class TurnStart:
    """What starting a turn checks, read in the transaction that takes the chat's lease."""

    chat: Chat | None = None
    pending: list[Card] = field(default_factory=list)  # its approval cards still waiting
    undo_ready: bool = False  # a restore's undo the turn ends


@dataclass(frozen=True)
class Alert:
    """An operator alert: shown to the owner until acknowledged."""

    id: int
    kind: str
    message: str
    created_at: float
    acknowledged_at: float | None
    # The sentence's id in the catalogue's errors section and its parameters (alerts stored before
    # they were kept have none: their English message is all there is).
    message_id: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def text(self, lang: str) -> str:
        """The alert in this language (its stored English when it was stored without its sentence's id)."""
        return Said(self.message_id, self.params).text(lang) if self.message_id is not None else self.message

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "message": self.message,
            "message_id": self.message_id,
            "params": self.params,
            "created_at": self.created_at,
            "acknowledged_at": self.acknowledged_at,
        }


@dataclass(frozen=True)
class AuditRow:
    at: float
    user_id: str
    surface: str
    chat_id: str
    step_id: str | None
    action: str
    outcome: str
    checkpoint_before: str | None
    new_chat_id: str | None
    detail: str | None
