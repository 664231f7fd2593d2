"""Forgotten means gone: what a restore took back, once its undo is over, and what a deletion or a
forgetting removes, is in no file of the data folder and in no row of any table.

Over real HTTP, on both engines. On SQLite every file of the data folder is read as bytes (the
-wal files too), and every row of every table of its databases is read with its compressed
blobs opened; on PostgreSQL every row of every table of Kazma's schemas is read so.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg
import pytest

from kazma_core.maintenance import Maintenance
from kazma_core.settings import Settings
from tests.conftest import Person
from tests.helpers import new_chat, said, say
from tests.http_server import RunningServer
from tests.test_http_replay import last_step_of_turn, ok, step_ids

# The same behaviour on both store engines.
pytestmark = pytest.mark.engines()


def _holds(value: Any, marker: bytes) -> bool:
    if isinstance(value, str):
        return marker in value.encode()
    if isinstance(value, (bytes, memoryview)):
        raw = bytes(value)
        if marker in raw:
            return True
        try:  # a long body, a checkpoint's fields: kept compressed
            return marker in zlib.decompress(raw)
        except zlib.error:
            return False
    return False


def _rows_holding(tables: Iterable[tuple[str, Iterable[Sequence[Any]]]], marker: bytes) -> list[str]:
    return [name for name, rows in tables if any(_holds(v, marker) for row in rows for v in row)]


def traces(settings: Settings, text: str) -> list[str]:
    """Every place the text is still in: a file of the data folder, or a table's rows."""
    marker = text.encode()
    found = [
        str(path.relative_to(settings.data_dir))
        for path in sorted(settings.data_dir.rglob("*"))
        if path.is_file() and marker in path.read_bytes()
    ]
    url = settings.database.url.get_secret_value()
    if url:
        with psycopg.connect(url) as pg:
            names = pg.execute(
                "SELECT table_schema, table_name FROM information_schema.tables"
                " WHERE table_schema LIKE 'kazma%%' AND table_type = 'BASE TABLE'"
            ).fetchall()
            found += _rows_holding(
                ((f"{s}.{t}", pg.execute(f'SELECT * FROM "{s}"."{t}"').fetchall()) for s, t in names), marker
            )
        return found
    for path in sorted(settings.data_dir.glob("*.db")):
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            found += _rows_holding(
                ((f"{path.name}:{t}", conn.execute(f'SELECT * FROM "{t}"').fetchall()) for t in names), marker
            )
        finally:
            conn.close()
    return found


def of_steps_or_memories(places: list[str]) -> list[str]:
    """The places that are saved steps or memories (what a forgetting removes; the chat stays)."""
    return [p for p in places if "snapshots" in p or "kazma_steps" in p or "facts" in p]


def secret() -> str:
    return f"LINGER-{uuid.uuid4().hex[:12]}"


async def restore(http: Any, chat: str, step: str) -> None:
    ok(await http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": step}))


async def test_what_a_restore_took_back_is_gone_once_the_chat_moves_on(
    server: RunningServer, ann: Person, settings: Settings
) -> None:
    """Regression: after a restore and the chat's next turns, the text the restore took back was
    still in kazma.db (the checkpoints from before the restore, their message bodies and writes)
    and in both write-ahead logs."""
    text = secret()
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "alpha")
    await say(ann.http, chat, f"remember: my code is {text}")
    await restore(ann.http, chat, await last_step_of_turn(ann.http, chat, 1))
    assert traces(settings, text), "kept aside for the undo, so it must be found"
    await say(ann.http, chat, "next")
    assert traces(settings, text) == []
    for i in range(10):
        await say(ann.http, chat, f"more {i}")
    assert traces(settings, text) == []
    asked = [m for role, m in await said(ann.http, chat) if role == "user"]
    assert asked == ["alpha", "next", *[f"more {i}" for i in range(10)]]


async def test_a_newer_restore_ends_what_the_last_one_kept(server: RunningServer, ann: Person, settings: Settings) -> None:
    """Only the last restore can be undone: undoing a second restore brings back the chat as the
    first one left it, and nothing of what the first one took back."""
    text = secret()
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "alpha")
    await say(ann.http, chat, f"later {text}")
    first = await last_step_of_turn(ann.http, chat, 1)
    await restore(ann.http, chat, first)
    await restore(ann.http, chat, first)
    await server.core.kept.purged()  # the files' write-ahead logs are emptied after the answer
    assert traces(settings, text) == []
    ok(await ann.http.post("/api/replay/undo", json={"thread_id": chat}))
    assert traces(settings, text) == []
    assert [m for role, m in await said(ann.http, chat) if role == "user"] == ["alpha"]
    assert (await say(ann.http, chat, "next"))["turn_index"] == 2


