"""Fencing: a chat's writes commit only while the writer still holds the chat's lease.

A replica that stalls past its lease's expiry (a long pause, a cut link to the database)
may find the lease taken by another replica when it wakes. Its turn must not then write
as if it still held the chat: each checkpoint write of a chat whose lease this task
holds reads the lease row in the same transaction, and refuses when the holder changed.
The holder id is new at every acquisition, so it is the fencing token itself.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass

from kazma_core.errors import LeaseLost
from kazma_core.stores.engine import Conn


@dataclass
class Fence:
    chat_id: str
    holder: str
    active: bool = True  # False once released: a task that outlives its lease is not fenced by it


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


def check(conn: Conn, fence: Fence | None) -> None:
    """Inside a write's transaction: raise LeaseLost when the lease is no longer the writer's."""
    if fence is None:
        return
    row = conn.execute("SELECT holder FROM leases WHERE chat_id = ?", (fence.chat_id,)).fetchone()
    if row is None or row["holder"] != fence.holder:
        raise LeaseLost(
            "Another Kazma server took this chat over while this turn ran (this server lost its hold on it). "
            "Nothing more of the turn was saved: send the message again."
        )
