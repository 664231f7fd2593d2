"""The daily clean-up: when it runs, what it deletes, when it compacts, and the alert when a deletion did not take."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import sqlite3
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from kazma_core.catalogue.errors import Said
from kazma_core.core import Core
from kazma_core.maintenance import ALERT_TEXT_LEFT, DAY, MIN_FREE_BYTES, Maintenance, compaction_decision
from kazma_core.messages import encode_message
from kazma_core.schedule import JOB_ID, schedule_daily, start_scheduler, stop_scheduler
from kazma_core.settings import Settings
from kazma_core.stores.snapshots import Budgets, NewStep
from kazma_core.stores.types import User
from kazma_core.time_travel import MessageIds
from kazma_server.cli import main
from tests.conftest import make_settings, metric
from tests.http_server import serve_kazma

NOW = 1_900_000_000.0  # the tests' clock: a fixed time, moved by hand
ROOMY = Budgets(100_000, 10_000_000, 100_000, 1 << 40, 1 << 44, 1 << 30)
MB = 1024 * 1024


class Clock:
    def __init__(self, at: float = NOW) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


def at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


async def put_steps(
    core: Core, chat_id: str, *, saved_at: float, steps: int = 1, body_bytes: int = 200, tag: str = ""
) -> list[str]:
    """Steps of one conversation, each holding every message so far (as capture saves them)."""
    tag = tag or uuid.uuid4().hex
    messages: list[BaseMessage] = []
    ids = []
    for n in range(steps):
        # random bytes as base64: text that does not compress, so the byte counts below hold
        noise = base64.b64encode(os.urandom(body_bytes * 3 // 4)).decode()
        messages.append(HumanMessage(f"{tag} question {n} {noise}", id=uuid.uuid4().hex))
        messages.append(AIMessage(f"{tag} answer {n}", id=uuid.uuid4().hex))
        held = list(messages)
        step = NewStep(
            uuid.uuid4().hex, chat_id, n + 1, 0, saved_at, "m", [f"{tag} question {n}"], {"turn_index": n + 1},
            MessageIds(held), lambda i, held=held: encode_message(held[i]),
        )
        ids.append((await core.snapshots.put(step, ROOMY)).info.id)
    return ids


async def new_chat(core: Core, user: User) -> str:
    return (await core.store.chats.create_chat(user.id, "t")).id


async def step_ids(core: Core) -> set[str]:
    return {s.id for t in await core.snapshots.threads() for s in await core.snapshots.list_steps(t.chat_id)}


def file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def free_and_total(path: Path) -> tuple[int, int]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        return conn.execute("PRAGMA freelist_count").fetchone()[0] * size, conn.execute("PRAGMA page_count").fetchone()[0] * size


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def upkeep(core: Core, clock: Clock) -> Maintenance:
    return Maintenance.of(core, now=clock, orphan_grace=0.0, checkpoint_wait=0.05)


@pytest.fixture
async def owner(core: Core) -> User:
    return await core.store.users.add_user("olga", "owner")


# the schedule -------------------------------------------------------------------------------------
async def test_the_first_pass_is_two_minutes_after_start_then_one_a_day(upkeep: Maintenance, clock: Clock) -> None:
    delay = upkeep.settings.server.first_cleanup_seconds
    job = schedule_daily(AsyncIOScheduler(timezone=UTC), upkeep.scheduled_pass, clock(), delay)
    assert job.trigger.start_date == at(NOW + delay) and delay == 120
    assert job.trigger.interval == timedelta(days=1)
    first = job.trigger.get_next_fire_time(None, at(NOW))
    assert first == at(NOW + 120)
    assert job.trigger.get_next_fire_time(first, first) == at(NOW + 120 + DAY)
    assert job.trigger.get_next_fire_time(at(NOW + 120 + DAY), at(NOW + 120 + DAY)) == at(NOW + 120 + 2 * DAY)
    # Started on the event loop, the job's first run is the same instant.
    scheduler = start_scheduler(upkeep)
    try:
        assert scheduler.get_job(JOB_ID).next_run_time == at(NOW + 120)
    finally:
        await stop_scheduler(scheduler, upkeep)


async def test_kazma_serve_schedules_the_clean_up_whose_job_runs_a_pass(settings: Settings) -> None:
    before = time.time()
    async with serve_kazma(settings) as server:
        after = time.time()
        job = server.app.state.scheduler.get_job(JOB_ID)
        assert before + 120 <= job.next_run_time.timestamp() <= after + 120
        maintenance: Maintenance = server.app.state.maintenance
        assert maintenance.last_report is None
        job.modify(next_run_time=datetime.now(UTC))
        async with asyncio.timeout(10):
            while maintenance.last_report is None:
                await asyncio.sleep(0.02)
        assert maintenance.last_report.verification is not None and maintenance.last_report.verification.passed


# live settings and retention ----------------------------------------------------------------------
async def test_each_pass_reads_retention_and_auto_maintain_from_kazma_db(
    core: Core, owner: User, upkeep: Maintenance, clock: Clock
) -> None:
    chat = await new_chat(core, owner)
    await put_steps(core, chat, saved_at=NOW - 40 * DAY)
    ten = await put_steps(core, chat, saved_at=NOW - 10 * DAY)
    one = await put_steps(core, chat, saved_at=NOW - 1 * DAY)
    first = await upkeep.run_pass()
    assert (first.live.retention_days, first.expired_steps) == (30, 1)
    assert await step_ids(core) == {*ten, *one}

    await core.store.settings.set_override("time_travel.retention_days", 5)
    second = await upkeep.run_pass()
    assert (second.live.retention_days, second.expired_steps) == (5, 1)
    assert await step_ids(core) == set(one)

    await core.store.settings.set_override("time_travel.auto_maintain", False)
    clock.at += 30 * DAY
    third = await upkeep.run_pass()
    assert not third.live.auto_maintain and third.cutoff is None and third.expired_steps == 0
    assert await step_ids(core) == set(one)
    # Asked for by hand (kazma maintain), the pass cleans even with auto_maintain off.
    assert (await upkeep.run_pass(by_hand=True)).expired_steps == 1


async def test_retention_deletes_exactly_the_steps_older_than_retention_days(
    core: Core, owner: User, upkeep: Maintenance
) -> None:
    cutoff = NOW - 30 * DAY
    chat = await new_chat(core, owner)
    older = await put_steps(core, chat, saved_at=cutoff - 1, steps=3, tag="older")
    on_the_line = await put_steps(core, chat, saved_at=cutoff, steps=1, tag="line")
    newer = await put_steps(core, await new_chat(core, owner), saved_at=cutoff + 1, steps=2, tag="newer")
    report = await upkeep.run_pass()
    assert report.expired_steps == 3
    assert await step_ids(core) == {*on_the_line, *newer}
    assert not set(older) & await step_ids(core)
    # The step kept in the same chat still reads whole: the bodies it shares were not freed.
    kept = await core.snapshots.get(chat, on_the_line[0])
    assert kept is not None and len(kept.state["messages"]) == 2
    check = report.verification
    assert check is not None and check.passed and check.rows_left == 0 and check.steps_deleted == 3


# compaction ---------------------------------------------------------------------------------------
async def fill(core: Core, owner: User, megabytes: float, saved_at: float) -> None:
    """About this many MB of steps, in chats of 1 MB each (so deleting them frees their bodies)."""
    for _ in range(round(megabytes)):
        await put_steps(core, await new_chat(core, owner), saved_at=saved_at, steps=4, body_bytes=256 * 1024)


def test_the_compaction_thresholds_are_a_quarter_of_the_file_and_8_mb() -> None:
    assert MIN_FREE_BYTES == 8 * MB
    assert compaction_decision(8 * MB, 32 * MB).wanted
    assert not compaction_decision(8 * MB - 1, 32 * MB - 4).wanted  # a quarter, but under 8 MB
    assert not compaction_decision(8 * MB, 32 * MB + 1).wanted  # 8 MB, but under a quarter
    assert compaction_decision(20 * MB, 21 * MB).wanted


async def test_a_quarter_free_but_under_8_mb_is_not_compacted(core: Core, owner: User, upkeep: Maintenance) -> None:
    await fill(core, owner, 4, NOW - 40 * DAY)
    await fill(core, owner, 2, NOW)
    report = await upkeep.run_pass()
    free, total = free_and_total(core.settings.snapshots_db)
    assert free * 4 >= total and free < MIN_FREE_BYTES
    assert not report.compacted and report.compaction is not None
    assert "waits for at least 8 MB" in report.compaction.reason
    assert report.disk_bytes_after == core.settings.snapshots_db.stat().st_size == total


async def test_8_mb_and_a_quarter_free_is_compacted(core: Core, owner: User, upkeep: Maintenance) -> None:
    await fill(core, owner, 10, NOW - 40 * DAY)
    await fill(core, owner, 6, NOW)
    report = await upkeep.run_pass()
    assert report.free_bytes >= MIN_FREE_BYTES and report.free_bytes * 4 >= report.file_bytes
    assert report.compacted
    free, total = free_and_total(core.settings.snapshots_db)
    assert free == 0 and total == core.settings.snapshots_db.stat().st_size
    assert total <= report.file_bytes - report.free_bytes  # the free pages went back to the disk
    assert report.disk_bytes_freed >= MIN_FREE_BYTES
    assert report.verification is not None and report.verification.passed


async def test_8_mb_free_but_under_a_quarter_is_not_compacted(core: Core, owner: User, upkeep: Maintenance) -> None:
    await fill(core, owner, 9, NOW - 40 * DAY)
    await fill(core, owner, 29, NOW)
    report = await upkeep.run_pass()
    free, total = free_and_total(core.settings.snapshots_db)
    assert free >= MIN_FREE_BYTES and free * 4 < total
    assert not report.compacted and report.compaction is not None
    assert "waits for at least a quarter" in report.compaction.reason


# the check and the alert --------------------------------------------------------------------------
@contextlib.contextmanager
def reader_holding(path: Path) -> Iterator[sqlite3.Connection]:
    """Another connection in a read transaction: SQLite must keep the file as it was when it began."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("BEGIN")
        conn.execute("SELECT count(*) FROM steps").fetchone()
        yield conn
    finally:
        conn.rollback()
        conn.close()


