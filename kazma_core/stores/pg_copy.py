"""PostgreSQL schemas to and from the standalone SQLite files an archive holds.

A backup and a migration bundle hold the same SQLite files whichever engine made them
(``kazma.db``, ``time_travel_audit.db``), so one archive format serves both and moves a
deployment from one engine to the other. From PostgreSQL, every table of a schema is
copied into a new SQLite file of the same schema version, all schemas read in one
snapshot. Into PostgreSQL, the tables are emptied and loaded in one transaction, rows
keeping their ids, and each identity column continues past the highest id loaded.
The steps schema is never one of them (SPEC: steps are not backed up and do not travel).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from kazma_core.stores.engine import Conn, marks
from kazma_core.stores.postgres import PgConn, migrate, reset_sequences, unreachable
from kazma_core.stores.sqlite import Migration, open_sqlite
from kazma_core.stores.sqlite import migrate as migrate_sqlite

VERSION_TABLE = "kazma_version"
BATCH = 1000


@dataclass(frozen=True)
class SchemaFile:
    """One schema of the database and the SQLite file that holds (or will hold) its rows."""

    schema: str
    migrations: Sequence[Migration]
    path: Path


@contextlib.contextmanager
def connect(url: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection of our own (outside the stores' pools), or one line naming the setting."""
    try:
        conn = psycopg.connect(url, connect_timeout=10)
    except psycopg.OperationalError as err:
        raise unreachable(url, err) from err
    with conn:
        yield conn


def _migrated(conn: psycopg.Connection[Any], files: Sequence[SchemaFile]) -> None:
    """Each schema created or upgraded first, as a server starting would (a newer one is refused)."""
    conn.autocommit = True
    for f in files:
        migrate(conn, f.schema, f.migrations)
    conn.autocommit = False


def sqlite_tables(conn: sqlite3.Connection) -> list[str]:
    """A SQLite file's tables in the order they were created: a table comes after those it references."""
    return [name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
    )]


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]


def _insert(table: str, names: Sequence[str]) -> str:
    quoted = ", ".join(f'"{n}"' for n in names)
    return f'INSERT INTO "{table}" ({quoted}) VALUES ({marks(len(names))})'


# PostgreSQL -> SQLite -------------------------------------------------------------------------
def dump(url: str, files: Sequence[SchemaFile]) -> None:
    """Write each schema's rows into a new SQLite file at its path, all from one snapshot."""
    with connect(url) as conn:
        _migrated(conn, files)
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.read_only = True
        with conn.transaction():
            for f in files:
                _dump_schema(conn, f)


def _dump_schema(conn: psycopg.Connection[Any], f: SchemaFile) -> None:
    f.path.unlink(missing_ok=True)
    target = open_sqlite(f.path)
    try:
        migrate_sqlite(target, f.migrations, f.path.name)
        target.execute("PRAGMA foreign_keys=OFF")  # rows of one snapshot: whole as they come
        target.execute("BEGIN")
        for table in sqlite_tables(target):
            names = columns(target, table)
            select = sql.SQL("SELECT {} FROM {}.{}").format(
                sql.SQL(", ").join(map(sql.Identifier, names)), sql.Identifier(f.schema), sql.Identifier(table)
            )
            # A named cursor streams the rows from the server, so a large table is never held whole.
            with conn.cursor(name=f"dump_{table}") as cursor:
                cursor.itersize = BATCH
                cursor.execute(select)
                target.executemany(_insert(table, names), cursor)
        target.execute("COMMIT")
        # A standalone file: no -wal beside it, readable by any SQLite tool.
        target.execute("PRAGMA journal_mode=DELETE")
    finally:
        target.close()


# SQLite -> PostgreSQL -------------------------------------------------------------------------
Check = Callable[[Conn], None]


def load(url: str, files: Sequence[SchemaFile], *, check: Check) -> None:
    """Replace each schema's rows by those of its SQLite file, in one transaction.

    The tables are locked first, then ``check`` runs (it raises to refuse: a live lease, a
    database that is not empty), so nothing a replica writes can slip in between."""
    with connect(url) as conn:
        _migrated(conn, files)
        with conn.transaction():
            tables = {f.schema: _pg_tables(conn, f.schema) for f in files}
            every = [sql.SQL("{}.{}").format(sql.Identifier(s), sql.Identifier(t)) for s, ts in tables.items() for t in ts]
            conn.execute(sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.SQL(", ").join(every)))
            check(PgConn(conn))
            conn.execute(sql.SQL("TRUNCATE {}").format(sql.SQL(", ").join(every)))
            for f in files:
                _load_schema(conn, f)


def _pg_tables(conn: psycopg.Connection[Any], schema: str) -> list[str]:
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = %s AND tablename <> %s ORDER BY tablename",
        (schema, VERSION_TABLE),
    ).fetchall()
    return [row[0] for row in rows]


def _load_schema(conn: psycopg.Connection[Any], f: SchemaFile) -> None:
    with contextlib.closing(sqlite3.connect(f"file:{f.path}?mode=ro", uri=True)) as source:
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(f.schema)))
        for table in sqlite_tables(source):
            names = columns(source, table)
            copy = sql.SQL("COPY {} ({}) FROM STDIN").format(
                sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, names))
            )
            with conn.cursor().copy(copy) as pipe:
                for row in source.execute(f'SELECT * FROM "{table}"'):
                    pipe.write_row(row)
        identities = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = %s AND is_identity = 'YES'", (f.schema,)
        ).fetchall()
        reset_sequences(PgConn(conn), [(row[0], row[1]) for row in identities])


def row_counts(url: str, schemas: Sequence[str]) -> dict[str, int]:
    """Rows in each table of these schemas ("schema.table" -> rows); schemas not made yet have none."""
    counts: dict[str, int] = {}
    with connect(url) as conn:
        for schema in schemas:
            for table in _pg_tables(conn, schema):
                name = sql.SQL("{}.{}").format(sql.Identifier(schema), sql.Identifier(table))
                row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(name)).fetchone()
                counts[f"{schema}.{table}"] = int(row[0]) if row else 0
    return counts
