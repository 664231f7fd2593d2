"""Is each store usable? Checked at start, on /healthz, every few seconds, and whenever a store fails a request.

Each check is the engine's probe (`Database.probe`): a SQLite file opened afresh (only read),
its schema and the first page of every table read, so garbage written over a file while the
server runs is seen even though the server's own connection may still serve pages from
memory; a PostgreSQL schema read over a connection of its own, within a few seconds. A store
found wrong is reported once, at once, in the words its engine gives (`Database.found_wrong`): the
gauge ``kazma_store_healthy{store}`` drops to 0, a line is logged at ERROR, and an operator alert
is raised (when the chats' database itself can take it). Until it reads back again its requests answer 503 ``store_unavailable``; the other
stores keep serving. When it is back, the gauge is 1 again and a line says so.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from prometheus_client import Counter, Gauge

from kazma_core.maintenance import raise_alert
from kazma_core.stores.alerts_sql import AlertStore
from kazma_core.stores.engine import Database

log = logging.getLogger(__name__)

WATCH_SECONDS = 10.0
ALERT_KIND = "store_damaged"
STORE_HEALTHY = Gauge("kazma_store_healthy", "1 while a store reads back whole, 0 once it was found damaged", ["store"])
STORE_DAMAGED = Counter("kazma_store_damaged", "Times a store was found damaged while Kazma ran", ["store"])


@dataclass(frozen=True)
class StoreState:
    ok: bool
    problem: str | None = None


@dataclass(frozen=True)
class Watched:
    role: str  # "chats" | "steps" | "audit"
    db: Database


class StoreHealth:
    def __init__(self, stores: list[Watched], store: AlertStore) -> None:
        self.store = store
        self.stores = {w.db.label: w for w in stores}
        self.damaged: dict[str, str] = {}
        self._lock = asyncio.Lock()
        for name in self.stores:
            STORE_HEALTHY.labels(store=name).set(1)

    async def check(self) -> dict[str, StoreState]:
        """Probe every store now; report each newly damaged one, and note each one that came back."""
        async with self._lock:
            names = list(self.stores)
            problems = await asyncio.gather(*(self.stores[name].db.probe() for name in names))
            states: dict[str, StoreState] = {}
            for name, problem in zip(names, problems, strict=True):
                states[name] = StoreState(problem is None, problem)
                if problem is not None and name not in self.damaged:
                    self.damaged[name] = problem
                    await self._report(self.stores[name], problem)
                elif problem is None and name in self.damaged:
                    del self.damaged[name]
                    STORE_HEALTHY.labels(store=name).set(1)
                    log.warning("store %s reads back whole again", name)
            return states

    async def _report(self, watched: Watched, problem: str) -> None:
        name = watched.db.label
        STORE_HEALTHY.labels(store=name).set(0)
        STORE_DAMAGED.labels(store=name).inc()
        said = watched.db.found_wrong(watched.role, problem)
        log.error("store damaged: %s", said.text("en"))
        if watched.role == "chats" or not watched.db.alone:
            # The alert would be written into the store that failed (kazma.db, or the server that is
            # away): the log line and the metric carry it.
            return
        try:
            await raise_alert(self.store, ALERT_KIND, said)
        except Exception:
            log.exception("the operator alert for the damaged %s could not be stored", name)

    async def watch(self, every: float = WATCH_SECONDS) -> None:
        """The server's background check, at once (a store that could not be read at start is
        reported then), then every few seconds; runs until cancelled."""
        while True:
            try:
                await self.check()
            except Exception:
                log.exception("the store health check failed")
            await asyncio.sleep(every)
