"""Operator alerts: what went wrong that the owner must see (a database found wrong, a clean-up that
failed or left text behind), until acknowledged."""

from __future__ import annotations

import time
from dataclasses import dataclass

import orjson

from kazma_core.catalogue.errors import Said
from kazma_core.stores.engine import Conn, Database, Row
from kazma_core.stores.types import Alert


@dataclass(frozen=True)
class AlertStore:
    """kazma.db's operator alerts."""

    db: Database

    async def add_alert(self, kind: str, said: Said, at: float | None = None) -> Alert:
        """Kept with its sentence's id and parameters (worded for whoever reads it) and in English (the log's words,
        and what an older Kazma reading the same database shows)."""

        def write(conn: Conn) -> Alert:
            return _alert(conn.execute(
                "INSERT INTO alerts (kind, message, message_id, params, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *",
                (kind, said.text("en"), said.message_id, orjson.dumps(said.params).decode(), time.time() if at is None else at),
            ).fetchone())

        return await self.db.tx(write)

    async def alerts(self, include_acknowledged: bool = False) -> list[Alert]:
        """Newest first; only the ones not yet acknowledged unless asked."""
        where = "" if include_acknowledged else " WHERE acknowledged_at IS NULL"
        rows = await self.db.run(lambda c: c.execute(f"SELECT * FROM alerts{where} ORDER BY id DESC").fetchall())
        return [_alert(r) for r in rows]

    async def acknowledge_alert(self, alert_id: int, at: float | None = None) -> Alert | None:
        """Mark an alert seen (the first acknowledgement's time is kept); None when there is no such alert."""

        def write(conn: Conn) -> Alert | None:
            conn.execute(
                "UPDATE alerts SET acknowledged_at = $1 WHERE id = $2 AND acknowledged_at IS NULL",
                (time.time() if at is None else at, alert_id),
            )
            row = conn.execute("SELECT * FROM alerts WHERE id = $1", (alert_id,)).fetchone()
            return _alert(row) if row else None

        return await self.db.tx(write)


def _alert(row: Row) -> Alert:
    params = orjson.loads(row["params"]) if row["params"] else {}
    return Alert(row["id"], row["kind"], row["message"], row["created_at"], row["acknowledged_at"], row["message_id"], params)
