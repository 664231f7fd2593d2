"""Approval cards: a gated tool call waiting for a person's yes or no, and its outcome."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

import orjson

from kazma_core.stores.engine import Conn, Database, Row
from kazma_core.stores.types import Card


@dataclass(frozen=True)
class CardStore:
    """kazma.db's approval cards, one per gated tool call."""

    db: Database

    async def open_card(
        self, chat_id: str, turn_index: int, tool_call_id: str, tool: str, args: dict[str, Any], ttl: float
    ) -> Card:
        """Create the card for a gated tool call, or return the one it already has."""

        def write(conn: Conn) -> Card:
            now = time.time()
            conn.execute(
                "INSERT INTO approvals (id, chat_id, turn_index, tool_call_id, tool, args, status,"
                " created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8) ON CONFLICT DO NOTHING",
                (uuid.uuid4().hex[:12], chat_id, turn_index, tool_call_id, tool, orjson.dumps(args).decode(), now, now + ttl),
            )
            row = conn.execute(
                "SELECT * FROM approvals WHERE chat_id = $1 AND tool_call_id = $2", (chat_id, tool_call_id)
            ).fetchone()
            return card_of(row)

        return await self.db.tx(write)

    async def cards(self, chat_id: str, status: str | None = None) -> list[Card]:
        sql = "SELECT * FROM approvals WHERE chat_id = $1" + (" AND status = $2" if status else "") + " ORDER BY created_at"
        args = (chat_id, status) if status else (chat_id,)
        rows = await self.db.run(lambda c: c.execute(sql, args).fetchall())
        return [card_of(r) for r in rows]

    async def card(self, chat_id: str, card_id: str) -> Card | None:
        row = await self.db.run(
            lambda c: c.execute("SELECT * FROM approvals WHERE chat_id = $1 AND id = $2", (chat_id, card_id)).fetchone()
        )
        return card_of(row) if row else None

    async def close_card(self, card_id: str, status: str, by: str | None) -> bool:
        """Move a pending card to its outcome; False when it was no longer pending."""
        cur = await self.db.tx(
            lambda c: c.execute(
                "UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3 WHERE id = $4 AND status = 'pending'",
                (status, by, time.time(), card_id),
            )
        )
        return cur.rowcount == 1


PENDING_CARDS = "SELECT * FROM approvals WHERE chat_id = $1 AND status = 'pending'"  # a chat's cards waiting


def card_of(row: Row) -> Card:
    return Card(
        row["id"], row["chat_id"], row["turn_index"], row["tool_call_id"], row["tool"],
        orjson.loads(row["args"]), row["status"], row["created_at"], row["expires_at"],
    )