async def test_a_deletion_held_back_by_a_reader_raises_an_operator_alert(
    core: Core, owner: User, upkeep: Maintenance, caplog: pytest.LogCaptureFixture
) -> None:
    """Honest failure, nothing faked: a reader that began before the delete pins the old pages, so the
    checkpoint cannot write the zeroed pages back and the deleted text really stays in the file."""
    chat = await new_chat(core, owner)
    await put_steps(core, chat, saved_at=NOW - 40 * DAY, steps=3, tag="secret-7f3a")
    counted = metric("kazma_time_travel_alerts_total", kind=ALERT_TEXT_LEFT)
    with reader_holding(core.settings.snapshots_db), caplog.at_level(logging.ERROR, logger="kazma_core.maintenance"):
        report = await upkeep.run_pass()
        assert b"secret-7f3a" in file_bytes(core.settings.snapshots_db)
    assert report.expired_steps == 3
    check = report.verification
    assert check is not None and not check.passed and check.rows_left == 0 and check.samples_left > 0 and check.wal_busy
    [alert] = report.alerts
    assert alert.kind == ALERT_TEXT_LEFT and "still in snapshots.db" in alert.message
    assert [a.id for a in await core.store.alerts.alerts()] == [alert.id]
    assert metric("kazma_time_travel_alerts_total", kind=ALERT_TEXT_LEFT) == counted + 1
    assert any(r.levelno == logging.ERROR and "operator alert" in r.getMessage() for r in caplog.records)

    # The reader gone, the next pass looks for the same text again, and finds it gone.
    again = await upkeep.run_pass()
    assert again.verification is not None and again.verification.passed
    assert again.verification.samples >= check.samples_left and not again.alerts
    assert b"secret-7f3a" not in file_bytes(core.settings.snapshots_db)
    # The alert stays shown until the owner acknowledges it.
    assert [a.id for a in await core.store.alerts.alerts()] == [alert.id]
    await core.store.alerts.acknowledge_alert(alert.id)
    assert await core.store.alerts.alerts() == []


