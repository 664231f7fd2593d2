"""A small request to a SQLite store runs at once while the store's thread has nothing to do
(SqliteDB.run and tx with `small`): it never overtakes a request asked for before it, never holds
the event loop while the file is locked, and commits or rolls back as on the thread."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kazma_core.stores import app_schema
from kazma_core.stores.sqlite import Connection, SqliteDB

INSERT = "INSERT INTO conv_bodies (chat_id, n, digest, body) VALUES ('c', $1, $2, x'00')"
NUMBERS = "SELECT n FROM conv_bodies WHERE chat_id = 'c' ORDER BY n"


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
