"""Message bodies kept once per chat: content-addressed, numbered 1, 2, 3... per chat.

One implementation for both stores that keep a conversation: the conversation store
(kazma.db: the agent's checkpoints and the transcript) and the step store (snapshots.db).
A holder (a checkpoint, a step) refers to its bodies by runs of numbers,
``[[start, length], ...]``: a few bytes for an append-only conversation, whatever its
length. Freed bodies are found by interval arithmetic on the holders' runs, never by
reading bodies.

Each database keeps its own bodies and their holders: ``conv_bodies`` in kazma.db (held by
checkpoints, task writes, transcript rows and the rows a restore keeps aside) and ``bodies``
in snapshots.db (held by steps, kept-aside ones too). No body is held from the other
database, so whether anything still refers to one is decided inside one transaction of its
own: every path that drops holders (a deletion, a prune, an undo given up) collects, in that
transaction, the bodies they held that nothing else does; nothing sweeps a whole chat.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Sequence

import orjson

from kazma_core.stores.engine import Conn, marks

PACK_FROM = 512  # bytes: a longer body is kept compressed when that saves room,
PROBE = 1 << 16  # a body longer than this is tried on its first 64 KB before it is compressed whole
PACK_GAIN = 7  # in tenths: when it takes at most 7/10 of the room (prose does; random data does not)

Runs = list[list[int]]
Interval = tuple[int, int]
ALL: list[Interval] = [(1, 1 << 62)]


def ddl(table: str) -> str:
    return (
        f"CREATE TABLE {table} (chat_id {{text}} NOT NULL, n {{int}} NOT NULL, digest {{blob}} NOT NULL, body {{blob}} NOT NULL,"
        f" UNIQUE (chat_id, n), UNIQUE (chat_id, digest))"
    )


def digest(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=16).digest()


def pack(body: bytes) -> bytes:
    """A body as stored: a JSON object as it is when short, zlib-compressed when long (a body is
    always a JSON object, so its first byte tells the two apart)."""
    if len(body) < PACK_FROM:
        return body
    if len(body) > PROBE and len(zlib.compress(body[:PROBE], 1)) * 10 > PROBE * PACK_GAIN:
        return body  # a large body whose start does not compress (random data, media): not tried whole
    packed = zlib.compress(body, 6)
    return packed if len(packed) * 10 <= len(body) * PACK_GAIN else body


def unpack(stored: bytes) -> bytes:
    return stored if stored[:1] == b"{" else zlib.decompress(stored)


def runs_extend(runs: Runs, numbers: Iterable[int]) -> Runs:
    for i in numbers:
        if runs and runs[-1][0] + runs[-1][1] == i:
            runs[-1][1] += 1
        else:
            runs.append([i, 1])
    return runs


def runs_prefix(runs: Sequence[Sequence[int]], count: int) -> Runs:
    """The runs of the first `count` numbers."""
    out: Runs = []
    left = count
    for start, length in runs:
        if left <= 0:
            break
        out.append([start, min(length, left)])
        left -= length
    return out


def runs_slice(runs: Sequence[Sequence[int]], start: int, stop: int) -> Runs:
    """The runs of the numbers at positions start..stop-1 (0-based)."""
    out: Runs = []
    at = 0
    for first, length in runs:
        lo, hi = max(start, at), min(stop, at + length)
        if lo < hi:
            out.append([first + lo - at, hi - lo])
        at += length
        if at >= stop:
            break
    return out


def runs_common(a: Sequence[Sequence[int]], b: Sequence[Sequence[int]]) -> int:
    """How many numbers the two runs share from their start (one pass over the runs)."""
    count = 0
    for (sa, la), (sb, lb) in zip(a, b, strict=False):
        if sa != sb:
            break
        count += min(la, lb)
        if la != lb:
            break
    return count


def runs_at(runs: Sequence[Sequence[int]], index: int) -> int | None:
    """The number at position `index` (0-based), or None past the end."""
    for start, length in runs:
        if index < length:
            return start + index
        index -= length
    return None


def numbers(runs: Sequence[Sequence[int]]) -> list[int]:
    return [start + k for start, length in runs for k in range(length)]


def intervals(runs: Sequence[Sequence[int]]) -> list[Interval]:
    return [(start, start + length - 1) for start, length in runs]


def decode_runs(refs: bytes | None) -> Runs:
    return orjson.loads(refs) if refs else []


def merge(spans: Iterable[Interval]) -> list[Interval]:
    merged: list[Interval] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def subtract(a: list[Interval], b: list[Interval]) -> list[Interval]:
    """Parts of the merged, sorted intervals a not covered by the merged, sorted intervals b (one pass)."""
    out: list[Interval] = []
    j = 0
    for lo, hi in a:
        cur = lo
        while j < len(b) and b[j][1] < cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] <= hi:
            if b[k][0] > cur:
                out.append((cur, b[k][0] - 1))
            cur = max(cur, b[k][1] + 1)
            k += 1
        if cur <= hi:
            out.append((cur, hi))
    return out


def space_of(conn: Conn, spaces: str, chat_id: str) -> str:
    """The body space a chat's bodies live in: its own, or the one of the chat it was forked
    from (a fork refers to its source's bodies instead of copying them)."""
    row = conn.execute(f"SELECT space FROM {spaces} WHERE thread_id = $1", (chat_id,)).fetchone()
    return str(row[0]) if row else chat_id


def spaces_ddl(spaces: str) -> str:
    return (
        f"CREATE TABLE {spaces} (thread_id {{text}} PRIMARY KEY, space {{text}} NOT NULL);"
        f" CREATE INDEX {spaces}_space ON {spaces}(space)"
    )


def members(spaces: str) -> str:
    """The chats of the space given as $1 (a SELECT of their ids)."""
    return f"SELECT thread_id FROM {spaces} WHERE space = $1 UNION SELECT $1"


class Interner:
    """Adds bodies to one space, in one transaction: a body already there keeps its number, a new
    one gets the next.

    A body is inserted without looking first: the space's (chat_id, digest) key turns one it holds
    already into no row, and only those are looked up (nearly every body added is new: one round
    trip, not two). With `owner`, each new body records the chat that added it (column added_by)."""

    BATCH = 200  # bodies a statement: within every engine's limit on parameters

    def __init__(self, conn: Conn, table: str, space: str, owner: str | None = None) -> None:
        self.conn = conn
        self.table = table
        self.chat_id = space
        self.owner = owner
        self.next: int | None = None  # the next number, known once a new body went in
        self.added = 0
        self._seen: dict[bytes, int] = {}  # the numbers of the bodies this transaction added or found, by digest

    def add(self, body: bytes, known: bytes | None = None) -> int:
        """The body's number in the space; `known`: its digest, when the caller has it."""
        return self.add_all([(body, known)])[0]

    def add_all(self, items: Sequence[tuple[bytes, bytes | None]]) -> list[int]:
        """The numbers of the bodies (each with its digest, or None), in order; the new ones
        inserted together."""
        keys = [known or digest(body) for body, known in items]
        todo: dict[bytes, bytes] = {}
        for (body, _), key in zip(items, keys, strict=True):
            if key not in self._seen:
                todo.setdefault(key, body)
        pending = list(todo.items())
        for at in range(0, len(pending), self.BATCH):
            self._insert(pending[at : at + self.BATCH])
        return [self._seen[k] for k in keys]

    def _insert(self, batch: list[tuple[bytes, bytes]]) -> None:
        stored = {key: pack(body) for key, body in batch}
        extra = [] if self.owner is None else [self.owner]
        columns = "n, chat_id, digest, body" + ("" if self.owner is None else ", added_by")
        params: list[object] = [self.chat_id]
        if self.next is None:
            # The space's next number, read in the statement that takes it (one round trip, not two),
            # as a scalar subquery: both engines find a max on the index's end that way (SQLite scans
            # the space's whole range for one read through a WITH: 0.4 ms at 10,000 bodies).
            top = f"coalesce((SELECT max(n) FROM {self.table} WHERE chat_id = $1), 0)"
            rows = []
            for i, (key, body) in enumerate(stored.items(), start=1):
                rows.append(f"SELECT {top} + {i}, $1, {marks(2 + len(extra), len(params) + 1)} WHERE true")
                params += [key, body, *extra]
            statement = f"INSERT INTO {self.table} ({columns}) {' UNION ALL '.join(rows)}"
        else:
            values = []
            for i, (key, body) in enumerate(stored.items()):
                at = len(params) + 1
                values.append(f"(${at}, $1, {marks(2 + len(extra), at + 1)})")
                params += [self.next + i, key, body, *extra]
            statement = f"INSERT INTO {self.table} ({columns}) VALUES {', '.join(values)}"
        found = self.conn.execute(
            f"{statement} ON CONFLICT (chat_id, digest) DO NOTHING RETURNING n, digest", params
        ).fetchall()
        for n, key in found:
            self._seen[bytes(key)] = int(n)
            self.added += len(stored[bytes(key)])
        if found:
            self.next = max(int(r[0]) for r in found) + 1
        held = [key for key in stored if key not in self._seen]  # bodies the space holds already
        self._seen.update(numbers_of(self.conn, self.table, self.chat_id, held))


def numbers_of(conn: Conn, table: str, space: str, digests: Sequence[bytes]) -> dict[bytes, int]:
    """The numbers of those of the digests' bodies the space holds (a few queries, not one per body)."""
    found: dict[bytes, int] = {}
    for at in range(0, len(digests), 500):
        some = digests[at : at + 500]
        for n, key in conn.execute(
            f"SELECT n, digest FROM {table} WHERE chat_id = $1 AND digest IN ({marks(len(some), 2)})", (space, *some)
        ):
            found[bytes(key)] = int(n)
    return found


def read(conn: Conn, table: str, chat_id: str, runs: Sequence[Sequence[int]]) -> list[bytes]:
    """The bodies of the runs, in order (one range query per run)."""
    found: dict[int, bytes] = {}
    for start, length in runs:
        for n, body in conn.execute(
            f"SELECT n, body FROM {table} WHERE chat_id = $1 AND n BETWEEN $2 AND $3", (chat_id, start, start + length - 1)
        ):
            found[n] = body
    return [unpack(found[n]) for n in numbers(runs)]


def digest_of(conn: Conn, table: str, chat_id: str, n: int) -> bytes | None:
    row = conn.execute(f"SELECT digest FROM {table} WHERE chat_id = $1 AND n = $2", (chat_id, n)).fetchone()
    return bytes(row[0]) if row else None
