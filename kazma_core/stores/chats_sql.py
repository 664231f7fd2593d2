"""Chats: their rows (title, owner, where a fork came from), what a turn reads as it starts, search and sizes."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kazma_core.rewind.rows import READY, UNDO_READY
from kazma_core.stores.cards_sql import PENDING_CARDS, card_of
from kazma_core.stores.engine import Conn, Database, Row
from kazma_core.stores.interfaces import Also
from kazma_core.stores.transcript_sql import PLACE, SHARED_ROWS, body_text, release
from kazma_core.stores.types import Chat, TurnStart


def delete_chat_row(chat_id: str) -> Callable[[Conn], None]:
    """The chat's row (its transcript, facts and cards go with it), to delete with its conversation."""

    def write(conn: Conn) -> None:
        release(conn, chat_id)  # forks sharing its rows make them their own first
        conn.execute("DELETE FROM chats WHERE id = $1", (chat_id,))

    return write


def chat_of(row: Row) -> Chat:
    forked = None
    if row["forked_from_chat"]:
        forked = {
            "thread_id": row["forked_from_chat"],
            "snapshot_id": row["forked_from_step"],
            "turn_index": row["forked_from_turn"],
            "iteration": row["forked_from_iteration"],
        }
    return Chat(row["id"], row["owner_id"], row["title"], row["created_at"], row["last_turn"], forked)


