"""What replicas sharing one database agree on, in kazma.db's schema: leaders and daily claims;
and the one lock under which replicas starting together take turns (`one_at_a_time`).

Leaders and claims are single rows changed by one conditional statement, so two replicas
asking at the same moment get one answer: on PostgreSQL the SERIALIZABLE transaction of the
loser is run again and then finds the row taken. Times are the replicas' clocks (as the
turn leases' are): replicas are expected to keep their clocks in step (NTP), to a second or so.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import psycopg

from kazma_core.stores.engine import Conn, Database

CLAIMS_KEPT_DAYS = 30


class ReplicaStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def hold_leader(self, name: str, holder: str, ttl: float) -> bool:
        """Take the named leadership when free or expired, or renew it when held: True when held now."""

        def write(conn: Conn) -> bool:
            now = time.time()
            cur = conn.execute(
                "INSERT INTO leaders (name, holder, expires_at, since) VALUES ($1, $2, $3, $4) "
                "ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,"
                " since = CASE WHEN leaders.holder = excluded.holder THEN leaders.since ELSE excluded.since END"
                " WHERE leaders.holder = excluded.holder OR leaders.expires_at < $5",
                (name, holder, now + ttl, now, now),
            )
            return cur.rowcount == 1

        return await self.db.tx(write)

    async def release_leader(self, name: str, holder: str) -> None:
        """Give the leadership up now (a clean stop), so another replica takes it at its next look."""
        await self.db.tx(lambda c: c.execute("DELETE FROM leaders WHERE name = $1 AND holder = $2", (name, holder)))

    async def claim_day(self, name: str, day: str, holder: str) -> bool:
        """Claim a daily job's day for this replica: True for the first to ask, False for every other."""

        def write(conn: Conn) -> bool:
            now = time.time()
            conn.execute("DELETE FROM job_claims WHERE claimed_at < $1", (now - CLAIMS_KEPT_DAYS * 86_400,))
            cur = conn.execute(
                "INSERT INTO job_claims (name, day, holder, claimed_at) VALUES ($1, $2, $3, $4) "
                "ON CONFLICT(name, day) DO NOTHING",
                (name, day, holder, now),
            )
            return cur.rowcount == 1

        return await self.db.tx(write)

    async def claims(self, name: str) -> list[tuple[str, str]]:
        """(day, holder) of a job's claims, oldest day first."""
        rows = await self.db.run(
            lambda c: c.execute("SELECT day, holder FROM job_claims WHERE name = $1 ORDER BY day", (name,)).fetchall()
        )
        return [(r["day"], r["holder"]) for r in rows]


@contextlib.asynccontextmanager
async def one_at_a_time(url: str, name: str) -> AsyncIterator[None]:
    """Hold the database's lock of that name for the block: replicas doing the same at the same
    moment (making the owner on an empty database) do it one after the other, and each finds
    what the one before it committed. A PostgreSQL advisory lock, held by a connection of its
    own, so it goes with that connection if the process dies. Without a URL (SQLite) one
    process serves a data folder: there is nobody to take turns with."""
    if not url:
        yield
        return
    conn: psycopg.AsyncConnection[Any] = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=10)
    async with conn:
        await conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (f"kazma:{name}",))
        try:
            yield
        finally:
            await conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (f"kazma:{name}",))
