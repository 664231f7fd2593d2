"""The files a chat's tools wrote, in snapshots.db: content by reference, beside the steps.

A file's content is a body of the chat's body space (`bodies.py`: content-addressed, so a
file written once is stored once, and counted in the chat's bytes like a step's bodies).
Three kinds of holder refer to bodies by number (0: no file):

- ``file_marks``: per chat and path, what was there before the chat's tools first touched
  it (``base_n``) and what they, or a restore, last put there (``now_n``);
- each step's ``extra`` column: its manifest ``{"files": {path: n}}``, the marks' ``now_n``
  as the step was saved (a step saved before any write has none: its files are the bases);
- ``file_undo``: per restore, what each file it changed held on disk before (``before_n``)
  and the mark it had (``mark_n``, NULL: none), for its undo.

A body stays while any of them refers to it (`held`, which the step store's collection reads).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from kazma_core.stores import bodies, engine
from kazma_core.stores.engine import Conn, Database

MIGRATION = """
    CREATE TABLE file_marks (
        chat_id {text} NOT NULL,
        path {text} NOT NULL,
        base_n {int} NOT NULL,
        now_n {int} NOT NULL,
        PRIMARY KEY (chat_id, path)
    );
    CREATE TABLE file_undo (
        restore_id {text} NOT NULL,
        chat_id {text} NOT NULL,
        path {text} NOT NULL,
        before_n {int} NOT NULL,
        mark_n {int},
        PRIMARY KEY (restore_id, path)
    );
    CREATE INDEX file_undo_chat ON file_undo(chat_id, restore_id)
"""
SPACES = "spaces"
NO_FILE = 0


def encode(data: bytes) -> bytes:
    """A file's content as a body (a JSON object, as every body is): text as it is, other bytes in base64."""
    try:
        return orjson.dumps({"file": data.decode("utf-8")})
    except UnicodeDecodeError:
        return orjson.dumps({"file_b64": base64.b64encode(data).decode("ascii")})


def decode(body: bytes) -> bytes:
    value = orjson.loads(body)
    return value["file"].encode("utf-8") if "file" in value else base64.b64decode(value["file_b64"])


def manifest_of(extra: Any) -> dict[str, int]:
    if not extra:
        return {}
    files = orjson.loads(extra).get("files") or {}
    return {str(k): int(v) for k, v in files.items()}


# Whether the chat given as $1 has files marked (a manifest to read): part of a statement that reads more.
MARKED = "EXISTS (SELECT 1 FROM file_marks WHERE chat_id = $1)"


def manifest(conn: Conn, chat_id: str) -> dict[str, int]:
    """A step's files as a step of the chat is saved now (the marks' bodies), for its `extra`'s "files"."""
    rows = conn.execute("SELECT path, now_n FROM file_marks WHERE chat_id = $1 ORDER BY path", (chat_id,)).fetchall()
    return {r[0]: r[1] for r in rows}


def held(conn: Conn, space: str) -> list[bodies.Interval]:
    """The body numbers the files of the space's chats refer to (marks, manifests, undos)."""
    members = bodies.members(SPACES)
    found: set[int] = set()
    for table, column in (("file_marks", "base_n"), ("file_marks", "now_n"), ("file_undo", "before_n"), ("file_undo", "mark_n")):
        for (n,) in conn.execute(f"SELECT {column} FROM {table} WHERE chat_id IN ({members}) AND {column} > 0", (space,)):
            found.add(int(n))
    for table in ("steps", "kept_steps"):
        for (extra,) in conn.execute(f"SELECT extra FROM {table} WHERE chat_id IN ({members}) AND extra IS NOT NULL", (space,)):
            found.update(n for n in manifest_of(extra).values() if n > 0)
    return [(n, n) for n in sorted(found)]


