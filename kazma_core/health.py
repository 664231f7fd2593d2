"""Is each store readable? Checked on /healthz, every few seconds, and whenever a store fails a request.

Each check opens the file afresh (read only) and reads its schema and the first page of
every table, so garbage written over a file while the server runs is seen even though the
server's own connections may still serve pages from memory. A store found damaged is
reported once, at once: the gauge ``kazma_store_healthy{store}`` drops to 0, a line is
logged at ERROR, and an operator alert is raised (when kazma.db itself can take it). The
other stores keep serving.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from prometheus_client import Counter, Gauge

from kazma_core.errors import without_paths
from kazma_core.maintenance import raise_alert
from kazma_core.settings import Settings
from kazma_core.stores.interfaces import AppStore
log = logging.getLogger(__name__)

WATCH_SECONDS = 10.0
ALERT_KIND = "store_damaged"
STORE_HEALTHY = Gauge("kazma_store_healthy", "1 while a store reads back whole, 0 once it was found damaged", ["store"])
STORE_DAMAGED = Counter("kazma_store_damaged", "Times a store was found damaged while Kazma ran", ["store"])


@dataclass(frozen=True)
class StoreState:
    ok: bool
    problem: str | None = None


def probe(path: Path) -> str | None:
    """None when the file reads back as a database; otherwise what is wrong, in a few words."""
    if not path.exists():
        return "the file is missing"
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
        try:
            tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for table in tables:
                conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchall()
        finally:
            conn.close()
    except sqlite3.OperationalError as err:
        if "locked" in str(err) or "busy" in str(err):
            return None  # busy with a write of its own (a clean-up, a compaction): not damaged
        return without_paths(str(err)) or type(err).__name__
    except sqlite3.Error as err:
        return without_paths(str(err)) or type(err).__name__
    return None


def advice(name: str) -> str:
    if name == "snapshots.db":
        return (
            "Saved steps cannot be listed, restored or forked; chats go on. Stop Kazma, move snapshots.db "
            "aside (steps are never backed up) and start again: a new, empty one is made."
        )
    return (
        f"Stop Kazma and put back your latest backup (`kazma backup restore PATH`), which holds {name}; "
        "then start again."
    )


class StoreHealth:
    def __init__(self, settings: Settings, store: AppStore) -> None:
        self.store = store
        candidates = (settings.kazma_db, settings.snapshots_db, settings.audit_db)
        self.files = {p.name: p for p in candidates}
        # A store makes its file on first use: a file not made yet is fine, one that was there and went is not.
        self.seen: set[str] = set()
        self.damaged: dict[str, str] = {}
        self._lock = asyncio.Lock()
        for name in self.files:
            STORE_HEALTHY.labels(store=name).set(1)

    async def check(self) -> dict[str, StoreState]:
        """Probe every store now; report each newly damaged one, and note each one that came back."""
        async with self._lock:
            states: dict[str, StoreState] = {}
            for name, path in self.files.items():
                if name not in self.seen and not path.exists():
                    states[name] = StoreState(True)
                    continue
                self.seen.add(name)
                problem = await asyncio.to_thread(probe, path)
                states[name] = StoreState(problem is None, problem)
                if problem is not None and name not in self.damaged:
                    self.damaged[name] = problem
                    await self._report(name, problem)
                elif problem is None and name in self.damaged:
                    del self.damaged[name]
                    STORE_HEALTHY.labels(store=name).set(1)
                    log.warning("store %s reads back whole again", name)
            return states

    async def _report(self, name: str, problem: str) -> None:
        STORE_HEALTHY.labels(store=name).set(0)
        STORE_DAMAGED.labels(store=name).inc()
        message = f"{name} is damaged ({problem}). {advice(name)}"
        log.error("store damaged: %s", message)
        if name == "kazma.db":
            return  # the alert would be written into the damaged file: the log line and the metric carry it
        try:
            await raise_alert(self.store, ALERT_KIND, message)
        except Exception:
            log.exception("the operator alert for the damaged %s could not be stored", name)

    async def watch(self, every: float = WATCH_SECONDS) -> None:
        """The server's background check: runs until cancelled."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.check()
            except Exception:
                log.exception("the store health check failed")