@dataclass(frozen=True)
class ChatStore:
    """kazma.db's chats; a chat's row going takes its transcript, facts and cards with it."""

    db: Database

    def chat_deletion(self, chat_id: str) -> Also:
        """The chat's row (its transcript, facts and cards go with it), to delete with its conversation."""
        return delete_chat_row(chat_id)

    async def create_chat(
        self, owner_id: str, title: str, *, chat_id: str | None = None, forked_from: dict[str, Any] | None = None
    ) -> Chat:
        chat_id = chat_id or uuid.uuid4().hex
        fork = forked_from or {}

        def write(conn: Conn) -> Chat:
            conn.execute(
                "INSERT INTO chats (id, owner_id, title, created_at, last_turn, forked_from_chat, forked_from_step,"
                " forked_from_turn, forked_from_iteration) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                (
                    chat_id, owner_id, title, time.time(), fork.get("turn_index", 0),
                    fork.get("thread_id"), fork.get("snapshot_id"), fork.get("turn_index"), fork.get("iteration"),
                ),
            )
            return chat_of(conn.execute("SELECT * FROM chats WHERE id = $1", (chat_id,)).fetchone())

        return await self.db.tx(write)

    def turn_start(self, chat_id: str, into: TurnStart) -> Also:
        """A read of what starting a turn checks (the chat, its pending cards, an undo ready) into
        `into`, as the chat's lease is taken (acquire_lease's `also`)."""

        def read(conn: Conn) -> None:
            # One statement for the chat and whether it has cards waiting or an undo ready (a turn
            # starts in a chat with neither, nearly always); the cards only when there are some.
            row = conn.execute(
                f"SELECT c.*, EXISTS ({PENDING_CARDS}) AS has_cards, EXISTS ({UNDO_READY}) AS has_undo"
                " FROM chats c WHERE c.id = $1",
                (chat_id, READY),
            ).fetchone()
            into.chat = chat_of(row) if row else None
            cards = conn.execute(f"{PENDING_CARDS} ORDER BY created_at", (chat_id,)).fetchall() if row and row["has_cards"] else []
            into.pending = [card_of(r) for r in cards]
            into.undo_ready = bool(row and row["has_undo"])

        return read

    async def get_chat(self, chat_id: str) -> Chat | None:
        row = await self.db.run(lambda c: c.execute("SELECT * FROM chats WHERE id = $1", (chat_id,)).fetchone(), small=True)
        return chat_of(row) if row else None

    async def list_chats(self, owner_id: str) -> list[Chat]:
        rows = await self.db.run(
            lambda c: c.execute(
                "SELECT * FROM chats WHERE owner_id = $1 ORDER BY created_at DESC, id", (owner_id,)
            ).fetchall()
        )
        return [chat_of(r) for r in rows]

    async def rename_chat(self, chat_id: str, title: str) -> Chat | None:
        def write(conn: Conn) -> Chat | None:
            conn.execute("UPDATE chats SET title = $1 WHERE id = $2", (title, chat_id))
            row = conn.execute("SELECT * FROM chats WHERE id = $1", (chat_id,)).fetchone()
            return chat_of(row) if row else None

        return await self.db.tx(write)

    async def title_untitled(self, chat_id: str, untitled: str, title: str) -> bool:
        """Give the chat this title if it still has the placeholder one; True when it did."""

        def write(conn: Conn) -> bool:
            changed = conn.execute(
                "UPDATE chats SET title = $1 WHERE id = $2 AND title = $3", (title, chat_id, untitled)
            ).rowcount
            return bool(changed)

        return await self.db.tx(write)

    async def search_chats(self, owner_id: str, query: str) -> list[tuple[Chat, str]]:
        """The owner's chats whose title or a message holds the query (case folded), newest first,
        each with the first matching message's text ("" when only the title matched).

        A message's words may be kept compressed in its body, so they are matched here rather
        than by SQL: one read of the owner's transcript, the same on either engine."""
        wanted = query.casefold()

        def read(conn: Conn) -> list[tuple[Chat, str]]:
            chats = conn.execute(
                "SELECT * FROM chats WHERE owner_id = $1 ORDER BY created_at DESC, id", (owner_id,)
            ).fetchall()
            # Each chat's rows, its own and those a fork shares with its source (in the source's space).
            rows = conn.execute(
                "SELECT r.chat_id, r.text, b.body FROM ("
                f" SELECT t.chat_id, t.chat_id AS home, t.text, t.body_n, {PLACE} AS k FROM transcript t"
                " JOIN chats c ON c.id = t.chat_id WHERE c.owner_id = $1 AND t.role IN ('user', 'assistant')"
                f" UNION ALL SELECT s.chat_id, t.chat_id, t.text, t.body_n, {PLACE} FROM {SHARED_ROWS.format(chat='s.chat_id')}"
                " AND t.role IN ('user', 'assistant') AND s.chat_id IN (SELECT id FROM chats c WHERE c.owner_id = $1)) r"
                " LEFT JOIN conv_spaces s ON s.thread_id = r.home"
                " LEFT JOIN conv_bodies b ON b.chat_id = coalesce(s.space, r.home) AND b.n = r.body_n ORDER BY r.k",
                (owner_id,),
            )
            found: dict[str, str] = {}
            for chat_id, text, body in rows.fetchall():
                if chat_id in found:
                    continue
                words = text or (body_text(body) if body is not None else "")
                if wanted in words.casefold():
                    found[chat_id] = words
            return [
                (chat_of(r), found.get(r["id"], ""))
                for r in chats
                if r["id"] in found or wanted in r["title"].casefold()
            ]

        return await self.db.run(read)

    async def chat_ids(self) -> set[str]:
        """The id of every chat, whoever owns it."""
        rows = await self.db.run(lambda c: c.execute("SELECT id FROM chats").fetchall())
        return {r["id"] for r in rows}

    async def owner_text_bytes(self, owner_id: str) -> tuple[list[str], int]:
        """A user's chats, and the bytes of their conversations, transcripts and memories."""

        def read(conn: Conn) -> tuple[list[str], int]:
            chats = [r["id"] for r in conn.execute("SELECT id FROM chats WHERE owner_id = $1", (owner_id,))]
            (text,) = conn.execute(
                f"SELECT COALESCE(SUM({self.db.octets('t.text')}), 0) FROM transcript t"
                " JOIN chats c ON c.id = t.chat_id WHERE c.owner_id = $1", (owner_id,),
            ).fetchone()
            # The conversation's messages, kept once in the body space of each chat it began
            # (a fork refers to its source's space, counted there). `b.n > 0` (every number is)
            # has SQLite walk the bodies in number order, the order they were written: found by
            # digest, the same sum read them at random (150 ms instead of 5 at 10,000 messages).
            (conversation,) = conn.execute(
                "SELECT COALESCE(SUM(length(b.body)), 0) FROM conv_bodies b"
                " JOIN chats c ON c.id = b.chat_id WHERE c.owner_id = $1 AND b.n > 0", (owner_id,),
            ).fetchone()
            (facts,) = conn.execute(
                f"SELECT COALESCE(SUM({self.db.octets('f.text')}), 0) FROM facts f"
                " JOIN chats c ON c.id = f.chat_id WHERE c.owner_id = $1", (owner_id,),
            ).fetchone()
            return chats, int(text) + int(conversation) + int(facts)

        return await self.db.run(read)

    async def delete_chat(self, chat_id: str) -> None:
        await self.db.tx(delete_chat_row(chat_id))
