"""A chat's memory: the facts the agent learned and forgot (each marked with its step, so that a restore
brings them back), and whether the chat keeps any."""

from __future__ import annotations

import time
from dataclasses import dataclass

from kazma_core.stores.engine import Conn, Database
from kazma_core.stores.types import Fact


@dataclass(frozen=True)
class MemoryStore:
    """kazma.db's facts, and each chat's memory switch."""

    db: Database

    async def add_fact(self, chat_id: str, turn_index: int, iteration: int, text: str) -> None:
        await self.db.tx(
            lambda c: c.execute(
                "INSERT INTO facts (chat_id, turn_index, iteration, text, created_at) VALUES ($1, $2, $3, $4, $5)",
                (chat_id, turn_index, iteration, text, time.time()),
            )
        )

    async def forget_fact(self, chat_id: str, turn_index: int, iteration: int, text: str) -> int:
        """The agent's forget: marked with its step, so a restore to before it brings the fact back."""
        cur = await self.db.tx(
            lambda c: c.execute(
                "UPDATE facts SET forgotten_turn = $1, forgotten_iteration = $2 WHERE chat_id = $3"
                " AND forgotten_turn IS NULL AND lower(text) = lower($4)",
                (turn_index, iteration, chat_id, text),
            )
        )
        return cur.rowcount

    async def delete_facts(self, chat_id: str, from_turn: int = 0) -> int:
        cur = await self.db.tx(
            lambda c: c.execute("DELETE FROM facts WHERE chat_id = $1 AND turn_index >= $2", (chat_id, from_turn))
        )
        return cur.rowcount

    async def delete_fact(self, chat_id: str, fact_id: int) -> Fact | None:
        """A person's forget: the fact is gone for good (returns it, or None when there was none)."""

        def write(conn: Conn) -> Fact | None:
            row = conn.execute(
                "SELECT id, turn_index, text FROM facts WHERE chat_id = $1 AND id = $2", (chat_id, fact_id)
            ).fetchone()
            conn.execute("DELETE FROM facts WHERE chat_id = $1 AND id = $2", (chat_id, fact_id))
            return Fact(*tuple(row)) if row else None

        return await self.db.tx(write)

    async def facts(self, chat_id: str) -> list[Fact]:
        rows = await self.db.run(
            lambda c: c.execute(
                "SELECT id, turn_index, text FROM facts WHERE chat_id = $1 AND forgotten_turn IS NULL ORDER BY id",
                (chat_id,),
            ).fetchall(),
            small=True,
        )
        return [Fact(*tuple(r)) for r in rows]

    async def memory_on(self, chat_id: str) -> bool:
        row = await self.db.run(lambda c: c.execute("SELECT memory FROM chats WHERE id = $1", (chat_id,)).fetchone())
        return bool(row and row["memory"])

    async def set_memory(self, chat_id: str, on: bool) -> None:
        await self.db.tx(lambda c: c.execute("UPDATE chats SET memory = $1 WHERE id = $2", (int(on), chat_id)))
