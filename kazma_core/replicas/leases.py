"""The turn lease: a row in kazma.db that says "this chat is busy", across processes and replicas.

A turn or a restore holds it; a heartbeat renews it; a crashed holder's lease expires,
so a chat is never blocked for ever. A holder id names the replica (host, pid, boot id)
and is new at every acquisition: it is also the fencing token of the chat's writes
(replicas/fence.py), so a holder whose lease was taken cannot write as if it held it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator

from kazma_core.errors import TurnRunning
from kazma_core.replicas import fence
from kazma_core.replicas.identity import replica_id, replica_is_dead
from kazma_core.retry import Backoff, ask_until
from kazma_core.stores.engine import DatabaseError
from kazma_core.stores.interfaces import Also
from kazma_core.stores.leases_sql import LeaseStore

log = logging.getLogger(__name__)

ASK_AGAIN = Backoff(first=0.01, most=0.2)  # a turn's end frees the lease at once: ask again soon


# This process's holders whose block still runs. One of ours that is not here ended without
# letting go (the database was away when it ended): dead, so the sweep frees its chat and closes
# its cut turn as soon as the database is back, not a lease's time later.
_HELD: set[str] = set()
# Holders whose block ended leaving the chat to the sweep (leave_to_sweep): their lease is not let go.
_LEFT: set[str] = set()


def held_here(holder: str) -> bool:
    """True when the lease's holder is a task of this process."""
    return holder.startswith(f"{replica_id()}:")


def holder_is_dead(holder: str) -> bool:
    """True when the lease's holder is known to be gone (see replica_is_dead); a holder on
    another host is never guessed dead: only its lease's expiry frees its chats."""
    if held_here(holder):
        return holder not in _HELD
    return replica_is_dead(holder)


def leave_to_sweep(chat_id: str) -> None:
    """The lease this task holds on the chat is not let go when its block ends: what the block
    left (a turn the database cut off, not closed yet) is the sweep's to close, as a dead
    holder's, once the database is back (Core.recover). Let go, the chat would take the next
    message with the cut turn still open, and nothing would close it."""
    held = fence.fence_for(chat_id)
    if held is not None:
        _LEFT.add(held.holder)


@contextlib.asynccontextmanager
async def chat_lease(
    store: LeaseStore, chat_id: str, purpose: str, ttl: float, wait: float = 0.0, *, finishing: bool = False,
    also: Also | None = None,
) -> AsyncIterator[str]:
    """Hold the chat's lease for the block, or raise TurnRunning (after waiting up to `wait` s);
    `finishing`: to finish a restore a crash or an outage cut; `also`: what the holder reads as it
    takes the lease (LeaseStore.acquire_lease)."""
    holder = f"{replica_id()}:{uuid.uuid4().hex}"
    _HELD.add(holder)  # before it can be in the table: a sweep must never see it as ended
    asked = time.time()  # the lease, once taken, expires ttl after this at the earliest
    try:
        if not await ask_until(
            ASK_AGAIN, wait, lambda: store.acquire_lease(chat_id, holder, purpose, ttl, finishing=finishing, also=also)
        ):
            raise TurnRunning(message_id="turn_running")
    except BaseException:
        _HELD.discard(holder)
        raise

    async def heartbeat() -> None:
        while True:
            await asyncio.sleep(ttl / 3)
            try:
                asked = time.time()
                renewed = await store.renew_lease(chat_id, holder, ttl)
            except DatabaseError as err:  # the database away for a moment: the next beat tries again
                log.warning("chat %s: its lease could not be renewed (%s)", chat_id, err)
                continue
            if not renewed:
                # Expired and taken by another replica (or freed as dead): fencing stops the writes.
                log.warning("chat %s: its %s lease was lost; this replica no longer writes to it", chat_id, purpose)
                return
            held.until = asked + ttl

    held = fence.Fence(chat_id, holder, until=asked + ttl)
    token = fence.hold(held)
    beat = asyncio.create_task(heartbeat())
    try:
        yield holder
    finally:
        fence.let_go(held, token)
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        try:
            if holder not in _LEFT:
                await store.release_lease(chat_id, holder)
        finally:
            _HELD.discard(holder)
            _LEFT.discard(holder)