def _count(conn: Conn, chat_id: str, added: int) -> None:
    """The bytes the chat's new file bodies take, in its count and the whole store's (its budgets, its owner's quota)."""
    for scope in (chat_id, ""):
        conn.execute(
            "INSERT INTO counters (scope, steps, bytes) VALUES ($1, 0, $2) ON CONFLICT(scope) DO UPDATE SET"
            " bytes = counters.bytes + excluded.bytes", (scope, added),
        )


class _Files:
    """Adds file contents to the chat's body space (a content already there keeps its number)."""

    def __init__(self, conn: Conn, chat_id: str) -> None:
        self.conn = conn
        self.chat_id = chat_id
        self.interner = bodies.Interner(conn, "bodies", bodies.space_of(conn, SPACES, chat_id), owner=chat_id)

    def add(self, data: bytes | None) -> int:
        return NO_FILE if data is None else self.interner.add(encode(data))

    def close(self) -> None:
        if self.interner.added:
            _count(self.conn, self.chat_id, self.interner.added)


@dataclass(frozen=True)
class Mark:
    base_n: int
    now_n: int


@dataclass(frozen=True)
class FileState:
    """What a restore of a chat's files to a step reads: the step's manifest (None: a step
    saved before any file), the chat's marks, and the digests of the bodies they name."""

    manifest: dict[str, int]
    marks: dict[str, Mark]
    digests: dict[int, bytes]


