"""The contract of each store, whatever engine keeps it (SQLite files or PostgreSQL).

`Core` and every caller depend on these; the SQL implementations (``app_sql``,
``audit_sql``, ``conversation_sql``, ``snapshots_sql``) run on either engine
(``engine.Database``), chosen by ``database.url`` in ``backends``. The step store's
contract is ``snapshots.SnapshotStore``; the records they exchange are in ``types``.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable
from typing import Any, Protocol

from langchain_core.messages import AnyMessage
from langgraph.checkpoint.base import BaseCheckpointSaver

from kazma_core.stores.engine import Conn, Database
from kazma_core.stores.types import Alert, AuditRow, Card, Chat, Fact, Place, TranscriptRow, TurnStart, User

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


class AppStore(Protocol):
    """Users, tokens, identities, chats and their places, transcript, facts, approval cards, turn leases,
    settings overrides and operator alerts: everything of a deployment except steps and the audit trail."""

    # The database it runs on: the conversation store and a restore's rows share its transactions.
    db: Database

    async def close(self) -> None:
        ...

    async def purge_deleted(self) -> None:
        """What was deleted leaves the database's files now (secure deletion)."""
        ...

    def marker_row(self, chat_id: str, turn_index: int, role: str, text: str) -> Also:
        """A transcript row that is not a message of the conversation (a reset's marker), to commit
        with the chat's next checkpoint (ConversationStore.same_transaction)."""
        ...

    def chat_deletion(self, chat_id: str) -> Also:
        """The chat's row (its transcript, facts and cards go with it), to delete with its conversation."""
        ...

    async def add_user(self, name: str, role: str = "user") -> User:
        ...

    async def user_by_name(self, name: str) -> User | None:
        ...

    async def user_by_id(self, user_id: str) -> User | None:
        ...

    async def owner(self) -> User | None:
        ...

    async def count_users(self) -> int:
        ...

    async def users(self) -> list[User]:
        ...

    async def count_owners(self) -> int:
        ...

    async def delete_user(self, user_id: str) -> None:
        """A user with their tokens and linked identities; their chats must be deleted first."""
        ...

    async def set_user_lang(self, user_id: str, lang: str) -> None:
        ...

    async def issue_token(self, user_id: str, kind: str = "api", ttl: float | None = None) -> str:
        ...

    async def user_for_token(
        self, token: str, kind: str = "api", consume: bool = False, max_age: float | None = None
    ) -> User | None:
        """The token's user while the token lives: not past its expiry, nor older than max_age seconds."""
        ...

    async def revoke_token(self, token: str) -> bool:
        ...

    async def revoke_tokens(self, user_id: str) -> int:
        """Every token of a user (API tokens, web sessions, sign-in links): none works after this."""
        ...

    async def link_identity(self, platform_key: str, user_id: str) -> None:
        ...

    async def user_for_identity(self, platform_key: str) -> User | None:
        ...

    async def bound_chat(self, platform_chat: str) -> Chat | None:
        ...

    async def bind_chat(
        self, platform_chat: str, chat_id: str, is_group: bool, place: str = "chat", label: str = ""
    ) -> None:
        """Bind a platform chat to a Kazma chat; `place` is chat, thread or topic, `label` its name there."""
        ...

    async def place_of(self, platform_chat: str) -> str | None:
        """What a bound platform chat is (chat, thread or topic); None when it is not bound."""
        ...

    async def places(self, owner_id: str) -> dict[str, Place]:
        """Where each of a user's chats lives in a chat app (a thread or topic first), by chat id."""
        ...

    async def create_chat(
        self, owner_id: str, title: str, *, chat_id: str | None = None, forked_from: dict[str, Any] | None = None
    ) -> Chat:
        ...

    def turn_start(self, chat_id: str, into: TurnStart) -> Also:
        """A read of what starting a turn checks (the chat, its pending cards, an undo ready) into
        `into`, as the chat's lease is taken (acquire_lease's `also`)."""
        ...

    async def get_chat(self, chat_id: str) -> Chat | None:
        ...

    async def list_chats(self, owner_id: str) -> list[Chat]:
        ...

    async def rename_chat(self, chat_id: str, title: str) -> Chat | None:
        ...

    async def title_untitled(self, chat_id: str, untitled: str, title: str) -> bool:
        """Give the chat this title if it still has the placeholder one; True when it did."""
        ...

    async def search_chats(self, owner_id: str, query: str) -> list[tuple[Chat, str]]:
        """The owner's chats whose title or a message holds the query, newest first, each with the
        first matching message's text ("" when only the title matched)."""
        ...

    async def chat_ids(self) -> set[str]:
        """The id of every chat, whoever owns it."""
        ...

    async def owner_text_bytes(self, owner_id: str) -> tuple[list[str], int]:
        """A user's chats, and the bytes of their conversations, transcripts and memories."""
        ...

    async def delete_chat(self, chat_id: str) -> None:
        ...

    async def transcript(
        self, chat_id: str, *, before: int | None = None, limit: int | None = None
    ) -> list[TranscriptRow]:
        """The chat's visible messages, oldest first; a row that refers to a message body shows that
        body's text. With `limit`, only the newest `limit` rows (of those before row id `before`)."""
        ...

    async def add_fact(self, chat_id: str, turn_index: int, iteration: int, text: str) -> None:
        ...

    async def forget_fact(self, chat_id: str, turn_index: int, iteration: int, text: str) -> int:
        """The agent's forget: marked with its step, so a restore to before it brings the fact back."""
        ...

    async def delete_facts(self, chat_id: str, from_turn: int = 0) -> int:
        ...

    async def delete_fact(self, chat_id: str, fact_id: int) -> Fact | None:
        """A person's forget: the fact is gone for good (returns it, or None when there was none)."""
        ...

    async def facts(self, chat_id: str) -> list[Fact]:
        ...

    async def memory_on(self, chat_id: str) -> bool:
        ...

    async def set_memory(self, chat_id: str, on: bool) -> None:
        ...

    async def open_card(
        self, chat_id: str, turn_index: int, tool_call_id: str, tool: str, args: dict[str, Any], ttl: float
    ) -> Card:
        """Create the card for a gated tool call, or return the one it already has."""
        ...

    async def cards(self, chat_id: str, status: str | None = None) -> list[Card]:
        ...

    async def card(self, chat_id: str, card_id: str) -> Card | None:
        ...

    async def close_card(self, card_id: str, status: str, by: str | None) -> bool:
        """Move a pending card to its outcome; False when it was no longer pending."""
        ...

    async def acquire_lease(
        self, chat_id: str, holder: str, purpose: str, ttl: float, *, finishing: bool = False, also: Also | None = None
    ) -> bool:
        """Take the chat's lease unless another holds it; unless `finishing`, not while a restore
        of the chat is still to be finished (its steps part was cut: whoever finishes it first).
        An expired lease is taken over, except one of CUT_TURNS by anything but RECOVER: its
        holder may have stalled mid-turn, and whatever ran next over its cut turn would leave the
        step of an answer never saved restorable (the sweep drops it as it closes the turn).
        `also` reads what the holder needs first, once the lease is taken: in the same transaction on
        SQLite, just after it on PostgreSQL."""
        ...

    async def renew_lease(self, chat_id: str, holder: str, ttl: float) -> bool:
        ...

    async def release_lease(self, chat_id: str, holder: str) -> None:
        """End `holder`'s lease: its own at the end of a turn, or a dead holder's (once proven gone)."""
        ...

    async def lease_holders(self) -> list[tuple[str, str, str]]:
        """(chat_id, holder, purpose) of every lease row, live or not."""
        ...

    async def expired_leases(self, now: float) -> list[tuple[str, str, str]]:
        """(chat_id, holder, purpose) of the leases not renewed in time (their holders are gone or stalled)."""
        ...

    async def lease(self, chat_id: str) -> tuple[str, str] | None:
        """(holder, purpose) of the live lease on a chat, if any."""
        ...

    async def set_override(self, key: str, value: Any) -> None:
        ...

    async def overrides(self) -> dict[str, Any]:
        ...

    async def add_alert(self, kind: str, message: str, at: float | None = None) -> Alert:
        ...

    async def alerts(self, include_acknowledged: bool = False) -> list[Alert]:
        """Newest first; only the ones not yet acknowledged unless asked."""
        ...

    async def acknowledge_alert(self, alert_id: int, at: float | None = None) -> Alert | None:
        """Mark an alert seen (the first acknowledgement's time is kept); None when there is no such alert."""
        ...


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
        taken_back: TakenBack | None = None,
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """Make `also` commit with the next checkpoint put of `thread_id` in this task (a restore,
        a fork: `rewind`, the rows of messages the new state no longer holds are taken back)."""

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
