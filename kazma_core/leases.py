"""The turn lease: a row in kazma.db that says "this chat is busy", across processes.

A turn or a restore holds it; a heartbeat renews it; a crashed holder's lease expires,
so a chat is never blocked for ever.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from collections.abc import AsyncIterator

from kazma_core.errors import TurnRunning
from kazma_core.retry import Backoff, ask_until
from kazma_core.stores.interfaces import AppStore

HOLDER_PREFIX = f"{socket.gethostname()}:{os.getpid()}:"
ASK_AGAIN = Backoff(first=0.01, most=0.2)  # a turn's end frees the lease at once: ask again soon


def holder_is_dead(holder: str) -> bool:
    """True when the lease's holder was a process on this machine that no longer runs."""
    host, _, rest = holder.partition(":")
    pid, _, _ = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


@contextlib.asynccontextmanager
async def chat_lease(
    store: AppStore, chat_id: str, purpose: str, ttl: float, wait: float = 0.0
) -> AsyncIterator[str]:
    """Hold the chat's lease for the block, or raise TurnRunning (after waiting up to `wait` s)."""
    holder = HOLDER_PREFIX + uuid.uuid4().hex
    if not await ask_until(ASK_AGAIN, wait, lambda: store.acquire_lease(chat_id, holder, purpose, ttl)):
        raise TurnRunning(
            "A turn is running in this chat. Wait for its answer (or stop it), then try again."
        )

    async def heartbeat() -> None:
        while True:
            await asyncio.sleep(ttl / 3)
            await store.renew_lease(chat_id, holder, ttl)

    beat = asyncio.create_task(heartbeat())
    try:
        yield holder
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        await store.release_lease(chat_id, holder)