class SqlFileStore:
    """The files' part of snapshots.db (the step store's database, its transactions); `collect`
    deletes the bodies of the chats' spaces nothing refers to any more (the step store's rule)."""

    def __init__(self, db: Database, collect: Callable[[Conn, Iterable[str]], None]) -> None:
        self.db = db
        self.collect = collect

    async def record_write(self, chat_id: str, path: str, before: bytes | None, after: bytes) -> None:
        """A chat's tool wrote `after` at `path`, which held `before` (None: no file) until then."""

        def write(conn: Conn) -> None:
            files = _Files(conn, chat_id)
            now_n = files.add(after)
            found = conn.execute("SELECT 1 FROM file_marks WHERE chat_id = $1 AND path = $2", (chat_id, path)).fetchone()
            if found is None:
                conn.execute(
                    "INSERT INTO file_marks (chat_id, path, base_n, now_n) VALUES ($1, $2, $3, $4)",
                    (chat_id, path, files.add(before), now_n),
                )
            else:
                conn.execute("UPDATE file_marks SET now_n = $1 WHERE chat_id = $2 AND path = $3", (now_n, chat_id, path))
            files.close()

        await self.db.tx(write)

    async def state(self, chat_id: str, step_id: str) -> FileState:
        def read(conn: Conn) -> FileState:
            row = conn.execute("SELECT extra FROM steps WHERE chat_id = $1 AND id = $2", (chat_id, step_id)).fetchone()
            files = manifest_of(row[0]) if row else {}
            marks = {
                r[0]: Mark(int(r[1]), int(r[2]))
                for r in conn.execute("SELECT path, base_n, now_n FROM file_marks WHERE chat_id = $1", (chat_id,))
            }
            wanted = sorted(set(files.values()) | {n for m in marks.values() for n in (m.base_n, m.now_n)} - {NO_FILE})
            space = bodies.space_of(conn, SPACES, chat_id)
            digests: dict[int, bytes] = {}
            for i in range(0, len(wanted), 500):  # a few queries, not one per file
                chunk = wanted[i : i + 500]
                for n, digest in conn.execute(
                    f"SELECT n, digest FROM bodies WHERE chat_id = $1 AND n IN ({engine.marks(len(chunk), 2)})", (space, *chunk)
                ):
                    digests[int(n)] = bytes(digest)
            return FileState(files, marks, digests)

        return await self.db.run(read)

    async def contents(self, chat_id: str, numbers: set[int]) -> dict[int, bytes]:
        """The files' contents of these body numbers."""
        ordered = sorted(n for n in numbers if n > 0)

        def read(conn: Conn) -> dict[int, bytes]:
            space = bodies.space_of(conn, SPACES, chat_id)
            found = bodies.read(conn, "bodies", space, bodies.runs_extend([], ordered))
            return {n: decode(b) for n, b in zip(ordered, found, strict=True)}

        return await self.db.run(read)

    async def keep_for_undo(
        self, chat_id: str, restore_id: str, before: list[tuple[str, bytes | None, int | None]]
    ) -> None:
        """What each file a restore changes holds now (path, content, its mark's now_n), for the undo:
        written before the restore commits (rows of a restore that never committed go at the next start)."""

        def write(conn: Conn) -> None:
            files = _Files(conn, chat_id)
            conn.execute("DELETE FROM file_undo WHERE restore_id = $1", (restore_id,))
            for path, data, mark_n in before:
                conn.execute(
                    "INSERT INTO file_undo (restore_id, chat_id, path, before_n, mark_n) VALUES ($1, $2, $3, $4, $5)",
                    (restore_id, chat_id, path, files.add(data), mark_n),
                )
            files.close()

        await self.db.tx(write)

    async def set_marks(self, chat_id: str, marks: list[tuple[str, int, int]]) -> None:
        """The chat's marks after a restore or a fork put files on disk: (path, base_n, now_n); a path
        that had a mark keeps its base."""

        def write(conn: Conn) -> None:
            for path, base_n, now_n in marks:
                conn.execute(
                    "INSERT INTO file_marks (chat_id, path, base_n, now_n) VALUES ($1, $2, $3, $4) ON CONFLICT (chat_id, path)"
                    " DO UPDATE SET now_n = excluded.now_n", (chat_id, path, base_n, now_n),
                )

        await self.db.tx(write)

    async def undo_rows(self, chat_id: str, restore_id: str) -> list[tuple[str, int, int | None]]:
        """(path, before_n, mark_n) of what a restore changed."""
        rows = await self.db.run(
            lambda c: c.execute(
                "SELECT path, before_n, mark_n FROM file_undo WHERE chat_id = $1 AND restore_id = $2 ORDER BY path",
                (chat_id, restore_id),
            ).fetchall()
        )
        return [(r[0], int(r[1]), None if r[2] is None else int(r[2])) for r in rows]

    async def undone(self, chat_id: str, restore_id: str) -> None:
        """The marks as before the restore (its files are back on disk); its undo rows go. Running it
        again changes nothing."""

        def write(conn: Conn) -> None:
            rows = conn.execute(
                "SELECT path, mark_n FROM file_undo WHERE chat_id = $1 AND restore_id = $2", (chat_id, restore_id)
            ).fetchall()
            for path, mark_n in rows:
                if mark_n is None:
                    conn.execute("DELETE FROM file_marks WHERE chat_id = $1 AND path = $2", (chat_id, path))
                else:
                    conn.execute("UPDATE file_marks SET now_n = $1 WHERE chat_id = $2 AND path = $3", (mark_n, chat_id, path))
            drop_undo(conn, "chat_id = $1 AND restore_id = $2", (chat_id, restore_id))
            self.collect(conn, [chat_id])  # what a hand edit held, now on disk again

        await self.db.tx(write)


def drop_undo(conn: Conn, where: str, params: tuple[object, ...]) -> list[str]:
    """Delete the file_undo rows matching (the bodies are collected by the caller); their chats."""
    chats = [r[0] for r in conn.execute(f"SELECT DISTINCT chat_id FROM file_undo WHERE {where}", params)]
    conn.execute(f"DELETE FROM file_undo WHERE {where}", params)
    return chats


def has_files(conn: Conn, chat_id: str) -> bool:
    return any(
        conn.execute(f"SELECT 1 FROM {table} WHERE chat_id = $1 LIMIT 1", (chat_id,)).fetchone()
        for table in ("file_marks", "file_undo")
    )


def delete_chat(conn: Conn, chat_id: str) -> None:
    conn.execute("DELETE FROM file_marks WHERE chat_id = $1", (chat_id,))
    conn.execute("DELETE FROM file_undo WHERE chat_id = $1", (chat_id,))
