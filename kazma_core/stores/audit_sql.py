"""time_travel_audit.db: who restored, forked or cleared what, from where, and how it went."""

from __future__ import annotations

import time

from kazma_core.stores.engine import Conn, Database
from kazma_core.stores.types import AuditRow

MIGRATIONS: list[str] = [
    """
    CREATE TABLE audit (
        id {id},
        at {real} NOT NULL,
        user_id {text} NOT NULL,
        surface {text} NOT NULL,
        chat_id {text} NOT NULL,
        step_id {text},
        action {text} NOT NULL,
        outcome {text} NOT NULL,
        checkpoint_before {text},
        new_chat_id {text},
        detail {text}
    );
    CREATE INDEX audit_chat ON audit(chat_id, id)
    """,
]


class SqlAuditStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def record(self, row: AuditRow) -> None:
        await self.db.tx(
            lambda c: c.execute(
                "INSERT INTO audit (at, user_id, surface, chat_id, step_id, action, outcome, checkpoint_before,"
                " new_chat_id, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                (
                    row.at or time.time(), row.user_id, row.surface, row.chat_id, row.step_id, row.action,
                    row.outcome, row.checkpoint_before, row.new_chat_id, row.detail,
                ),
            )
        )

    async def rows(self, chat_id: str | None = None) -> list[AuditRow]:
        def read(conn: Conn) -> list[AuditRow]:
            sql = "SELECT * FROM audit" + (" WHERE chat_id = $1" if chat_id else "") + " ORDER BY id"
            return [
                AuditRow(
                    r["at"], r["user_id"], r["surface"], r["chat_id"], r["step_id"], r["action"], r["outcome"],
                    r["checkpoint_before"], r["new_chat_id"], r["detail"],
                )
                for r in conn.execute(sql, (chat_id,) if chat_id else ())
            ]

        return await self.db.run(read)

    async def close(self) -> None:
        await self.db.close()