async def test_what_an_undo_kept_is_gone_when_it_runs_out(server: RunningServer, ann: Person, settings: Settings) -> None:
    text = secret()
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "alpha")
    await say(ann.http, chat, f"remember: my code is {text}")
    await restore(ann.http, chat, await last_step_of_turn(ann.http, chat, 1))
    # The daily clean-up, run as if the undo's hour had passed.
    await Maintenance.of(server.core, now=lambda: time.time() + 2 * 3600).run_pass(by_hand=True)
    assert traces(settings, text) == []
    assert ok(await ann.http.get(f"/api/replay/undo/{chat}")) is None


@pytest.mark.parametrize("how", ["delete", "forget", "memory_off", "forget_fact"])
async def test_a_deleted_or_forgotten_chat_leaves_no_trace_of_what_a_restore_kept(
    server: RunningServer, ann: Person, settings: Settings, how: str
) -> None:
    text, other = secret(), secret()
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "alpha")
    await say(ann.http, chat, f"remember: {other}")
    await say(ann.http, chat, f"remember: my code is {text}")
    await restore(ann.http, chat, await last_step_of_turn(ann.http, chat, 2))
    assert traces(settings, text)
    if how == "delete":
        assert (await ann.http.delete(f"/api/chats/{chat}")).status_code == 204
    elif how == "forget":
        ok(await ann.http.post(f"/api/chats/{chat}/forget"))
    elif how == "memory_off":
        await server.core.chats.memory_off(ann.user, chat)
    else:
        [fact] = await server.core.store.memories.facts(chat)
        await server.core.chats.forget_fact(ann.user, chat, fact.id)
    assert traces(settings, text) == []
    # What was forgotten (the memory, and the steps that held it) is gone; the chat itself stays.
    assert of_steps_or_memories(traces(settings, other)) == []
    if how != "delete":
        assert ("user", f"remember: {other}") in await said(ann.http, chat)


async def test_cleared_steps_leave_the_files(server: RunningServer, ann: Person, settings: Settings) -> None:
    text = secret()
    chat = await new_chat(ann.http)
    await say(ann.http, chat, f"hello {text}")
    assert of_steps_or_memories(traces(settings, text))
    assert ok(await ann.http.delete(f"/api/replay/threads/{chat}"))["deleted"] > 0
    assert of_steps_or_memories(traces(settings, text)) == []
    assert ("user", f"hello {text}") in await said(ann.http, chat)


async def test_what_a_fork_or_a_kept_step_still_holds_stays(server: RunningServer, ann: Person, settings: Settings) -> None:
    text, later = secret(), secret()
    chat = await new_chat(ann.http, "origin")
    await say(ann.http, chat, "alpha")
    await say(ann.http, chat, f"remember: {text}")
    await say(ann.http, chat, f"later {later}")
    fork = ok(await ann.http.post(
        "/api/replay/fork", json={"thread_id": chat, "snapshot_id": await last_step_of_turn(ann.http, chat, 2)}
    ), 201)["thread_id"]
    # The source goes back to turn 2, then moves on: its undo is over, its later turn gone for good.
    await restore(ann.http, chat, await last_step_of_turn(ann.http, chat, 2))
    await say(ann.http, chat, "gamma")
    assert traces(settings, later) == []
    assert traces(settings, text)

    # The fork still has the message and the memory, and goes on from them.
    fork_rows = [("user", "alpha"), ("assistant", 'You said: "alpha". I know no facts yet.'), ("user", f"remember: {text}")]
    assert (await said(ann.http, fork))[:3] == fork_rows
    reply = await say(ann.http, fork, "what do I know?")
    assert text in reply["reply"]
    await restore(ann.http, fork, (await step_ids(ann.http, fork))[0])
    assert (await said(ann.http, fork))[:3] == fork_rows

    # The source's kept steps restore whole: the turn-2 step, then the turn-1 one.
    await restore(ann.http, chat, await last_step_of_turn(ann.http, chat, 2))
    rows = await said(ann.http, chat)
    assert rows[:3] == fork_rows and ("user", "gamma") not in rows
    assert text in (await say(ann.http, chat, "what do I know?"))["reply"]
    await restore(ann.http, chat, await last_step_of_turn(ann.http, chat, 1))
    assert await said(ann.http, chat) == fork_rows[:2]
