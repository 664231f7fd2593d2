"""Where the saved steps take room, for the daily clean-up: snapshots.db, or the schema kazma_steps.

What the clean-up deletes is SQL, the same on both engines; what it measures, compacts and
checks afterwards is not:

- SQLite: the file and its WAL on disk, free pages (PRAGMA), VACUUM of the file, a WAL
  checkpoint, and a scan of the file's bytes for the text of what was deleted.
- PostgreSQL: the tables' size (pg_total_relation_size, indexes and TOAST included),
  free room as that size less the live rows', VACUUM FULL of the schema as compaction
  (it rewrites each table into new files and drops the old ones), and a plain VACUUM on
  every pass so that deleted rows leave the pages now, not at autovacuum's next turn. The
  server's files are not Kazma's to read, so no byte scan: secure deletion there means
  the rows are gone and VACUUM ran, and the clean-up says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import psycopg
from psycopg import sql

from kazma_core.stores import snapshots_upkeep as upkeep
from kazma_core.stores.engine import Conn, Database
from kazma_core.stores.postgres import PostgresDB
from kazma_core.stores.sqlite import SqliteDB


@dataclass(frozen=True)
class Room:
    free_bytes: int
    total_bytes: int


class StepsSpace(Protocol):
    label: str  # what the operator reads: "snapshots.db", "PostgreSQL schema kazma_steps"
    scans_bytes: bool  # whether deleted text can be looked for in the database's files

    async def disk_bytes(self) -> int: ...

    async def room(self) -> Room: ...

    async def compact(self) -> None: ...

    async def settle(self, wait_seconds: float) -> bool:
        """Make the deletions final on disk; False when something held them back."""
        ...

    async def found(self, markers: Sequence[bytes]) -> set[int]:
        """Indexes of the markers whose bytes are still in the files."""
        ...


class SqliteSteps:
    scans_bytes = True

    def __init__(self, db: SqliteDB) -> None:
        self.db = db
        self.label = db.path.name

    async def disk_bytes(self) -> int:
        return upkeep.disk_bytes(self.db.path)

    async def room(self) -> Room:
        stats = await self.db.run(upkeep.file_stats)
        return Room(stats.free_bytes, stats.total_bytes)

    async def compact(self) -> None:
        async with self.db.folds_held():
            await self.db.run(upkeep.vacuum)

    async def settle(self, wait_seconds: float) -> bool:
        async with self.db.folds_held():
            return (await self.db.run(lambda c: upkeep.checkpoint(c, wait_seconds))).complete

    async def found(self, markers: Sequence[bytes]) -> set[int]:
        path = self.db.path
        return await asyncio.to_thread(upkeep.found_in_files, [path, upkeep.wal_of(path)], markers)


SIZES = """
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'
"""


class PostgresSteps:
    scans_bytes = False

    def __init__(self, db: PostgresDB) -> None:
        self.db = db
        self.label = db.label

    async def disk_bytes(self) -> int:
        return int(await self.db.run(lambda c: c.execute(SIZES, (self.db.schema,)).fetchone()[0]))

    async def room(self) -> Room:
        def measure(conn: Conn) -> Room:
            total = int(conn.execute(SIZES, (self.db.schema,)).fetchone()[0])
            # Reads every row once a day; pgstattuple would be cheaper but is an extension an
            # operator may not be allowed to create.
            live = 0
            for (table,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = $1", (self.db.schema,)).fetchall():
                # A whole row's size as stored (compressed, TOAST included): what the live rows need.
                query = f'SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM "{self.db.schema}"."{table}" t'
                live += int(conn.execute(query).fetchone()[0])
            return Room(max(total - live, 0), total)

        return await self.db.run(measure)

    async def compact(self) -> None:
        # VACUUM FULL holds each table alone while it rewrites it: captures on every replica wait
        # that long, which is why it runs only when a quarter of the room and 8 MB are to be won.
        await asyncio.to_thread(self._vacuum, full=True)

    async def settle(self, wait_seconds: float) -> bool:
        await asyncio.to_thread(self._vacuum, full=False)
        return True

    async def found(self, markers: Sequence[bytes]) -> set[int]:
        return set()  # not scanned: see scans_bytes

    def _vacuum(self, *, full: bool) -> None:
        # VACUUM cannot run inside a transaction: a connection of its own, in autocommit.
        with psycopg.connect(self.db.url, autocommit=True) as conn:
            tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (self.db.schema,)).fetchall()
            command = "VACUUM (FULL, ANALYZE) {}.{}" if full else "VACUUM (ANALYZE) {}.{}"
            for (table,) in tables:
                conn.execute(sql.SQL(command).format(sql.Identifier(self.db.schema), sql.Identifier(table)))


def steps_space(db: Database) -> StepsSpace:
    if isinstance(db, SqliteDB):
        return SqliteSteps(db)
    if isinstance(db, PostgresDB):
        return PostgresSteps(db)
    raise TypeError(f"no clean-up for a steps database of engine {db.dialect}")
