"""Every store statement is written once, in SQL both engines read as it is: parameters numbered
``$1 … $n``. Nothing translates a statement on its way to SQLite or to PostgreSQL."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sqlite3
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import psycopg
import pytest

from kazma_core.stores import app_schema, audit_sql, postgres, snapshots_sql, sqlite
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.engine import Database, ddl
from kazma_core.stores.postgres import PostgresDB
from kazma_core.stores.sqlite import SqliteDB

pytestmark = pytest.mark.engines()


@pytest.fixture
async def db(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Database]:
    """kazma.db's schema on this test's engine."""
    made: Database
    if engine == "postgresql":
        made = PostgresDB(request.getfixturevalue("pg_url"), "kazma", app_schema.MIGRATIONS)
    else:
        made = SqliteDB(tmp_path / "kazma.db", app_schema.MIGRATIONS)
    yield made
    await made.close()


async def test_a_statement_reaches_either_engine_as_it_is_written(db: Database) -> None:
    """A number used twice is one value, and '%' and '?' are plain characters in the SQL and in the
    values (the old translation to psycopg's style had to double each '%')."""
    row = await db.run(lambda c: tuple(c.execute("SELECT $1 || $2, $1, '100%?'", ("a?", "b%")).fetchone()))
    assert row == ("a?b%", "a?", "100%?")


async def test_a_question_mark_placeholder_is_refused_by_either_engine(db: Database) -> None:
    """A statement in sqlite3's own style fails at once on both engines, so one cannot come back
    unnoticed: every statement the tests run reaches SQLite and PostgreSQL as written."""
    with pytest.raises((sqlite3.ProgrammingError, psycopg.ProgrammingError)):
        await db.run(lambda c: c.execute("SELECT title FROM chats WHERE id = ?", ("x",)).fetchall())


async def test_a_title_with_percent_and_question_marks_is_kept_as_typed(db: Database) -> None:
    store = AppStore(db)
    owner = await store.users.add_user("olga")
    chat = await store.chats.create_chat(owner.id, "100% sure? 50%?")
    await store.chats.rename_chat(chat.id, "%s ? $1 :name %(x)s")
    found = await store.chats.search_chats(owner.id, "$1 :name")
    assert [(c.id, c.title) for c, _ in found] == [(chat.id, "%s ? $1 :name %(x)s")]


# The first 16 hex digits of the SHA-256 of each shipped migration's text, as each engine ran it
# (taken before the migrations were written with type slots, from the SQLite scripts and their
# PostgreSQL spelling then).
SHIPPED = {
    ("kazma", "sqlite"): ["827f669648e3a5de", "ad91205e666be585", "b6a807f418c4b709", "6eb236fc46fcbe0b",
                          "2ebc9e9b04251789", "f6753fa313fb894d", "fabdc3558d7b21a8", "46d6e08f017ca22f"],
    ("kazma", "postgresql"): ["a64e34a98a50cfe0", "2df1fd46158963ad", "ad977504d8fc8965", "88532e8d0ab3bd0e",
                              "fccf5f2c22bdc2dd", "cd8141cbf3bbb778", "ee4e4e6859ad422d", "3e8dd6db9b41e1e9"],
    ("steps", "sqlite"): ["8c0e6d2e0686d2f0", "a4fb348f1fb5d461", "8be75bb9220e9a3a", "6e2199fff7d990c7"],
    ("steps", "postgresql"): ["914190f39e531c90", "36f4374865d55e15", "f2da267a3bfd5ab2", "3fe6b638fa96f9d2"],
    ("audit", "sqlite"): ["ba96c35570df7b79"],
    ("audit", "postgresql"): ["90ec634e63357c12"],
}
MIGRATIONS = {"kazma": app_schema.MIGRATIONS, "steps": snapshots_sql.MIGRATIONS, "audit": audit_sql.MIGRATIONS}
TYPES: dict[str, Mapping[str, str]] = {"sqlite": sqlite.TYPES, "postgresql": postgres.TYPES}


def test_every_shipped_migration_runs_as_it_shipped_on_either_engine() -> None:
    """A database made by an earlier Kazma is upgraded by exactly the scripts it would have run: a
    shipped migration is never edited, and each engine spells its types as it did then."""
    for (schema, engine), digests in SHIPPED.items():
        rendered = [ddl(script, TYPES[engine]) for script in MIGRATIONS[schema][: len(digests)]]
        assert [hashlib.sha256(text.encode()).hexdigest()[:16] for text in rendered] == digests, (schema, engine)


async def test_a_sqlite_store_folds_its_log_into_the_file_while_it_serves(tmp_path: Path) -> None:
    """The write-ahead log is copied into the file beside the store's work, as writes come: the data
    is in the file while the store is still open, the log is written from its start again (its file
    cut back) rather than grown with every write, and what was written reads back whole."""
    path, wal = tmp_path / "kazma.db", tmp_path / "kazma.db-wal"
    store = SqliteDB(path, app_schema.MIGRATIONS)
    body = os.urandom(1 << 20)

    async def put(n: int, value: bytes) -> None:
        statement = "INSERT INTO conv_bodies (chat_id, n, digest, body) VALUES ($1, $2, $3, $4)"
        await store.tx(lambda c: c.execute(statement, ("c", n, str(n), value)))

    try:
        for n in range(1, 25):
            await put(n, body)
        # Small writes, as a person's turns come, until one begins the log again (a fold of 24 MB can
        # take seconds on a machine busy with other tests: up to 30 s is waited for, then it fails).
        # (A fold that ran while the large writes still came begins the log again before the last of
        # them: the log is short then, and holds those; the next folds put them in the file.)
        for n in range(25, 325):
            await put(n, b"{}")
            if wal.stat().st_size <= sqlite.WAL_KEEP_BYTES and path.stat().st_size >= 24 << 20:
                break
            await asyncio.sleep(0.1)
        assert path.stat().st_size >= 24 << 20  # the file holds the data, the store still open
        assert wal.stat().st_size <= sqlite.WAL_KEEP_BYTES
        rows = await store.run(lambda c: c.execute("SELECT n, body FROM conv_bodies WHERE n <= 24 ORDER BY n").fetchall())
        assert [(r["n"], r["body"] == body) for r in rows] == [(n, True) for n in range(1, 25)]
    finally:
        await store.close()
