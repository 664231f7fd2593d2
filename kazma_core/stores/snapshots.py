"""The time-travel step store: its data shapes and the contract every backend keeps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kazma_core.stores.engine import Database
from kazma_core.stores.files_sql import SqlFileStore


@dataclass(frozen=True)
class Budgets:
    """The limits a write enforces inside its own transaction."""

    max_snapshots: int
    max_global_snapshots: int
    max_per_turn: int
    max_thread_bytes: int
    max_total_bytes: int
    max_snapshot_bytes: int


@dataclass
class NewStep:
    """A step about to be written.

    Messages are given by id with an encoder, so a backend serialises only the messages
    it has not stored for this chat yet (each step holds the whole conversation).
    """

    id: str
    chat_id: str
    turn_index: int
    iteration: int
    created_at: float
    model: str
    questions: list[str]
    fields: dict[str, Any]
    message_ids: Sequence[str]
    encode: Callable[[int], bytes]
    # Called with the bodies the chat has not stored yet when they and the step's own fields
    # come to more than max_snapshot_bytes; returns them cut down. The step is then flagged truncated.
    shrink: Callable[[list[bytes], int], list[bytes]] = field(default=lambda bodies, limit: bodies)
    # What the step did, in the step words' terms ({"kind": "used", "tools": [...]}, ...): see
    # kazma_core.time_travel.step_did; kept beside the step, so a list labels it without its state.
    did: dict[str, Any] = field(default_factory=dict)
    # About how many bytes the messages from the given place on take, counted until past the given
    # budget (messages.rough_bytes): what tells the store that a step adds little. By default, much.
    rough_bytes: Callable[[int, int], int] = field(default=lambda start, budget: budget + 1)


@dataclass(frozen=True)
class StepInfo:
    """What a list shows: stored beside the step, so listing never parses a state."""

    id: str
    chat_id: str
    seq: int
    turn_index: int
    iteration: int
    created_at: float
    model: str
    questions: list[str]
    message_count: int
    size: int
    truncated: bool
    did: dict[str, Any] | None = None  # what the step did (NewStep.did); None for a step saved before it was kept

    def to_dict(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.id,
            "thread_id": self.chat_id,
            "turn_index": self.turn_index,
            "iteration": self.iteration,
            "created_at": self.created_at,
            "model": self.model,
            "questions": self.questions,
            "message_count": self.message_count,
            "size": self.size,
            "truncated": self.truncated,
        }


@dataclass(frozen=True)
class Step:
    """A step as saved; with a window, its messages are that page of them only."""

    info: StepInfo
    state: dict[str, Any]
    first: int = 0  # the position of state["messages"][0] among the step's messages
    added_from: int = 0  # the messages from this position on are new since the chat's previous step


@dataclass(frozen=True)
class StepHead:
    """A step without its messages: what a restore or a fork needs to find them in the
    conversation by reference (their count, and the id and digest of the last one)."""

    info: StepInfo
    fields: dict[str, Any]
    tail_key: str | None
    tail_digest: bytes | None


@dataclass(frozen=True)
class ThreadSummary:
    chat_id: str
    steps: int
    bytes: int
    last_at: float


@dataclass(frozen=True)
class PutResult:
    info: StepInfo
    evicted: list[str]


class SnapshotStore(Protocol):
    """A backend keeps every budget inside the write's transaction, with counters, never scans."""

    db: Database  # the health check probes it
    files: SqlFileStore  # the files the chats' tools wrote, in the same database (stores/files_sql.py)

    async def put(self, step: NewStep, budgets: Budgets) -> PutResult: ...

    async def copy(self, src_chat: str, step_id: str, dst_chat: str, new_id: str, budgets: Budgets) -> StepInfo | None: ...

    async def list_steps(self, chat_id: str) -> list[StepInfo]: ...

    async def usage(self, chat_id: str | None = None) -> tuple[int, int]: ...

    async def bytes_of(self, chat_ids: list[str]) -> int:
        """The bytes kept for these chats together (a user's, for their quota), in one read."""
        ...

    async def get(self, chat_id: str, step_id: str, window: tuple[int, int] | None = None) -> Step | None:
        """The step; with `window` (start, stop), only its messages at positions start..stop-1."""
        ...

    async def head(self, chat_id: str, step_id: str) -> StepHead | None: ...

    async def find(self, chat_id: str, prefix: str, limit: int = 10) -> list[StepInfo]: ...

    async def threads(self) -> list[ThreadSummary]: ...

    async def delete_chat(self, chat_id: str) -> int: ...

    async def keep_after(self, chat_id: str, step_id: str, restore_id: str) -> int:
        """Move the steps after a restore's step aside, for its undo."""
        ...

    async def put_back(self, chat_id: str, restore_id: str) -> int: ...

    async def drop_kept(self, chat_id: str) -> int: ...

    async def drop_kept_except(self, restore_ids: set[str]) -> int: ...

    async def delete_after(self, chat_id: str, step_id: str) -> int: ...

    async def delete_from_turn(self, chat_id: str, turn_index: int) -> int: ...

    async def delete_older_than(self, cutoff: float) -> int: ...

    async def purge_wal(self) -> None: ...

    async def close(self) -> None: ...
