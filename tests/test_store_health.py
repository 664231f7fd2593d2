"""/healthz tells the truth about each store (issue 14): a damaged one is named, alerted and counted,
and the rest of Kazma keeps serving. Real server, real SQLite files damaged as a disk or a stray
program damages them: garbage written over the file while the server runs."""

from __future__ import annotations

import logging

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kazma_core.settings import Settings
from tests.conftest import Person
from tests.http_server import RunningServer
from tests.helpers import new_chat, say


def gauge(text: str, name: str, **labels: str) -> float | None:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return None


async def test_healthz_names_every_store_when_all_are_whole(server: RunningServer) -> None:
    async with server.client() as http:
        answer = await http.get("/healthz")
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "ok"
    assert {"kazma.db", "snapshots.db", "time_travel_audit.db"} == body["stores"].keys()
    assert all(store == {"ok": True, "problem": None} for store in body["stores"].values())


async def test_a_store_damaged_while_running_is_reported_at_once_and_the_rest_keeps_serving(
    server: RunningServer, ann: Person, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """Broke: with snapshots.db unreadable /healthz answered 200, and garbage written over the file
    while the server ran went unnoticed until a restart."""
    owner, token = await server.add_user("olga", role="owner")
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
            "store damaged: snapshots.db is damaged (file is not a database). Saved steps cannot be listed, "
            "restored or forked; chats go on. Stop Kazma, move snapshots.db aside (steps are never backed up) "
            "and start again: a new, empty one is made."
        ]
        metrics = (await olga.get("/metrics")).text
        assert gauge(metrics, "kazma_store_healthy", store="snapshots.db") == 0
        assert gauge(metrics, "kazma_store_healthy", store="kazma.db") == 1
        alerts = (await olga.get("/api/alerts")).json()["alerts"]
        assert [a["kind"] for a in alerts] == ["store_damaged"]
        assert alerts[0]["message"].startswith("snapshots.db is damaged (file is not a database).")
        # Reported once, not on every probe.
        assert (await olga.get("/healthz")).status_code == 503
        assert len((await olga.get("/api/alerts")).json()["alerts"]) == 1

    # The rest keeps serving: chats, transcripts, new chats.
    assert (await say(ann.http, chat, "still there?"))["reply"].startswith('You said: "still there?"')
    assert (await ann.http.get(f"/api/chats/{chat}/messages")).status_code == 200
    steps = await ann.http.get(f"/api/replay/snapshots/{chat}")
    assert steps.status_code in (200, 503)
    if steps.status_code == 503:
        assert steps.json()["error"] == "store_unavailable" and str(settings.data_dir) not in steps.text


async def test_healthz_needs_no_sign_in_and_shows_no_path(server: RunningServer, settings: Settings) -> None:
    async with httpx.AsyncClient(base_url=server.url, trust_env=False) as anyone:
        answer = await anyone.get("/healthz")
    assert answer.status_code == 200 and str(settings.data_dir) not in answer.text


async def test_a_damaged_kazma_db_is_named_logged_and_counted_though_it_cannot_hold_the_alert(
    server: RunningServer, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    async with server.client() as http:
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
