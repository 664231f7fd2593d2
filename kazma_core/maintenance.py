"""The daily clean-up: old steps deleted, the file compacted when worth it, the deletion checked.

One pass, in order:

1. reads ``time_travel.auto_maintain`` and ``time_travel.retention_days`` live (the
   overrides in kazma.db, else the value the server started with);
2. deletes the steps older than ``retention_days`` (skipped when auto_maintain is off,
   unless the pass was asked for by hand with ``kazma maintain``);
3. deletes the steps of chats that no longer exist in kazma.db (a crash between deleting
   a chat's steps and its row, or a fork that died half-way), and their checkpoints;
   It also drops the undos of restores that ran out (``time_travel.undo_seconds``), with
   what they kept aside, the checkpoints from before the restore and the bodies only they
   held (``UndoKeep.drop``: the latest an undo nobody asked for again goes);
4. prunes the chat step history (LangGraph checkpoints) of every chat to
   ``history.checkpoints_per_chat``;
5. compacts the steps' database when at least a quarter of it, and 8 MB, is free room (not
   when auto_maintain is off: the sweep and the history pass run whatever it says);
6. checks that what it deleted is gone: no row of a deleted step left, and on SQLite no
   bytes of a freed message body left in the file or its WAL (secure_delete zeroes them).
   A pass whose deletion did not take raises an operator alert.

What is measured, compacted and scanned depends on the engine (``stores/steps_space.py``):
snapshots.db's file, or on PostgreSQL the schema kazma_steps, VACUUMed on every pass, whose
files are the server's and are not scanned.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kazma_core.catalogue import sentence
from kazma_core.catalogue.errors import Said
from kazma_core.errors import SettingsError
from kazma_core.metrics import ALERTS_TOTAL
from kazma_core.replicas.claims import ReplicaStore
from kazma_core.replicas.identity import replica_id
from kazma_core.rewind.keep import UndoKeep
from kazma_core.rewind.rows import EXPIRED, RewindRows
from kazma_core.settings import Settings, validate_override
from kazma_core.sizes import human_size
from kazma_core.stores import snapshots_upkeep as upkeep
from kazma_core.stores.alerts_sql import AlertStore
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.backends import database_url
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.settings_sql import SettingsStore
from kazma_core.stores.snapshots_sql import SqlSnapshotStore
from kazma_core.stores.steps_space import steps_space
from kazma_core.stores.types import Alert

if TYPE_CHECKING:
    from kazma_core.core import Core

log = logging.getLogger(__name__)

DAY = 86_400.0
JOB_NAME = "daily-clean-up"  # its claims in job_claims
# Compaction rewrites the whole file: worth it only for at least this much free space,
# and at least 1/MIN_FREE_SHARE of the file.
MIN_FREE_BYTES = 8 * 1024 * 1024
MIN_FREE_SHARE = 4
MAX_SAMPLES = 128
# A fork writes its checkpoint and step before its chat row: a chat without a row is
# swept only when it is still without one this long after it was first seen.
ORPHAN_GRACE = 5.0
CHECKPOINT_WAIT = 1.0

ALERT_ROWS_LEFT = "cleanup_rows_left"
ALERT_TEXT_LEFT = "cleanup_text_left"
ALERT_FAILED = "cleanup_failed"
for _kind in (ALERT_ROWS_LEFT, ALERT_TEXT_LEFT, ALERT_FAILED):
    ALERTS_TOTAL.labels(kind=_kind)


@dataclass(frozen=True)
class LiveSettings:
    auto_maintain: bool
    retention_days: int


@dataclass(frozen=True)
class Compaction:
    wanted: bool
    why: str  # its catalogue sentence: cli.compact_wanted, cli.compact_waits_bytes or cli.compact_waits_share
    free_bytes: int
    file_bytes: int

    def said(self, lang: str) -> str:
        """Why it was (or was not) compacted, in a few words of this language."""
        return sentence(
            f"cli.{self.why}", lang, free=human_size(self.free_bytes, lang), size=human_size(self.file_bytes, lang),
            least=human_size(MIN_FREE_BYTES, lang),
        )

    @property
    def reason(self) -> str:
        return self.said("en")


@dataclass(frozen=True)
class Verification:
    steps_deleted: int
    rows_left: int
    bodies_freed: int
    samples: int
    samples_left: int
    samples_shared: int
    wal_busy: bool
    scanned: bool  # False on PostgreSQL: rows checked, files not readable by Kazma

    @property
    def passed(self) -> bool:
        return self.rows_left == 0 and self.samples_left == 0


@dataclass
class Swept:
    """What a sweep of chats without a row deleted."""

    chats: set[str] = field(default_factory=set)
    threads: int = 0
    deletions: list[upkeep.Deletion] = field(default_factory=list)


@dataclass
class PassReport:
    started_at: float
    by_hand: bool
    live: LiveSettings
    where: str = ""  # "snapshots.db", or "PostgreSQL schema kazma_steps"
    cutoff: float | None = None
    expired_steps: int = 0
    orphan_chats: int = 0
    orphan_steps: int = 0
    orphan_threads: int = 0
    checkpoints_pruned: int = 0
    checkpoints_per_chat: int = 0
    step_bytes_before: int = 0
    step_bytes_after: int = 0
    disk_bytes_before: int = 0
    disk_bytes_after: int = 0
    free_bytes: int = 0
    file_bytes: int = 0
    compaction: Compaction | None = None
    compacted: bool = False
    verification: Verification | None = None
    alerts: list[Alert] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def steps_deleted(self) -> int:
        return self.expired_steps + self.orphan_steps

    @property
    def disk_bytes_freed(self) -> int:
        return max(self.disk_bytes_before - self.disk_bytes_after, 0)


def compaction_decision(free_bytes: int, file_bytes: int) -> Compaction:
    """Compact only when at least a quarter of the file, and MIN_FREE_BYTES, is free pages."""
    enough = free_bytes >= MIN_FREE_BYTES
    share = free_bytes * MIN_FREE_SHARE >= file_bytes and file_bytes > 0
    if enough and share:
        return Compaction(True, "compact_wanted", free_bytes, file_bytes)
    return Compaction(False, "compact_waits_share" if enough else "compact_waits_bytes", free_bytes, file_bytes)


async def read_live(store: SettingsStore, start: Settings) -> LiveSettings:
    """The two clean-up settings as stored now in kazma.db, else as they were at start."""
    stored = await store.overrides()

    def pick(name: str, fallback: Any) -> Any:
        key = f"time_travel.{name}"
        if key not in stored:
            return fallback
        try:
            return validate_override(key, stored[key])
        except SettingsError as err:
            log.warning("clean-up: ignoring the stored %s (%s); using %r", key, err.message, fallback)
            return fallback

    tt = start.time_travel
    return LiveSettings(pick("auto_maintain", tt.auto_maintain), pick("retention_days", tt.retention_days))


async def raise_alert(store: AlertStore, kind: str, said: Said, at: float | None = None) -> Alert:
    """Store an operator alert in kazma.db, log it at ERROR (in English) and count it."""
    alert = await store.add_alert(kind, said, at)
    log.error("operator alert %s (%s): %s", alert.id, kind, alert.message)
    ALERTS_TOTAL.labels(kind=kind).inc()
    return alert


class Maintenance:
    def __init__(
        self,
        settings: Settings,
        store: AppStore,
        snapshots: SqlSnapshotStore,
        conversation: SqlConversationStore,
        *,
        now: Callable[[], float] = time.time,
        orphan_grace: float = ORPHAN_GRACE,
        checkpoint_wait: float = CHECKPOINT_WAIT,
        claims: ReplicaStore | None = None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.snapshots = snapshots
        self.conversation = conversation
        self.now = now
        self.orphan_grace = orphan_grace
        self.checkpoint_wait = checkpoint_wait
        self.claims = claims  # set when replicas share the database: one pass a day among them
        self.last_report: PassReport | None = None
        self._lock = asyncio.Lock()
        # Markers a pass found left over: the next pass looks for them again (memory only:
        # writing them down would keep the very text that was deleted).
        self._unresolved: list[upkeep.Sample] = []
        self._running: asyncio.Task[Any] | None = None

    @classmethod
    def of(cls, core: Core, **options: Any) -> Maintenance:
        shared = core.replicas if database_url(core.settings) else None
        return cls(core.settings, core.store, core.snapshots, core.conversation, **{"claims": shared, **options})

    async def run_pass(self, *, by_hand: bool = False) -> PassReport:
        async with self._lock:
            self._running = asyncio.current_task()
            try:
                return await self._pass(by_hand)
            finally:
                self._running = None

    async def scheduled_pass(self) -> PassReport | None:
        """The scheduler's job: a pass that fails is an operator alert, and the schedule goes on.
        Replicas sharing a database each schedule it: the first to claim the (UTC) day runs it,
        the others skip that day (a failed pass is not run again by them: its alert says what to do)."""
        day = datetime.fromtimestamp(self.now(), UTC).date().isoformat()
        if self.claims is not None and not await self.claims.claim_day(JOB_NAME, day, replica_id()):
            log.info("clean-up: another replica runs the pass of %s", day)
            return None
        try:
            return await self.run_pass()
        except Exception as err:
            log.exception("clean-up: the pass failed")
            await raise_alert(
                self.store.alerts, ALERT_FAILED,
                Said("alert_cleanup_failed", {"error": f"{type(err).__name__}: {err}", "where": steps_space(self.snapshots.db).label}),
                self.now(),
            )
            return None

    async def stop(self) -> None:
        """Wait for a running pass to end (cancelled) before the stores close."""
        task = self._running
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _pass(self, by_hand: bool) -> PassReport:
        started = time.perf_counter()
        report = PassReport(self.now(), by_hand, await read_live(self.store.settings, self.settings))
        db = self.snapshots.db
        space = steps_space(db)
        report.where = space.label
        report.disk_bytes_before = await space.disk_bytes()
        report.step_bytes_before = (await self.snapshots.usage())[1]
        deletions: list[upkeep.Deletion] = []
        cleaning = report.live.auto_maintain or by_hand
        if cleaning:
            cutoff = report.started_at - report.live.retention_days * DAY
            report.cutoff = cutoff
            expired = await db.tx(lambda c: upkeep.delete_recording(c, "created_at < $1", (cutoff,), sample=space.scans_bytes))
            report.expired_steps = len(expired.step_ids)
            deletions.append(expired)
        swept = await self.sweep_orphans()
        deletions.extend(swept.deletions)
        await self.drop_expired_undos(report.started_at)
        report.orphan_chats, report.orphan_threads = len(swept.chats), swept.threads
        report.orphan_steps = sum(len(d.step_ids) for d in swept.deletions)
        report.checkpoints_per_chat = self.settings.history.checkpoints_per_chat
        report.checkpoints_pruned = await self.prune_history()
        room = await space.room()
        report.free_bytes, report.file_bytes = room.free_bytes, room.total_bytes
        if cleaning:
            report.compaction = compaction_decision(room.free_bytes, room.total_bytes)
            if report.compaction.wanted:
                await space.compact()
                report.compacted = True
        settled = await space.settle(self.checkpoint_wait)
        check = report.verification = await self._verify(deletions, settled)
        report.step_bytes_after = (await self.snapshots.usage())[1]
        report.disk_bytes_after = await space.disk_bytes()
        report.alerts = await self._alerts_for(report)
        report.seconds = time.perf_counter() - started
        self.last_report = report
        log.info(
            "clean-up: %d steps deleted (%d of deleted chats), %d checkpoints pruned, %s freed on disk, "
            "compacted: %s, checks %s, %.2f s",
            report.steps_deleted, report.orphan_steps, report.checkpoints_pruned, human_size(report.disk_bytes_freed),
            report.compacted, "passed" if check.passed else "FAILED", report.seconds,
        )
        return report

    # chats without a row --------------------------------------------------------------
    async def sweep_orphans(self) -> Swept:
        """Delete the steps and checkpoints of chats kazma.db no longer has."""
        swept = Swept()
        if await self.store.users.count_users() == 0:
            # Not a data folder in use (a kazma.db that is missing or new): every step would
            # look orphaned, so nothing is swept.
            return swept
        space = steps_space(self.snapshots.db)
        first_seen = asyncio.get_running_loop().time()
        steps, threads = await self._orphans()
        if not steps and not threads:
            return swept
        wait = self.orphan_grace - (asyncio.get_running_loop().time() - first_seen)
        if wait > 0:
            await asyncio.sleep(wait)
        again_steps, again_threads = await self._orphans()
        for chat_id in sorted(steps & again_steps):
            deletion = await self.snapshots.db.tx(
                functools.partial(upkeep.delete_recording, where="chat_id = $1", params=(chat_id,), sample=space.scans_bytes)
            )
            swept.deletions.append(deletion)
            swept.chats.add(chat_id)
        for thread_id in sorted(threads & again_threads):
            await self.conversation.adelete_thread(thread_id)
            swept.threads += 1
        if swept.chats or swept.threads:
            log.warning(
                "clean-up: swept the steps of %d and the checkpoints of %d chats that no longer exist",
                len(swept.chats), swept.threads,
            )
        return swept

    async def _orphans(self) -> tuple[set[str], set[str]]:
        chats = await self.store.chats.chat_ids()
        with_steps = await self.snapshots.db.run(upkeep.chats_with_steps)
        return with_steps - chats, await self._checkpoint_threads() - chats

    async def _checkpoint_threads(self) -> set[str]:
        return await self.conversation.thread_ids()

    async def drop_expired_undos(self, now: float) -> int:
        """What restores that can no longer be undone kept aside goes (an undo asked for would drop it too)."""
        rows = RewindRows(self.store.db)
        kept = UndoKeep(rows, self.snapshots, self.conversation)
        return sum([await kept.drop(chat_id, EXPIRED) for chat_id in await rows.expired_undos(now)])

    # the chat step history --------------------------------------------------------------
    async def prune_history(self) -> int:
        """Keep the newest history.checkpoints_per_chat checkpoints of every chat."""
        keep = self.settings.history.checkpoints_per_chat
        chats = await self.store.chats.chat_ids() & await self._checkpoint_threads()
        return sum([await self.conversation.trim(chat_id, keep) for chat_id in sorted(chats)])

    # the check ----------------------------------------------------------------------------
    async def _verify(self, deletions: list[upkeep.Deletion], settled: bool) -> Verification:
        ids = [i for d in deletions for i in d.step_ids]
        space = steps_space(self.snapshots.db)
        rows_left = await self.snapshots.db.run(lambda c: upkeep.steps_left(c, ids))
        samples = self._unresolved + _spread([d.samples for d in deletions], MAX_SAMPLES)
        markers = [s.marker for s in samples]
        found = await space.found(markers) if markers else set()
        held: set[int] = set()
        if found:
            hits = sorted(found)
            shared = await self.snapshots.db.run(lambda c: upkeep.held_by_live_rows(c, [markers[i] for i in hits]))
            held = {hits[i] for i in shared}
        left = found - held
        self._unresolved = [samples[i] for i in sorted(left)][:MAX_SAMPLES]
        return Verification(
            steps_deleted=len(ids), rows_left=rows_left, bodies_freed=sum(d.bodies_freed for d in deletions),
            samples=len(samples), samples_left=len(left), samples_shared=len(held), wal_busy=not settled,
            scanned=space.scans_bytes,
        )

    async def _alerts_for(self, report: PassReport) -> list[Alert]:
        check = report.verification
        if check is None or check.passed:
            return []
        raised = []
        if check.rows_left:
            raised.append(await raise_alert(
                self.store.alerts, ALERT_ROWS_LEFT,
                Said("alert_rows_left", {"deleted": check.steps_deleted, "left": check.rows_left, "where": report.where}),
                report.started_at,
            ))
        if check.samples_left:
            raised.append(await raise_alert(
                self.store.alerts, ALERT_TEXT_LEFT,
                Said(f"alert_text_left{'_held' if check.wal_busy else ''}", {"left": check.samples_left}),
                report.started_at,
            ))
        return raised


def _spread(groups: list[list[upkeep.Sample]], limit: int) -> list[upkeep.Sample]:
    """Up to limit samples, taken in turn from each chat of each deletion, distinct markers only."""
    queues: dict[tuple[int, str], list[upkeep.Sample]] = {}
    for g, samples in enumerate(groups):
        for sample in samples:
            queues.setdefault((g, sample.chat_id), []).append(sample)
    chosen: list[upkeep.Sample] = []
    seen: set[bytes] = set()
    position = 0
    while len(chosen) < limit and any(position < len(q) for q in queues.values()):
        for queue in queues.values():
            if position < len(queue) and queue[position].marker not in seen and len(chosen) < limit:
                seen.add(queue[position].marker)
                chosen.append(queue[position])
        position += 1
    return chosen
