"""Fencing: a chat's writes commit only while the writer still holds the chat's lease.

A replica that stalls past its lease's expiry (a long pause, a cut link to the database)
may find the lease taken by another replica when it wakes. Its turn must not then write
as if it still held the chat: each write of a chat whose lease this task holds (a
checkpoint, the transcript rows derived from it, a saved step) reads the lease row in
the same transaction, and refuses when the holder changed. The holder id is new at every
acquisition, so it is the fencing token itself.

The saved steps live in another store (snapshots.db, the schema ``kazma_steps``). Their
writes carry the same token, read from the task as the checkpoint writes do, and check it
against the lease row in their own transaction: on PostgreSQL that row is in the same
database (``kazma.leases``), so the check and the step commit together, as a checkpoint's
do, and a takeover either comes before the check (refused) or after the commit (the step
was written while the lease was held). Checking from the capture path before and after the
write instead would leave a window in which a stray step is written and seen, and a crash
in it would keep it. On SQLite the steps are a file of their own, and one process serves a
data folder (kazma.serve.lock): no other replica can take a chat over there, so the steps'
writes are not fenced.

On SQLite a write's transaction holds the file's one write lock (BEGIN IMMEDIATE), and every
process that could take a lease over runs on this machine's clock. A lease this holder renewed
until a time still to come cannot have been taken: a taker must first find it expired, by the
same clock, and write the row under that lock. There the row is read only once that time has
passed (a stall, the database away): the check costs a statement only when it can fail. On
PostgreSQL the row is read by every write: its replicas' clocks are not one, and the read is
what makes a takeover and the write conflict (SERIALIZABLE).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from dataclasses import dataclass, field

from kazma_core.errors import LeaseLost
from kazma_core.stores.engine import Conn, Database


@dataclass
class Fence:
    chat_id: str
    holder: str
    active: bool = True  # False once released: a task that outlives its lease is not fenced by it
    until: float = 0.0  # the lease is this holder's until then at least (time.time(): its last taking or renewal)
    # What only the chat's own writes change (its body space), read once while the lease is held.
    notes: dict[str, str] = field(default_factory=dict)


_HELD: contextvars.ContextVar[Fence | None] = contextvars.ContextVar("kazma_lease_fence", default=None)


def hold(fence: Fence) -> contextvars.Token[Fence | None]:
    """The running task (and the tasks it starts from now on) writes under this lease."""
    return _HELD.set(fence)


def let_go(fence: Fence, token: contextvars.Token[Fence | None]) -> None:
    """The lease is released: nothing is fenced by it any more, and an outer lease of the task applies again."""
    fence.active = False
    with contextlib.suppress(ValueError):  # released from another task than the one that took it
        _HELD.reset(token)


def fence_for(chat_id: str) -> Fence | None:
    """The lease this task holds on the chat, if any: its writes to the chat are fenced by it."""
    fence = _HELD.get()
    return fence if fence is not None and fence.active and fence.chat_id == chat_id else None


def held_chat() -> str | None:
    """The chat whose lease the running task holds (its writes stay in order behind each other), if any."""
    fence = _HELD.get()
    return fence.chat_id if fence is not None and fence.active else None


def check(conn: Conn, fence: Fence | None, db: Database, leases: str = "leases") -> None:
    """Inside a write's transaction on `db`: raise LeaseLost when the lease is no longer the writer's.
    `leases` is the lease table as the connection names it (``kazma.leases`` from the steps' schema).
    Where the transaction holds the database's only write lock, on this machine's clock (SQLite:
    ``db.serial``), a lease renewed until a time to come is not read again (see above)."""
    if fence is None or (db.serial and time.time() < fence.until):
        return
    # Elsewhere (PostgreSQL) the row is locked until the write commits (db.share_lock): a takeover
    # waits for it, so whoever takes the lease over then sees every write made under it (a cut turn's last step).
    row = conn.execute(f"SELECT holder FROM {leases} WHERE chat_id = $1{db.share_lock}", (fence.chat_id,)).fetchone()
    if row is None or row["holder"] != fence.holder:
        raise LeaseLost(message_id="lease_lost")
