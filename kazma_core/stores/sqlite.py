"""One SQLite file, one connection, one thread: a whole transaction runs in a single hop.

aiosqlite sends every statement across threads on its own; a capture or a restore is
several statements that must commit together, so each store hands a whole function to
its thread instead, and the event loop waits once.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from kazma_core.stores.engine import NewerSchema

T = TypeVar("T")
log = logging.getLogger(__name__)

Migration = str


def statements(script: str) -> list[str]:
    """A migration's statements, split where SQLite says a statement is complete (a ';' inside
    a string or a trigger does not end one)."""
    out: list[str] = []
    current = ""
    for piece in script.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):
            out.append(current)
            current = ""
    out.append(current.rstrip(";"))
    return [s for s in out if s.strip()]


def open_sqlite(path: Path, *, secure_delete: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
    conn.row_factory = sqlite3.Row
    if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
        # A new file: pages freed by deletions can go back to the disk (see SqliteDB.close).
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    if secure_delete:
        conn.execute("PRAGMA secure_delete=ON")
    return conn


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration], label: str = "this database") -> None:
    """Apply the numbered migrations this file has not seen yet (PRAGMA user_version)."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > len(migrations):
        raise NewerSchema(label, version, len(migrations))
    for number, script in enumerate(migrations[version:], start=version + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def copy_database(src: Path, dst: Path) -> None:
    """One consistent copy of a live SQLite file (online backup API), as a standalone file.

    The backup API copies every page, free ones too, and a database need not have zeroed
    what it deleted: the copy is vacuumed so that the text of a chat deleted before
    the backup is not in it."""
    source = sqlite3.connect(src, timeout=30.0)
    try:
        target = sqlite3.connect(dst)
        try:
            source.backup(target)
            # The copy is a single file: no -wal beside it, readable by any SQLite tool.
            target.execute("PRAGMA journal_mode=DELETE")
            target.execute("VACUUM")
        finally:
            target.close()
    finally:
        source.close()


class SqliteDB:
    """A SQLite file served by one worker thread."""

    dialect = "sqlite"

    def __init__(self, path: Path, migrations: Sequence[Migration], *, secure_delete: bool = False) -> None:
        self.path = path
        self.label = path.name
        self._migrations = migrations
        self._secure_delete = secure_delete
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sqlite-{path.name}")
        self._conn: sqlite3.Connection | None = None

    def _open(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = open_sqlite(self.path, secure_delete=self._secure_delete)
            try:
                migrate(conn, self._migrations, self.label)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run fn with the connection on the store's thread (reads, or writes in autocommit)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(self._open()))

    async def tx(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run fn inside one IMMEDIATE transaction: all of it commits, or none of it."""

        def job(conn: sqlite3.Connection) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        return await self.run(job)

    async def purge_wal(self) -> None:
        """Fold the WAL into the file and empty it: old copies of deleted rows live on in WAL frames."""
        await self.run(lambda conn: conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    async def close(self) -> None:
        def shut(_: sqlite3.Connection) -> None:
            if self._conn is not None:
                try:
                    # Pages the chats freed go back to the disk when the server stops (a no-op for a
                    # file made before Kazma set auto_vacuum; the daily clean-up compacts that one).
                    self._conn.execute("PRAGMA incremental_vacuum").fetchall()
                except sqlite3.Error as err:  # busy with another process's write: the pages stay in the file
                    log.info("%s: free pages kept in the file at close (%s)", self.path.name, err)
                self._conn.close()
                self._conn = None

        if self._conn is not None:
            await asyncio.get_running_loop().run_in_executor(self._pool, shut, None)
        self._pool.shutdown(wait=True)
