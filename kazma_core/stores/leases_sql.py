"""Turn leases: which replica (or task) works in a chat now, so that one thing at a time writes to it."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from kazma_core.stores.engine import Conn, Database, DatabaseError, marks
from kazma_core.stores.interfaces import CUT_TURNS, RECOVER, Also

_CUT_TURNS = f"({marks(len(CUT_TURNS), 7)})"  # after the six values of acquire_lease's statement
_RESTORING = "SELECT 1 FROM restore_intents WHERE chat_id = $1 LIMIT 1"
_LET_GO = "DELETE FROM leases WHERE chat_id = $1 AND holder = $2"


def _take(unless: str) -> str:
    """A chat's lease taken, or an expired one taken over, where `unless` holds (SQLite needs the
    WHERE of an upsert's SELECT)."""
    return (
        f"INSERT INTO leases (chat_id, holder, purpose, expires_at) SELECT $1, $2, $3, $4 WHERE {unless}"
        " ON CONFLICT(chat_id) DO UPDATE SET holder = excluded.holder, purpose = excluded.purpose,"
        " expires_at = excluded.expires_at WHERE (leases.expires_at < $5"
        f" AND (excluded.purpose = $6 OR leases.purpose NOT IN {_CUT_TURNS}))"
        # The same holder again: its statement run twice (a connection lost as it committed).
        " OR leases.holder = excluded.holder"
    )


_TAKE = _take("true")
_TAKE_UNLESS_RESTORING = _take(f"NOT EXISTS ({_RESTORING})")


@dataclass(frozen=True)
class LeaseStore:
    """kazma.db's leases, one row a chat, taken over only once expired."""

    db: Database

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
        now = time.time()
        params = (chat_id, holder, purpose, now + ttl, now, RECOVER, *CUT_TURNS)
        # A restore writes its intent while it holds the lease: one seen here, or one committed
        # before the lease was taken (looked for again then, on PostgreSQL), keeps the chat for the sweep.
        take = _TAKE if finishing else _TAKE_UNLESS_RESTORING

        def take_then_read(conn: Conn) -> bool:
            if conn.execute(take, params).rowcount != 1:
                return False
            # PostgreSQL: the statement's own snapshot may predate an intent whose restore then let
            # the lease go before the statement took it: looked for again now that the lease is held,
            # when no restore can write one (SQLite: one transaction holds the file's only write lock,
            # and nothing comes between).
            if not self.db.serial and not finishing and conn.execute(_RESTORING, (chat_id,)).fetchone():
                conn.execute(_LET_GO, (chat_id, holder))
                return False
            if also is not None:
                also(conn)
            return True

        if self.db.serial:
            return await self.db.tx(take_then_read, small=True)
        # PostgreSQL: each statement a transaction of its own (no BEGIN and COMMIT round trips), on one
        # connection: the reads come after the lease's, outside any SERIALIZABLE transaction (there,
        # reads of other chats' index pages made the turns of different chats conflict: 503s under load).
        try:
            return await self.db.run(take_then_read)
        except BaseException:
            # Taken, perhaps, before what came after it failed: let go, as the holder never knew it had it.
            with contextlib.suppress(DatabaseError):
                await self.release_lease(chat_id, holder)
            raise

    async def renew_lease(self, chat_id: str, holder: str, ttl: float) -> bool:
        cur = await self.db.tx(
            lambda c: c.execute(
                "UPDATE leases SET expires_at = $1 WHERE chat_id = $2 AND holder = $3",
                (time.time() + ttl, chat_id, holder),
            )
        )
        return cur.rowcount == 1

    async def release_lease(self, chat_id: str, holder: str) -> None:
        """End `holder`'s lease: its own at the end of a turn, or a dead holder's (once proven gone).
        One statement, a transaction of its own (no BEGIN and COMMIT round trips): a write fenced by
        the lease holds its row locked until it commits, so the delete waits for it."""
        await self.db.run(lambda c: c.execute(_LET_GO, (chat_id, holder)), small=True)

    async def lease_holders(self) -> list[tuple[str, str, str]]:
        """(chat_id, holder, purpose) of every lease row, live or not."""
        rows = await self.db.run(lambda c: c.execute("SELECT chat_id, holder, purpose FROM leases").fetchall())
        return [(r["chat_id"], r["holder"], r["purpose"]) for r in rows]

    async def expired_leases(self, now: float) -> list[tuple[str, str, str]]:
        """(chat_id, holder, purpose) of the leases not renewed in time (their holders are gone or stalled)."""
        rows = await self.db.run(
            lambda c: c.execute("SELECT chat_id, holder, purpose FROM leases WHERE expires_at < $1", (now,)).fetchall()
        )
        return [(r["chat_id"], r["holder"], r["purpose"]) for r in rows]

    async def lease(self, chat_id: str) -> tuple[str, str] | None:
        """(holder, purpose) of the live lease on a chat, if any."""
        row = await self.db.run(
            lambda c: c.execute(
                "SELECT holder, purpose FROM leases WHERE chat_id = $1 AND expires_at >= $2", (chat_id, time.time())
            ).fetchone()
        )
        return (row["holder"], row["purpose"]) if row else None