async def test_a_pass_with_nothing_held_leaves_no_deleted_text_in_the_file(
    core: Core, owner: User, upkeep: Maintenance
) -> None:
    chats = [await new_chat(core, owner) for _ in range(6)]
    for n, chat in enumerate(chats):
        await put_steps(core, chat, saved_at=NOW - (40 if n % 2 else 1) * DAY, steps=3, tag=f"chat-{n}-text")
    report = await upkeep.run_pass()
    assert report.expired_steps == 9 and report.verification is not None and report.verification.passed
    data = file_bytes(core.settings.snapshots_db)
    assert [f"chat-{n}-text".encode() in data for n in range(6)] == [n % 2 == 0 for n in range(6)]


# chats that no longer exist, and the chat step history ----------------------------------------------
async def test_the_steps_and_checkpoints_of_a_chat_without_a_row_are_swept(core: Core, owner: User) -> None:
    upkeep = Maintenance.of(core, orphan_grace=0.0)  # today's clock: the steps are new, not expired
    kept, lost = await core.chats.create(owner, "kept"), await core.chats.create(owner, "lost")
    for chat in (kept, lost):
        await core.turns.send(chat.id, "remember: the sea is green")
    await core.store.chats.delete_chat(lost.id)  # as if the process died between the chat's row and its steps
    report = await upkeep.run_pass()
    assert (report.orphan_chats, report.orphan_threads) == (1, 1) and report.orphan_steps == 2
    assert await core.snapshots.list_steps(lost.id) == []
    assert len(await core.snapshots.list_steps(kept.id)) == 2
    with contextlib.closing(sqlite3.connect(core.settings.kazma_db)) as conn:
        threads = {t for (t,) in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert threads == {kept.id}
    assert report.verification is not None and report.verification.passed


async def test_a_chat_whose_row_arrives_within_the_grace_is_not_swept(core: Core, owner: User, clock: Clock) -> None:
    """A fork writes its step before its chat row: a sweep in between must not take the step."""
    upkeep = Maintenance.of(core, now=clock, orphan_grace=0.5, checkpoint_wait=0.05)
    forking = uuid.uuid4().hex
    await put_steps(core, forking, saved_at=NOW)
    running = asyncio.create_task(upkeep.run_pass())
    await asyncio.sleep(0.1)
    await core.store.chats.create_chat(owner.id, "the fork", chat_id=forking)
    report = await running
    assert report.orphan_chats == 0 and len(await core.snapshots.list_steps(forking)) == 1


async def test_the_chat_step_history_pass_prunes_every_chat_to_its_setting(
    core: Core, owner: User, tmp_path: Path, clock: Clock
) -> None:
    chats = [await core.chats.create(owner, f"c{n}") for n in range(3)]
    for chat in chats:
        for text in ("steps 3", "hello", "steps 2"):
            await core.turns.send(chat.id, text)

    def counts() -> dict[str, int]:
        with contextlib.closing(sqlite3.connect(core.settings.kazma_db)) as conn:
            return dict(conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY thread_id").fetchall())

    assert all(n > 6 for n in counts().values())
    # The server restarted with a smaller history: the pass prunes every chat, not only the next one to run a turn.
    smaller = make_settings(core.settings.data_dir, history={"checkpoints_per_chat": 6})
    upkeep = Maintenance(smaller, core.store, core.snapshots, core.conversation, now=clock, orphan_grace=0.0)
    report = await upkeep.run_pass()
    assert counts() == {chat.id: 6 for chat in chats}
    assert report.checkpoints_per_chat == 6 and report.checkpoints_pruned > 0
    state = await core.turns.graph.aget_state(core.turns.config(chats[0].id))
    assert [m.content for m in state.values["messages"] if m.type == "human"] == ["steps 3", "hello", "steps 2"]


# kazma maintain ---------------------------------------------------------------------------------------
async def seed_folder(settings: Settings, old: int, new: int) -> None:
    core = await Core.open(settings)
    try:
        owner = await core.store.users.add_user("olga", "owner")
        now = time.time()
        await put_steps(core, await new_chat(core, owner), saved_at=now - 40 * DAY, steps=old, tag="old-chat")
        await put_steps(core, await new_chat(core, owner), saved_at=now - DAY, steps=new, tag="new-chat")
    finally:
        await core.close()


def test_kazma_maintain_prints_what_the_pass_did(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = make_settings(tmp_path / "data")
    asyncio.run(seed_folder(settings, old=3, new=2))
    assert main(["maintain", "--data-dir", str(settings.data_dir)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"Clean-up of {settings.snapshots_db}"
    assert out[1] == "  settings now: time_travel.retention_days = 30, time_travel.auto_maintain = on"
    assert out[2].startswith("  Steps older than 30 days (saved before ") and out[2].endswith("): 3 deleted")
    assert out[3] == "  Chats that no longer exist: none left a step or a checkpoint behind"
    assert out[4] == "  Chat step history: 0 checkpoints deleted (the newest 200 kept per chat)"
    assert out[5].startswith("  Saved steps: ") and out[5].endswith(" freed)")
    assert out[6].startswith("  Not compacted: ") and out[6].endswith("compaction waits for at least 8 MB")
    assert out[7].startswith("  snapshots.db on disk: ")
    assert out[8] == (
        "  Checks passed: 0 of 3 deleted steps left; 0 of 6 text samples of 6 freed messages left in the file or its WAL"
        " (0 also held by steps kept)"
    )
    assert out[9].startswith("  Took ") and len(out) == 10


def test_kazma_maintain_exits_1_and_names_the_alert_when_a_deletion_did_not_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = make_settings(tmp_path / "data")
    asyncio.run(seed_folder(settings, old=2, new=1))
    with reader_holding(settings.snapshots_db):
        assert main(["maintain", "--data-dir", str(settings.data_dir)]) == 1
    captured = capsys.readouterr()
    assert "  Checks FAILED: 0 of 2 deleted steps left; 4 of 4 text samples" in captured.out
    assert captured.err.startswith("kazma: alert 1 (cleanup_text_left): The clean-up deleted saved steps")


# the owner sees the alert over HTTP ------------------------------------------------------------------
async def test_the_owner_sees_an_alert_until_acknowledging_it(settings: Settings) -> None:
    async with serve_kazma(settings) as server:
        owner, owner_token = await server.add_user("olga", "owner")
        _, user_token = await server.add_user("ann")
        core = server.core
        await put_steps(core, await new_chat(core, owner), saved_at=time.time() - 40 * DAY, tag="held-back")
        maintenance: Maintenance = server.app.state.maintenance
        with reader_holding(settings.snapshots_db):
            server.app.state.scheduler.get_job(JOB_ID).modify(next_run_time=datetime.now(UTC))
            async with asyncio.timeout(10):
                while maintenance.last_report is None:
                    await asyncio.sleep(0.02)
        async with server.client(owner_token) as http, server.client(user_token) as stranger:
            listed = (await http.get("/api/alerts")).json()["alerts"]
            assert [a["kind"] for a in listed] == [ALERT_TEXT_LEFT] and listed[0]["acknowledged_at"] is None
            refused = await stranger.get("/api/alerts")
            assert refused.status_code == 403 and refused.json()["error"] == "forbidden"
            assert (await stranger.post(f"/api/alerts/{listed[0]['id']}/ack")).status_code == 403
            acked = await http.post(f"/api/alerts/{listed[0]['id']}/ack")
            assert acked.status_code == 200 and acked.json()["acknowledged_at"] is not None
            assert (await http.get("/api/alerts")).json() == {"alerts": []}
            everything = (await http.get("/api/alerts", params={"include_acknowledged": "true"})).json()["alerts"]
            assert [a["id"] for a in everything] == [listed[0]["id"]]
            missing = await http.post("/api/alerts/999/ack")
            assert missing.status_code == 404 and missing.json()["error"] == "not_found"
            exposed = (await http.get("/metrics")).text
            assert f'kazma_time_travel_alerts_total{{kind="{ALERT_TEXT_LEFT}"}}' in exposed


async def test_an_alert_kept_before_its_sentence_id_was_kept_still_reads_in_english(settings: Settings) -> None:
    """Alerts stored by an older Kazma have their English message only: they list as they were, and
    one kept now carries its sentence's id and parameters beside the same English."""
    async with serve_kazma(settings) as server:
        _, owner_token = await server.add_user("olga", "owner")
        store = server.core.store.alerts
        await store.db.tx(lambda c: c.execute(
            "INSERT INTO alerts (kind, message, created_at) VALUES ($1, $2, $3)", (ALERT_TEXT_LEFT, "Old words.", 1.0),
        ))
        kept = await store.add_alert(ALERT_TEXT_LEFT, Said("alert_text_left", {"left": 2}), 2.0)
        assert kept.text("ar").startswith("حذف التنظيف خطوات محفوظة، لكن نص 2 رسالة محذوفة")
        async with server.client(owner_token) as http:
            listed = (await http.get("/api/alerts")).json()["alerts"]
        assert [(a["message"], a["message_id"], a["params"]) for a in listed] == [
            (kept.message, "alert_text_left", {"left": 2}),
            ("Old words.", None, {}),
        ]
        assert kept.message.startswith("The clean-up deleted saved steps, but text of 2 deleted messages")
