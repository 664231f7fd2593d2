"""The contract of each store, whatever engine keeps it (SQLite files or PostgreSQL).

`Core` and every caller depend on these; the SQL implementations (``audit_sql``,
``conversation_sql``, ``snapshots_sql``) run on either engine (``engine.Database``), chosen by
``database.url`` in ``backends``. The step store's contract is ``snapshots.SnapshotStore``; the
records they exchange are in ``types``. kazma.db's small stores, one per concern (``app_sql``),
are each their own contract: see why there.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable
from typing import Protocol

from langchain_core.messages import AnyMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from kazma_core.stores.engine import Conn, Database
from kazma_core.stores.types import AuditRow

# A write of the caller's that commits with the conversation store's next put of a chat.
Also = Callable[[Conn], None]
# The leases whose holder, gone, may have left a turn cut off: a turn's, and the one that was closing
# it when the database went away (`TurnRunner.close_interrupted` keeps its lease for the sweep).
# Expired, such a lease is taken only to close that turn (purpose RECOVER: the sweep, Core.recover).
RECOVER = "recover"
CUT_TURNS = ("turn", RECOVER)
# What becomes of the transcript rows a rewind takes back (by id), in the same transaction.
TakenBack = Callable[[Conn, list[int]], None]
# A caller's writes that give up the older part of a chat's history, run first in the transaction
# of ConversationStore.drop_history: the newest checkpoint that goes with every older one ("" for
# none), or None when there was nothing to give up (and it changed nothing).
GiveUp = Callable[[Conn], str | None]


class AuditStore(Protocol):
    """Who restored, forked or cleared what, from where, and how it went (refusals too)."""

    db: Database  # the health check probes it

    async def record(self, row: AuditRow) -> None:
        ...

    async def rows(self, chat_id: str | None = None) -> list[AuditRow]:
        ...

    async def close(self) -> None:
        ...


class ConversationStore(BaseCheckpointSaver[int], abc.ABC):
    """LangGraph's checkpointer for the agent's graph, which also keeps each chat's transcript:
    the rows of a put's new messages commit with it."""

    @abc.abstractmethod
    def same_transaction(
        self, thread_id: str, also: Also | None = None, *, fork_from: str | None = None, rewind: bool = False,
        taken_back: TakenBack | None = None, last_turn_rows: bool = False,
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """Make `also` commit with the next checkpoint put of `thread_id` in this task (a restore,
        a fork: `rewind`, the rows of messages the new state no longer holds are taken back;
        `last_turn_rows`, its last turn's shown messages without a row get one)."""

    @abc.abstractmethod
    def gathering(self, thread_id: str) -> contextlib.AbstractAsyncContextManager[None]:
        """While a run of the chat's graph goes on in this task, its tasks' writes commit with the
        checkpoint that follows them."""

    @abc.abstractmethod
    async def head(self, thread_id: str) -> tuple[str, list[AnyMessage]] | None:
        """The chat's newest checkpoint id and its messages."""

    @abc.abstractmethod
    async def body_digest(self, thread_id: str, checkpoint_id: str, index: int) -> bytes | None:
        """The digest of the body of message `index` of a checkpoint."""

    @abc.abstractmethod
    async def adelete_thread(self, thread_id: str, also: Also | None = None) -> None:
        """Delete a chat's checkpoints, writes and bodies (with `also` in the same transaction)."""

    @abc.abstractmethod
    async def drop_after(self, thread_id: str, checkpoint_id: str, also: Also) -> bool:
        """Make `checkpoint_id` the chat's newest again (an undo); False when it is gone."""

    @abc.abstractmethod
    async def drop_history(self, thread_id: str, give_up: GiveUp) -> bool:
        """The chat's history up to the checkpoint `give_up` names goes, with every body nothing
        refers to any more (a restore's undo given up); False when there was nothing to give up."""

    @abc.abstractmethod
    async def trim(self, thread_id: str, keep: int, *, per_namespace: bool = False) -> int:
        """Keep the newest `keep` checkpoints of a chat; how many went."""

    @abc.abstractmethod
    async def latest_id(self, thread_id: str) -> str | None:
        """The id of a chat's newest checkpoint, without loading it."""

    @abc.abstractmethod
    async def thread_ids(self) -> set[str]:
        """Every chat that has checkpoints."""
