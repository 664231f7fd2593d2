"""A small request to a SQLite store runs at once while the store's thread has nothing to do
(SqliteDB.run and tx with `small`): it never overtakes a request asked for before it, never holds
the event loop while the file is locked, and commits or rolls back as on the thread."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from kazma_core.messages import encode_message, rough_bytes
from kazma_core.stores import app_schema, snapshots_sql
from kazma_core.stores.snapshots import Budgets, NewStep
from kazma_core.stores.snapshots_sql import SqlSnapshotStore
from kazma_core.stores.sqlite import Connection, SqliteDB
from kazma_core.time_travel import MessageIds

INSERT = "INSERT INTO conv_bodies (chat_id, n, digest, body) VALUES ('c', $1, $2, x'00')"
NUMBERS = "SELECT n FROM conv_bodies WHERE chat_id = 'c' ORDER BY n"
ROOMY = Budgets(10_000, 1_000_000, 10_000, 1 << 40, 1 << 44, 1 << 30)


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[SqliteDB]:
    made = SqliteDB(tmp_path / "kazma.db", app_schema.MIGRATIONS)
    await made.run(lambda c: None)  # the thread started, the file made
    yield made
    await made.close()


def numbers(conn: Connection) -> list[int]:
    return [r[0] for r in conn.execute(NUMBERS).fetchall()]


async def test_a_small_request_waits_behind_one_asked_before_it_and_runs_at_once_after(db: SqliteDB) -> None:
    def slow_write(conn: Connection) -> None:
        conn.execute(INSERT, (1, "one"))
        time.sleep(0.2)  # still on the store's thread when the read below is asked for

    where: list[int] = []

    def read(conn: Connection) -> list[int]:
        where.append(threading.get_ident())
        return numbers(conn)

    writing = asyncio.ensure_future(db.tx(slow_write))
    await asyncio.sleep(0)  # handed to the thread
    assert await db.run(read, small=True) == [1]  # the write asked for first is read, not overtaken
    await writing
    assert await db.run(read, small=True) == [1]
    # The first waited its turn on the store's thread; the second, the thread idle, ran at once.
    assert where[0] != threading.get_ident()
    assert where[1] == threading.get_ident()


async def test_a_small_write_that_fails_leaves_nothing_and_the_next_still_commits(db: SqliteDB) -> None:
    def half_then_fail(conn: Connection) -> None:
        conn.execute(INSERT, (1, "one"))
        raise ValueError("the caller's own mistake")

    with pytest.raises(ValueError, match="own mistake"):
        await db.tx(half_then_fail, small=True)
    await db.tx(lambda c: c.execute(INSERT, (2, "two")), small=True)
    assert await db.run(numbers) == [2]


async def test_a_small_write_finding_the_file_locked_waits_on_the_stores_thread(db: SqliteDB) -> None:
    """Another process writing (a `kazma` command, a fold's last pass) holds the file's lock: the
    small write waits for it on the store's thread while the event loop goes on serving others, then
    commits after that process's write."""
    other = sqlite3.connect(db.path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute(INSERT.replace("$1, $2", "?, ?"), (1, "one"))
    loop_served = threading.Event()
    seen: list[bool] = []

    def hold_until_the_loop_serves_again() -> None:
        # Held on the loop, the write would wait there for the lock (the store's 10 s) and nothing
        # else would run: this lets go after 5 s then, and the loop was not seen serving.
        seen.append(loop_served.wait(5.0))
        other.execute("COMMIT")

    holder = threading.Thread(target=hold_until_the_loop_serves_again)
    holder.start()
    try:
        writing = asyncio.ensure_future(db.tx(lambda c: c.execute(INSERT, (2, "two")), small=True))
        await asyncio.sleep(0)  # the write is tried, and finds the file locked
        loop_served.set()  # ... while the loop goes on
        await writing
    finally:
        await asyncio.to_thread(holder.join)
        other.close()
    assert seen == [True]
    assert await db.run(numbers, small=True) == [1, 2]  # after the other process's write
    # The store's own wait for a lock is back to its usual length once a request ran at once.
    assert await db.run(lambda c: c.execute("PRAGMA busy_timeout").fetchone()[0]) == 10_000


async def test_a_saved_step_is_written_at_once_only_when_what_it_adds_is_small(tmp_path: Path) -> None:
    """A turn's step that adds a message or two is written at once; one that adds a large tool
    result is encoded and written on the store's thread, the event loop free meanwhile, and so is
    the step after it (it encodes and hashes the large one again, to know what it shares); after
    another write (steps dropped) the store does not know what the next step adds, so it goes to
    the thread too."""
    store = SqlSnapshotStore(SqliteDB(tmp_path / "snapshots.db", snapshots_sql.MIGRATIONS, secure_delete=True))
    messages: list[BaseMessage] = []
    encoded_on: list[int] = []

    def encode(i: int) -> bytes:
        encoded_on.append(threading.get_ident())
        return encode_message(messages[i])

    async def save(*added: BaseMessage) -> tuple[str, set[str]]:
        messages.extend(added)
        encoded_on.clear()
        now = list(messages)
        step = NewStep(uuid.uuid4().hex, "chat", len(now), 0, time.time(), "m", [], {"turn_index": 1}, MessageIds(now),
                       encode, rough_bytes=lambda start, budget: rough_bytes(now[start:], budget))
        info = (await store.put(step, ROOMY)).info
        return info.id, {"loop" if t == threading.get_ident() else "thread" for t in encoded_on}

    try:
        assert (await save(HumanMessage("hello", id="h1")))[1] == {"thread"}  # the chat's first: not known yet
        second, where = await save(AIMessage("hi there", id="a1"))
        assert where == {"loop"}
        assert (await save(HumanMessage("x" * (1 << 20), id="h2")))[1] == {"thread"}  # a 1 MB paste
        # The next step encodes the paste again (what it shares ends there): on the thread too.
        assert (await save(AIMessage("that is long", id="a2")))[1] == {"thread"}
        assert (await save(HumanMessage("and then", id="h4")))[1] == {"loop"}
        await store.delete_after("chat", second)
        messages[:] = messages[:2]
        assert (await save(HumanMessage("again", id="h3")))[1] == {"thread"}
        step = await store.get("chat", (await store.list_steps("chat"))[-1].id)
        assert step is not None and [m["data"]["content"] for m in step.state["messages"]] == ["hello", "hi there", "again"]
    finally:
        await store.close()
