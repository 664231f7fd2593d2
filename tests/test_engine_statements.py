"""Every store statement is written once, in SQL both engines read as it is: parameters numbered
``$1 … $n``. Nothing translates a statement on its way to SQLite or to PostgreSQL."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest

from kazma_core.stores import app_schema
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.engine import Database
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
