"""What the clean-up needs from the steps' database beyond the store contract.

A deletion that says what it freed (the step ids, and on SQLite the first bytes of every
message body no step uses any more), and, on SQLite only, the file's page counts,
compaction, the WAL checkpoint, and the byte check: whether a freed body's bytes are
still anywhere in the file or its WAL (``steps_space.py`` holds PostgreSQL's side).

The byte check is exact because of where SQLite puts a row: a body's first bytes sit in
its row's cell on one page (the rest may spill to overflow pages), so a marker no longer
than the part every cell keeps on its own page is contiguous in the file and in a WAL
frame. A marker found there is a leftover unless a live row holds the same bytes.
"""

from __future__ import annotations

import mmap
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kazma_core.stores.bodies import decode_runs, intervals, merge
from kazma_core.stores.engine import Conn, marks
from kazma_core.stores.snapshots_sql import _delete_where, space_of

MAX_MARKER = 256
MIN_MARKER = 16
# A body's row starts with a record header (at most 15 bytes here), the chat id, the
# body number (8 at most) and its 16-byte digest: the body begins after these.
ROW_PREFIX = 15 + 8 + 16
# Marker candidates read per deletion at most (evenly spread), so a huge deletion
# does not hold every freed body's head in memory.
MAX_CANDIDATES = 20_000
CHUNK = 500


@dataclass(frozen=True)
class Sample:
    """The first bytes of a body a deletion freed."""

    chat_id: str
    marker: bytes


@dataclass
class Deletion:
    step_ids: list[str] = field(default_factory=list)
    bodies_freed: int = 0
    samples: list[Sample] = field(default_factory=list)


@dataclass(frozen=True)
class FileStats:
    page_size: int
    page_count: int
    freelist_count: int

    @property
    def total_bytes(self) -> int:
        return self.page_size * self.page_count

    @property
    def free_bytes(self) -> int:
        return self.page_size * self.freelist_count


@dataclass(frozen=True)
class Checkpoint:
    busy: bool
    wal_frames: int
    copied_frames: int

    @property
    def complete(self) -> bool:
        return not self.busy and self.wal_frames == self.copied_frames


def marker_length(conn: sqlite3.Connection, chat_id: str) -> int:
    """The longest head of a body that always stays on its row's own page."""
    page_size: int = conn.execute("PRAGMA page_size").fetchone()[0]
    min_local = (page_size - 12) * 32 // 255 - 23  # SQLite's minimum local payload of a table leaf cell
    return max(MIN_MARKER, min(MAX_MARKER, min_local - ROW_PREFIX - len(chat_id.encode())))


def delete_recording(conn: Conn, where: str, params: tuple[object, ...], *, sample: bool = True) -> Deletion:
    """Delete the matching steps (inside the caller's transaction) and record what went.

    The heads of the bodies the steps used are read first (when sample: only a file's bytes
    can be searched for them); after the delete, the ones whose rows are gone are the
    bodies it freed (the others are still used by a step kept).
    """
    victims = conn.execute(f"SELECT chat_id, refs FROM steps WHERE {where}", params).fetchall()
    spans: dict[str, list[tuple[int, int]]] = {}
    for chat_id, refs in victims:  # by body space: a fork's steps use its source's bodies
        spans.setdefault(space_of(conn, chat_id), []).extend(intervals(decode_runs(refs)))
    spans = {chat: merge(found) for chat, found in spans.items()}
    total = sum(hi - lo + 1 for found in spans.values() for lo, hi in found)
    every = max(1, -(-total // MAX_CANDIDATES))
    heads: dict[tuple[str, int], bytes] = {}
    for chat_id, found in spans.items() if sample else ():
        length = marker_length(conn, chat_id)  # type: ignore[arg-type]
        for lo, hi in found:
            for n, head in conn.execute(
                "SELECT n, substr(body, 1, $1) FROM bodies WHERE chat_id = $2 AND n BETWEEN $3 AND $4",
                (length, chat_id, lo, hi),
            ):
                if n % every == 0:
                    heads[(chat_id, n)] = bytes(head)
    before = _body_numbers(conn, spans)
    ids = _delete_where(conn, where, params)
    after = _body_numbers(conn, spans)
    freed = before - after
    samples = [Sample(chat, heads[(chat, n)]) for chat, n in sorted(freed) if (chat, n) in heads]
    return Deletion(ids, len(freed), samples)


def _body_numbers(conn: Conn, spans: dict[str, list[tuple[int, int]]]) -> set[tuple[str, int]]:
    found: set[tuple[str, int]] = set()
    for chat_id, ranges in spans.items():
        for lo, hi in ranges:
            found.update(
                (chat_id, n)
                for (n,) in conn.execute("SELECT n FROM bodies WHERE chat_id = $1 AND n BETWEEN $2 AND $3", (chat_id, lo, hi))
            )
    return found


def steps_left(conn: Conn, ids: Sequence[str]) -> int:
    """How many of these step ids still have a row (ids are random, never reused)."""
    left = 0
    for start in range(0, len(ids), CHUNK):
        part = ids[start:start + CHUNK]
        (count,) = conn.execute(f"SELECT count(*) FROM steps WHERE id IN ({marks(len(part))})", part).fetchone()
        left += count
    return left


def chats_with_steps(conn: Conn) -> set[str]:
    return {chat for (chat,) in conn.execute("SELECT DISTINCT chat_id FROM steps")}


def file_stats(conn: sqlite3.Connection) -> FileStats:
    (page_size,) = conn.execute("PRAGMA page_size").fetchone()
    (page_count,) = conn.execute("PRAGMA page_count").fetchone()
    (free,) = conn.execute("PRAGMA freelist_count").fetchone()
    return FileStats(page_size, page_count, free)


def checkpoint(conn: sqlite3.Connection, wait_seconds: float) -> Checkpoint:
    """Copy the WAL into the file and empty it, waiting at most wait_seconds for readers.

    A reader that started before a delete keeps the WAL's old frames alive, and the
    file's old pages with them: the checkpoint then reports busy."""
    (previous,) = conn.execute("PRAGMA busy_timeout").fetchone()
    conn.execute(f"PRAGMA busy_timeout={max(0, int(wait_seconds * 1000))}")
    try:
        busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        conn.execute(f"PRAGMA busy_timeout={int(previous)}")
    return Checkpoint(bool(busy), max(frames, 0), max(copied, 0))


def vacuum(conn: sqlite3.Connection) -> None:
    conn.execute("VACUUM")


def disk_bytes(path: Path) -> int:
    """Bytes of the file and its WAL on disk."""
    return sum(p.stat().st_size for p in (path, wal_of(path)) if p.exists())


def wal_of(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def found_in_files(paths: Iterable[Path], markers: Sequence[bytes]) -> set[int]:
    """Indexes of the markers whose bytes occur in any of the files (read, never loaded whole)."""
    found: set[int] = set()
    for path in paths:
        if not path.exists() or path.stat().st_size == 0:
            continue
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            for i, marker in enumerate(markers):
                if i not in found and data.find(marker) != -1:
                    found.add(i)
    return found


def held_by_live_rows(conn: Conn, markers: Sequence[bytes]) -> set[int]:
    """Indexes of the markers some live row also holds (a chat sharing a message, a fork's copy)."""
    held: set[int] = set()
    for query in ("SELECT body FROM bodies", "SELECT fields, questions FROM steps"):
        for row in conn.execute(query):
            for value in row:
                blob = value.encode() if isinstance(value, str) else bytes(value)
                held.update(i for i, marker in enumerate(markers) if i not in held and marker in blob)
            if len(held) == len(markers):
                return held
    return held
