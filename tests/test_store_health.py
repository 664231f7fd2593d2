"""/healthz tells the truth about each store (issue 14): a damaged one is named, alerted and counted,
and the rest of Kazma keeps serving. Real server, real SQLite files damaged as a disk or a stray
program damages them: garbage written over the file while the server runs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kazma_core.settings import Settings
from kazma_core.stores import audit_sql
from kazma_core.stores.engine import DatabaseError
from kazma_core.stores.sqlite import SqliteDB
from kazma_server.cli import main
from tests.conftest import Person
from tests.helpers import error_of, free_port, new_chat, say
from tests.http_server import RunningServer


def gauge(text: str, name: str, **labels: str) -> float | None:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return None


@pytest.mark.engines
async def test_healthz_names_every_store_when_all_are_whole(server: RunningServer, engine: str) -> None:
    """Broke: on PostgreSQL /healthz probed SQLite files that do not exist there."""
    async with server.client() as http:
        answer = await http.get("/healthz")
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "ok"
    names = {"sqlite": {"kazma.db", "snapshots.db", "time_travel_audit.db"},
             "postgresql": {"PostgreSQL schema kazma", "PostgreSQL schema kazma_steps", "PostgreSQL schema kazma_audit"}}
    assert names[engine] == body["stores"].keys()
    assert all(store == {"ok": True, "problem": None} for store in body["stores"].values())


async def test_a_store_file_taken_away_while_running_answers_503_and_serves_again_when_put_back(
    server: RunningServer, ann: Person, settings: Settings
) -> None:
    """A disk unmounted or a file moved: the server's open connection would go on answering from a
    file no one can see. Requests that need it answer 503 until it is back, then work, unrestarted."""
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "hello")
    aside = settings.snapshots_db.with_name("elsewhere.db")
    settings.snapshots_db.rename(aside)
    health = await ann.http.get("/healthz")
    assert health.status_code == 503
    assert health.json()["stores"]["snapshots.db"] == {"ok": False, "problem": "the file is missing"}
    error_of(await ann.http.get(f"/api/replay/snapshots/{chat}"), 503, "store_unavailable")
    assert (await say(ann.http, chat, "still chatting"))["reply"].startswith('You said: "still chatting"')
    assert not settings.snapshots_db.exists()  # no empty file made in its place

    aside.rename(settings.snapshots_db)
    steps = await ann.http.get(f"/api/replay/snapshots/{chat}")
    assert steps.status_code == 200 and steps.json()["snapshots"]
    assert (await ann.http.get("/healthz")).status_code == 200


async def test_a_store_damaged_while_running_is_reported_at_once_and_the_rest_keeps_serving(
    server: RunningServer, ann: Person, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Broke: with snapshots.db unreadable /healthz answered 200, and garbage written over the file
    while the server ran went unnoticed until a restart; then the advice said steps could not be
    listed while the list answered 200 from the connection's cache."""
    _owner, token = await server.add_user("olga", role="owner")
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "hello")
    for part in (settings.snapshots_db, settings.snapshots_db.with_name("snapshots.db-wal")):
        size = part.stat().st_size
        with part.open("r+b") as file:  # garbage over all of it, the write-ahead log too
            file.write((b"this is not a database any more " * (size // 32 + 1))[:size])

    async with server.client(token) as olga:
        with caplog.at_level(logging.ERROR, logger="kazma_core.health"):
            answer = await olga.get("/healthz")
        assert answer.status_code == 503
        body = answer.json()
        assert body["status"] == "damaged"
        assert body["stores"]["snapshots.db"]["ok"] is False
        assert body["stores"]["snapshots.db"]["problem"] == "file is not a database"
        assert body["stores"]["kazma.db"] == {"ok": True, "problem": None}
        assert str(settings.data_dir) not in answer.text
        assert [r.getMessage() for r in caplog.records if "store damaged" in r.getMessage()] == [
            (
                "store damaged: snapshots.db is damaged (file is not a database). Saved steps cannot be listed, "
                "restored or forked; chats go on. Stop Kazma, move snapshots.db aside (steps are never backed up) "
                "and start again: a new, empty one is made."
            )
        ]
        metrics = (await olga.get("/metrics")).text
        assert gauge(metrics, "kazma_store_healthy", store="snapshots.db") == 0
        assert gauge(metrics, "kazma_store_healthy", store="kazma.db") == 1
        alerts = (await olga.get("/api/alerts")).json()["alerts"]
        assert [a["kind"] for a in alerts] == ["store_damaged"]
        assert alerts[0]["message"].startswith("snapshots.db is damaged (file is not a database).")
        # Kept as its sentence's id and parameters too, so a page says it in the owner's language.
        assert alerts[0]["message_id"] == "store_damaged_steps"
        assert alerts[0]["params"] == {"label": "snapshots.db", "problem": "file is not a database"}
        # Reported once, not on every probe.
        assert (await olga.get("/healthz")).status_code == 503
        assert len((await olga.get("/api/alerts")).json()["alerts"]) == 1

    # The rest keeps serving: chats, transcripts, new chats.
    assert (await say(ann.http, chat, "still there?"))["reply"].startswith('You said: "still there?"')
    assert (await ann.http.get(f"/api/chats/{chat}/messages")).status_code == 200
    # What the advice says is true: steps cannot be listed (the server's connection would still
    # have answered from what it cached).
    steps = await ann.http.get(f"/api/replay/snapshots/{chat}")
    assert "saved steps cannot be read" in error_of(steps, 503, "store_unavailable")["message"]
    assert str(settings.data_dir) not in steps.text


async def test_healthz_needs_no_sign_in_and_shows_no_path(server: RunningServer, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=server.url, trust_env=False) as anyone:
        answer = await anyone.get("/healthz")
    assert answer.status_code == 200 and str(settings.data_dir) not in answer.text


async def test_a_damaged_kazma_db_is_named_logged_and_counted_though_it_cannot_hold_the_alert(
    server: RunningServer, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    _, token = await server.add_user("ann")
    async with server.client(token) as http:
        chat = await new_chat(http)
        assert (await http.get("/healthz")).status_code == 200
        for part in (settings.kazma_db, settings.kazma_db.with_name("kazma.db-wal")):
            if part.exists():
                size = part.stat().st_size
                with part.open("r+b") as file:
                    file.write((b"garbage over the chats " * (size // 23 + 1))[:size])
        with caplog.at_level(logging.ERROR, logger="kazma_core.health"):
            answer = await http.get("/healthz")
        assert answer.status_code == 503
        assert answer.json()["stores"]["kazma.db"] == {"ok": False, "problem": "file is not a database"}
        assert any(r.getMessage().startswith("store damaged: kazma.db is damaged (file is not a database). Stop Kazma")
                   for r in caplog.records)
        assert gauge((await http.get("/metrics")).text, "kazma_store_healthy", store="kazma.db") == 0
        # Every request needs it (the sign-in first): 503 with what to do, never a page from the cache.
        for ask in (http.get("/api/chats"), http.post(f"/api/chats/{chat}/messages", json={"text": "hi"})):
            assert "Try again in a minute" in error_of(await ask, 503, "store_unavailable")["message"]


# -- a store that cannot be read when `kazma serve` starts ---------------------------------------

KAZMA = str(Path(sys.executable).with_name("kazma"))


def garbage_over(path: Path) -> None:
    for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        part.unlink(missing_ok=True)
    path.write_bytes(b"this is not a database at all " * 200)


@contextlib.contextmanager
def kazma_serve(data: Path, port: int) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "KAZMA_CONFIG": str(data.parent / "none.toml")}
    server = subprocess.Popen([KAZMA, "serve", "--data-dir", str(data), "--port", str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield server
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


def kazma_user(data: Path, name: str) -> str:
    """`kazma users add NAME`, run in this process (its own thread, as a shell would run it): only the
    servers need processes of their own, and each start of one costs seconds of imports."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), concurrent.futures.ThreadPoolExecutor(1) as thread:
        assert thread.submit(main, ["users", "add", name, "--data-dir", str(data)]).result(timeout=60) == 0
    return out.getvalue().strip().splitlines()[-1]


async def answering(url: str, server: subprocess.Popen[str]) -> None:
    async with httpx.AsyncClient(base_url=url, trust_env=False) as http, asyncio.timeout(60):
        while server.poll() is None:
            with contextlib.suppress(httpx.TransportError):
                await http.get("/healthz")
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"kazma serve stopped: {server.communicate()[1]}")


@pytest.mark.parametrize("damaged", ["snapshots.db", "time_travel_audit.db"])
async def test_kazma_serve_starts_with_a_garbage_store_and_serves_everything_else(tmp_path: Path, damaged: str) -> None:
    """Broke: garbage in snapshots.db stopped `kazma serve` with a 30-line traceback ending in
    `sqlite3.DatabaseError: file is not a database` (start-up's database check)."""
    data = tmp_path / "data"
    token = kazma_user(data, "ann")
    garbage_over(data / damaged)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with kazma_serve(data, port) as server:
        await answering(url, server)
        async with httpx.AsyncClient(base_url=url, trust_env=False, timeout=30,
                                     headers={"Authorization": f"Bearer {token}"}) as ann:
            health = await ann.get("/healthz")
            assert health.status_code == 503
            assert health.json()["stores"][damaged] == {"ok": False, "problem": "file is not a database"}
            assert gauge((await ann.get("/metrics")).text, "kazma_store_healthy", store=damaged) == 0

            chat = await new_chat(ann)
            assert (await say(ann, chat, "hello"))["reply"].startswith('You said: "hello"')
            steps = await ann.get(f"/api/replay/snapshots/{chat}")
            if damaged == "snapshots.db":
                body = error_of(steps, 503, "store_unavailable")
                assert "saved steps cannot be read" in body["message"] and str(data) not in steps.text
            else:
                step = steps.json()["snapshots"][-1]["snapshot_id"]
                forked = await ann.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": step})
                assert "Try again in a minute" in error_of(forked, 503, "store_unavailable")["message"]
                assert len((await ann.get("/api/chats")).json()["chats"]) == 1  # nothing was done
    out, err = server.communicate()
    assert "Traceback" not in out + err, err
    assert f"{damaged}: file is not a database; Kazma starts without it" in err
    assert err.count(f"store damaged: {damaged} is damaged") == 1  # reported once


async def test_a_store_refusing_its_damaged_file_has_ended_its_thread_when_the_refusal_is_answered(tmp_path: Path) -> None:
    """Broke (once in a full run): `kazma serve` starting with garbage in time_travel_audit.db logged
    a traceback, "Event loop is closed". Refused, aiosqlite's thread still had its stop to answer,
    and the start's event loop had ended before it did."""
    path = tmp_path / "time_travel_audit.db"
    garbage_over(path)
    before = set(threading.enumerate())
    db = SqliteDB(path, audit_sql.MIGRATIONS)
    with pytest.raises(DatabaseError, match="file is not a database"):
        await db.run(lambda conn: None)
    assert [t for t in threading.enumerate() if t not in before and "_connection_worker_thread" in t.name] == []
    await db.close()


def test_kazma_serve_stops_in_one_line_naming_kazma_db_when_it_is_garbage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kazma.db holds the sign-in and every chat: a server without it would serve nothing but 503s.
    (The command runs in the test's process: it stops before serving, with nothing to kill.)"""
    data = tmp_path / "data"
    kazma_user(data, "ann")
    garbage_over(data / "kazma.db")
    capsys.readouterr()
    assert main(["serve", "--data-dir", str(data), "--port", str(free_port())]) == 2
    done = capsys.readouterr()
    assert done.err.strip().splitlines() == [
        (
            "kazma: kazma.db: file is not a database. Kazma cannot start without it: fix it (a damaged file: put "
            "back your latest backup, `kazma backup restore PATH`), then start again."
        )
    ]
    assert "Kazma is starting" not in done.out
