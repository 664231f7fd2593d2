"""A leader among the replicas sharing one database: work that must run on one of them only.

The leader holds a row of `leaders` (replicas/claims.py) and renews it every
`server.leader_renew_seconds` (10 s); the row expires `server.leader_seconds` (20 s) after its
last renewal. Every other replica looks every `server.leader_check_seconds` (5 s) and takes the
row once it expired, so the work moves within leader_seconds + leader_check_seconds (25 s) of
the leader's death. A leader that cannot renew (the row taken, or the database out of reach
until the row would have expired) stops its work at once: two replicas never both believe they
lead, as long as their clocks agree.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from kazma_core.replicas.claims import ReplicaStore
from kazma_core.replicas.identity import replica_id
from kazma_core.stores.engine import DatabaseError

log = logging.getLogger(__name__)


class Leadership:
    def __init__(
        self, store: ReplicaStore, name: str, *, ttl: float, renew: float, check: float, holder: str = "",
    ) -> None:
        self.store = store
        self.name = name
        self.holder = holder or replica_id()
        self.ttl = ttl
        self.renew = renew
        self.check = check

    async def lead(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` whenever this replica is the leader, until cancelled."""
        while True:
            if not await self._hold():
                await asyncio.sleep(self.check)
                continue
            log.info("this replica (%s) now leads %s", self.holder, self.name)
            task = asyncio.ensure_future(work())
            try:
                await self._keep(task)
            except asyncio.CancelledError:
                with contextlib.suppress(DatabaseError):  # a clean stop: the next leader need not wait
                    await self.store.release_leader(self.name, self.holder)
                raise
            finally:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def _hold(self) -> bool:
        try:
            return await self.store.hold_leader(self.name, self.holder, self.ttl)
        except DatabaseError as err:
            log.warning("%s: the database did not answer the leader check (%s)", self.name, err)
            return False

    async def _keep(self, task: asyncio.Future[None]) -> None:
        """Renew while the work runs; return when the work ended or the leadership is lost."""
        held_until = time.time() + self.ttl
        while True:
            done, _ = await asyncio.wait({task}, timeout=self.renew)
            if done:
                return
            try:
                renewed = await self.store.hold_leader(self.name, self.holder, self.ttl)
            except DatabaseError as err:
                # Another replica may take the row once it expires: stop before it does.
                if time.time() + self.renew >= held_until:
                    log.warning("%s: the database is out of reach (%s); this replica stops leading", self.name, err)
                    return
                continue
            if not renewed:
                log.warning("%s: another replica took the leadership; this replica stops leading", self.name)
                return
            held_until = time.time() + self.ttl
