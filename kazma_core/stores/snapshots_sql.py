"""snapshots.db on SQLite.

Each step stores its small fields and references to message bodies; a body is stored
once per chat (content-addressed), so a conversation of n messages captured after
every step costs O(n) bytes, not O(n^2). References are runs of the chat's body numbers
(1, 2, 3... per chat), a few bytes for an append-only conversation. A write finds what is new by comparing with
the chat's newest step: when the message at its tail has the same id and the same
content, the messages before it are taken as the same too (Kazma's graph only appends;
a restore rewrites the whole list), and only the messages past it are serialised. Budgets are enforced in the same transaction from
the counters table, and freed bodies are collected at once. A step's size is what it adds (the
bodies new to the chat, and its row), so the cost of a step and its size limit
(max_snapshot_bytes) never grow with the conversation.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson

from kazma_core.errors import StoreUnavailable, without_paths
from kazma_core.messages import rough_bytes
from kazma_core.replicas import fence
from kazma_core.stores import bodies, files_sql
from kazma_core.stores.bodies import Runs
from kazma_core.stores.engine import SMALL_BYTES, Conn, Database, DatabaseError, Row, marks
from kazma_core.stores.snapshots import Budgets, NewStep, PutResult, Step, StepHead, StepInfo, ThreadSummary

T = TypeVar("T")

MIGRATIONS: list[str] = [
    """
    CREATE TABLE steps (
        seq {id},
        id {text} NOT NULL UNIQUE,
        chat_id {text} NOT NULL,
        turn_index {int} NOT NULL,
        iteration {int} NOT NULL,
        created_at {real} NOT NULL,
        model {text} NOT NULL,
        questions {text} NOT NULL,
        message_count {int} NOT NULL,
        state_bytes {int} NOT NULL,
        msg_bytes {int} NOT NULL,
        own_bytes {int} NOT NULL,
        truncated {int} NOT NULL,
        tail_key {text},
        tail_digest {blob},
        refs {blob} NOT NULL,
        fields {blob} NOT NULL,
        extra {text}
    );
    CREATE INDEX steps_chat ON steps(chat_id, seq);
    CREATE INDEX steps_turn ON steps(chat_id, turn_index, seq);
    CREATE INDEX steps_prefix ON steps(chat_id, id);
    CREATE INDEX steps_time ON steps(created_at);
    """
    + bodies.ddl("bodies")
    + """;
    CREATE TABLE counters (
        scope {text} PRIMARY KEY,
        steps {int} NOT NULL DEFAULT 0,
        bytes {int} NOT NULL DEFAULT 0,
        last_at {real} NOT NULL DEFAULT 0,
        next_body {int} NOT NULL DEFAULT 1
    );
    INSERT INTO counters (scope) VALUES ('')
    """,
    # 2: a fork's steps share its source's body space (a fork refers to bodies, never copies them);
    # each body records the chat that added it, whose byte count it is.
    bodies.spaces_ddl("spaces") + "; ALTER TABLE bodies ADD COLUMN added_by {text}",
    # 3: the steps a restore took back, kept aside (by the restore's id) while it can be undone:
    # out of every list and count, their bodies kept.
    """
    CREATE TABLE kept_steps (
        restore_id {text} NOT NULL,
        seq {int} PRIMARY KEY,
        id {text} NOT NULL UNIQUE,
        chat_id {text} NOT NULL,
        turn_index {int} NOT NULL,
        iteration {int} NOT NULL,
        created_at {real} NOT NULL,
        model {text} NOT NULL,
        questions {text} NOT NULL,
        message_count {int} NOT NULL,
        state_bytes {int} NOT NULL,
        msg_bytes {int} NOT NULL,
        own_bytes {int} NOT NULL,
        truncated {int} NOT NULL,
        tail_key {text},
        tail_digest {blob},
        refs {blob} NOT NULL,
        fields {blob} NOT NULL,
        extra {text}
    );
    CREATE INDEX kept_steps_chat ON kept_steps(chat_id, restore_id)
    """,
    # 4: the files a chat's tools wrote (stores/files_sql.py); a step's manifest of them is its `extra`
    files_sql.MIGRATION,
]
STEP_COLUMNS = (
    "seq, id, chat_id, turn_index, iteration, created_at, model, questions, message_count, state_bytes, msg_bytes,"
    " own_bytes, truncated, tail_key, tail_digest, refs, fields, extra"
)
SPACES = "spaces"

GLOBAL = ""
ROW_OVERHEAD = 96  # bytes a step row costs beyond its blobs (ids, numbers, index entries)
NEWEST_KEPT = 4096  # chats whose newest step's length the store keeps in mind (the most recently written)
INFO_COLUMNS = (
    "id, chat_id, seq, turn_index, iteration, created_at, model, questions, message_count, state_bytes, truncated, extra"
)

def _info(row: Row) -> StepInfo:
    return StepInfo(
        id=row["id"], chat_id=row["chat_id"], seq=row["seq"], turn_index=row["turn_index"],
        iteration=row["iteration"], created_at=row["created_at"], model=row["model"],
        questions=orjson.loads(row["questions"]), message_count=row["message_count"],
        size=row["state_bytes"], truncated=bool(row["truncated"]),
        did=orjson.loads(row["extra"]).get("did") if row["extra"] else None,
    )


def _extra(files: dict[str, int], did: Any) -> str | None:
    """A step's `extra`: its files by reference (files_sql) and what it did (its label), as JSON."""
    found = {key: value for key, value in (("files", files), ("did", did)) if value}
    return orjson.dumps(found).decode() if found else None


_BUMP = (
    " ON CONFLICT(scope) DO UPDATE SET"
    " steps = counters.steps + excluded.steps, bytes = counters.bytes + excluded.bytes,"
    " last_at = CASE WHEN excluded.last_at > counters.last_at THEN excluded.last_at ELSE counters.last_at END"
    " RETURNING scope, steps, bytes"
)


def _bump(conn: Conn, scope: str, steps: int, nbytes: int, at: float = 0.0) -> tuple[int, int]:
    """Add to a scope's counters; what they hold now (so a put need not read them again)."""
    row = conn.execute(
        "INSERT INTO counters (scope, steps, bytes, last_at) VALUES ($1, $2, $3, $4)" + _BUMP, (scope, steps, nbytes, at),
    ).fetchone()
    return int(row[1]), int(row[2])


def _bump_both(conn: Conn, chat_id: str, steps: int, nbytes: int, at: float = 0.0) -> tuple[tuple[int, int], tuple[int, int]]:
    """Add the same to a chat's counters and the whole store's, in one statement: what each holds now."""
    rows = conn.execute(
        "INSERT INTO counters (scope, steps, bytes, last_at) VALUES ($1, $3, $4, $5), ($2, $3, $4, $5)" + _BUMP,
        (chat_id, GLOBAL, steps, nbytes, at),
    ).fetchall()
    now = {r[0]: (int(r[1]), int(r[2])) for r in rows}
    return now[chat_id], now[GLOBAL]


def _counter(conn: Conn, scope: str) -> tuple[int, int]:
    row = conn.execute("SELECT steps, bytes FROM counters WHERE scope = $1", (scope,)).fetchone()
    return (row["steps"], row["bytes"]) if row else (0, 0)


def _delete_where(conn: Conn, where: str, params: tuple[object, ...]) -> list[str]:
    """Delete the matching steps, keep the counters right, and collect bodies no step of their
    space uses (a body's bytes leave the count of the chat that added it)."""
    victims = conn.execute(f"SELECT seq, id, chat_id, own_bytes, refs FROM steps WHERE {where}", params).fetchall()
    if not victims:
        return []
    per_space: dict[str, list[bodies.Interval]] = {}
    chats: dict[str, str] = {}  # chat -> its space
    for v in victims:
        chats[v["chat_id"]] = space = space_of(conn, v["chat_id"])
        per_space.setdefault(space, []).extend(bodies.intervals(bodies.decode_runs(v["refs"])))
        conn.execute("DELETE FROM steps WHERE seq = $1", (v["seq"],))
        _bump_both(conn, v["chat_id"], -1, -v["own_bytes"])
    # Nearly always (the oldest step of a chat at its cap) the chat's oldest step left holds every
    # body dropped: then nothing of its space goes, and the chat is not empty, without reading the
    # whole space's references.
    left = set()
    for chat, space in chats.items():
        row = conn.execute("SELECT refs FROM steps WHERE chat_id = $1 ORDER BY seq LIMIT 1", (chat,)).fetchone()
        if row is None:
            continue
        left.add(chat)
        dropped = per_space.get(space)
        holds = bodies.merge(bodies.intervals(bodies.decode_runs(row[0])))
        if dropped is not None and not bodies.subtract(bodies.merge(dropped), holds):
            del per_space[space]
    _collect(conn, per_space)
    _forget_empty(conn, set(chats) - left)
    return [v["id"] for v in victims]


def _collect(conn: Conn, per_space: dict[str, list[bodies.Interval]]) -> None:
    """Delete the bodies of each space in `dropped` that no step of the space uses, kept-aside ones included."""
    for space, dropped in per_space.items():
        kept = [
            span
            for table in ("steps", "kept_steps")
            for (refs,) in conn.execute(f"SELECT refs FROM {table} WHERE chat_id IN ({bodies.members(SPACES)})", (space,))
            for span in bodies.intervals(bodies.decode_runs(refs))
        ] + files_sql.held(conn, space)
        # A space with no step left keeps no body at all; otherwise only unreferenced ones go.
        gone = bodies.ALL if not kept else bodies.subtract(bodies.merge(dropped), bodies.merge(kept))
        for lo, hi in gone:
            for owner, size in conn.execute(
                "SELECT coalesce(added_by, chat_id), sum(length(body)) FROM bodies WHERE chat_id = $1 AND n BETWEEN $2 AND $3"
                " GROUP BY 1", (space, lo, hi),
            ).fetchall():
                conn.execute("UPDATE counters SET bytes = bytes - $1 WHERE scope = $2", (size, owner))
                _bump(conn, GLOBAL, 0, -size)
            conn.execute("DELETE FROM bodies WHERE chat_id = $1 AND n BETWEEN $2 AND $3", (space, lo, hi))


def _forget_empty(conn: Conn, chats: Iterable[str]) -> None:
    """A chat with no step left, kept aside or not, and no file, has no counters and no body space of its own."""
    for chat_id in chats:
        if not any(
            conn.execute(f"SELECT 1 FROM {table} WHERE chat_id = $1 LIMIT 1", (chat_id,)).fetchone()
            for table in ("steps", "kept_steps")
        ) and not files_sql.has_files(conn, chat_id):
            conn.execute("DELETE FROM counters WHERE scope = $1", (chat_id,))
            conn.execute(f"DELETE FROM {SPACES} WHERE thread_id = $1", (chat_id,))


def _keep_after(conn: Conn, chat_id: str, step_id: str, restore_id: str) -> int:
    """Move the chat's steps after `step_id` aside for the restore's undo (its earlier restores' go for good).
    Running it again changes nothing."""
    _drop_kept(conn, "chat_id = $1 AND restore_id != $2", (chat_id, restore_id))
    where = "chat_id = $1 AND seq > (SELECT seq FROM steps WHERE id = $2 AND chat_id = $1)"
    args = (chat_id, step_id)
    moved = conn.execute(f"SELECT own_bytes FROM steps WHERE {where}", args).fetchall()
    conn.execute(
        f"INSERT INTO kept_steps (restore_id, {STEP_COLUMNS}) SELECT $3, {STEP_COLUMNS} FROM steps WHERE {where}", (*args, restore_id)
    )
    conn.execute(f"DELETE FROM steps WHERE {where}", args)
    own = sum(r[0] for r in moved)
    _bump_both(conn, chat_id, -len(moved), -own)
    return len(moved)


def _put_back(conn: Conn, chat_id: str, restore_id: str) -> int:
    """The restore's kept-aside steps back in their places (their seq). Running it again changes nothing."""
    where = "chat_id = $1 AND restore_id = $2"
    rows = conn.execute(f"SELECT own_bytes, created_at FROM kept_steps WHERE {where}", (chat_id, restore_id)).fetchall()
    conn.execute(f"INSERT INTO steps ({STEP_COLUMNS}) SELECT {STEP_COLUMNS} FROM kept_steps WHERE {where}", (chat_id, restore_id))
    conn.execute(f"DELETE FROM kept_steps WHERE {where}", (chat_id, restore_id))
    if rows:
        _bump_both(conn, chat_id, len(rows), sum(r[0] for r in rows), max(r[1] for r in rows))
    return len(rows)


def collect_all(conn: Conn, chats: Iterable[str]) -> None:
    """Every body of the chats' spaces that nothing refers to any more goes (a few file holders dropped)."""
    _collect(conn, {space_of(conn, chat_id): list(bodies.ALL) for chat_id in chats})
    _forget_empty(conn, chats)


def _drop_kept(conn: Conn, where: str, params: tuple[object, ...]) -> int:
    """Delete kept-aside steps for good (and what the restore kept of the files), with the bodies nothing else uses."""
    file_chats = files_sql.drop_undo(conn, where, params)
    if file_chats:
        collect_all(conn, file_chats)
    victims = conn.execute(f"SELECT seq, chat_id, refs FROM kept_steps WHERE {where}", params).fetchall()
    if not victims:
        return 0
    per_space: dict[str, list[bodies.Interval]] = {}
    for v in victims:
        per_space.setdefault(space_of(conn, v["chat_id"]), []).extend(bodies.intervals(bodies.decode_runs(v["refs"])))
        conn.execute("DELETE FROM kept_steps WHERE seq = $1", (v["seq"],))
    _collect(conn, per_space)
    _forget_empty(conn, {v["chat_id"] for v in victims})
    return len(victims)


def space_of(conn: Conn, chat_id: str) -> str:
    return bodies.space_of(conn, SPACES, chat_id)


class _Interner(bodies.Interner):
    """Adds to the chat's body space; each new body counts in the chat's bytes."""

    def __init__(self, conn: Conn, chat_id: str) -> None:
        _bump(conn, chat_id, 0, 0)
        super().__init__(conn, "bodies", space_of(conn, chat_id), owner=chat_id)


@dataclass
class _Shared:
    """What a new step takes over from the chat's newest step: its references to the first
    `count` messages, their bytes, whether any of them is stored cut, and the digest of the last
    of them (the new step's own, when it adds no message)."""

    runs: Runs = field(default_factory=list)
    count: int = 0
    msg_bytes: int = 0
    cut: bool = False
    refs_bytes: int = 0
    tail_digest: bytes | None = None


# What a new step reads before it is written, in one statement: the chat's newest step (what the
# new one shares with it), the chat's body space, its steps of the turn so far, whether it has files.
_OPENING = (
    f"SELECT (SELECT space FROM {SPACES} WHERE thread_id = $1) AS space,"
    " (SELECT count(*) FROM steps WHERE chat_id = $1 AND turn_index = $2) AS in_turn,"
    f" {files_sql.MARKED} AS marked,"
    " p.message_count, p.tail_key, p.tail_digest, p.refs, p.truncated, p.msg_bytes"
    " FROM (SELECT 1 AS one) AS o LEFT JOIN (SELECT message_count, tail_key, tail_digest, refs, truncated, msg_bytes"
    " FROM steps WHERE chat_id = $1 ORDER BY seq DESC LIMIT 1) AS p ON 1 = 1"
)


def _shared(step: NewStep, prev: Row) -> _Shared:
    n = len(step.message_ids)
    # A cut step keeps the digest of its last message as the conversation has it, not as
    # stored, so the steps after it still find what they share with it.
    if (
        prev["message_count"] is not None
        and 0 < prev["message_count"] <= n
        and step.message_ids[prev["message_count"] - 1] == prev["tail_key"]
        and bodies.digest(step.encode(prev["message_count"] - 1)) == prev["tail_digest"]
    ):
        return _Shared(
            orjson.loads(prev["refs"]), prev["message_count"], prev["msg_bytes"], bool(prev["truncated"]), len(prev["refs"]),
            prev["tail_digest"],
        )
    return _Shared()


def _stored_bytes(new: list[bytes], limit: int) -> int:
    """The room the new bodies take as stored; packed only when their plain size is over the limit
    (a body is never stored larger than it is)."""
    plain = sum(len(b) for b in new)
    return plain if plain <= limit else sum(len(bodies.pack(b)) for b in new)


def _put(conn: Conn, step: NewStep, budgets: Budgets, now: ConversationsNow | None = None) -> PutResult:
    """The size rule: a step counts what it adds (its new bodies and its own row), what the
    byte budgets count too. Over max_snapshot_bytes, only its new bodies are cut; the ones it
    shares stay references. A step holding a cut body, its own or shared, is flagged truncated."""
    n = len(step.message_ids)
    opening = conn.execute(_OPENING, (step.chat_id, step.turn_index)).fetchone()
    shared = _shared(step, opening)
    space = opening["space"] or step.chat_id
    new_bodies = [step.encode(i) for i in range(shared.count, n)]
    fields = orjson.dumps(step.fields)
    questions = orjson.dumps(step.questions)
    keys: list[bytes | None] = [bodies.digest(b) for b in new_bodies]
    # Its last message's digest as the conversation has it, taken before any body is cut below
    # (each body is hashed once: a 4 MB tool result takes milliseconds).
    tail_digest = keys[-1] if keys else shared.tail_digest
    room = budgets.max_snapshot_bytes - (len(fields) + len(questions) + shared.refs_bytes + ROW_OVERHEAD)
    # Only what the space does not hold yet counts, looked up when it could matter: when all the
    # step's new bodies together would not fit, some of them the space may hold already.
    if sum(len(b) for b in new_bodies) > room:
        known = bodies.numbers_of(conn, "bodies", space, [k for k in keys if k is not None])
        fresh = [i for i, k in enumerate(keys) if k not in known]
        if fresh and _stored_bytes([new_bodies[i] for i in fresh], room) > room:
            for i, body in zip(fresh, step.shrink([new_bodies[i] for i in fresh], max(room, 0)), strict=True):
                new_bodies[i], keys[i] = body, None
    cut = any(k is None for k in keys)
    # Its counters are written below, in this transaction: the space read above is the one.
    interner = bodies.Interner(conn, "bodies", space, owner=step.chat_id)
    new_ids = interner.add_all(list(zip(new_bodies, keys, strict=True)))
    added = interner.added
    truncated = cut or shared.cut
    msg_bytes = shared.msg_bytes + sum(len(b) for b in new_bodies)
    tail_key = step.message_ids[-1] if n else None
    refs = orjson.dumps(bodies.runs_extend(shared.runs, new_ids))
    extra = _extra(files_sql.manifest(conn, step.chat_id) if opening["marked"] else {}, step.did)  # the chat's files now, by reference
    own = len(fields) + len(refs) + len(questions) + len(extra or "") + ROW_OVERHEAD
    size = own + added  # the column state_bytes holds it: what the listing shows as a step's size
    cur = conn.execute(
        "INSERT INTO steps (id, chat_id, turn_index, iteration, created_at, model, questions, message_count,"
        " state_bytes, msg_bytes, own_bytes, truncated, tail_key, tail_digest, refs, fields, extra) VALUES"
        " ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING seq",
        (
            step.id, step.chat_id, step.turn_index, step.iteration, step.created_at, step.model,
            questions.decode(), n, size, msg_bytes, own, int(truncated), tail_key, tail_digest, refs, fields, extra,
        ),
    )
    (seq,) = cur.fetchone()
    counts = _bump_both(conn, step.chat_id, 1, size, step.created_at)
    evicted = _enforce(conn, step.chat_id, step.turn_index, seq, budgets, counts, in_turn=int(opening["in_turn"]) + 1,
                       present=msg_bytes, now=now)
    info = StepInfo(
        id=step.id, chat_id=step.chat_id, seq=seq, turn_index=step.turn_index, iteration=step.iteration,
        created_at=step.created_at, model=step.model, questions=list(step.questions), message_count=n,
        size=size, truncated=truncated, did=step.did or None,
    )
    return PutResult(info, evicted)


def _enforce(
    conn: Conn, chat: str, turn_index: int, seq: int, b: Budgets, counts: tuple[tuple[int, int], tuple[int, int]] | None = None,
    in_turn: int | None = None, present: int | None = None, now: ConversationsNow | None = None,
) -> list[str]:
    """Drop what the budgets no longer allow, oldest first; the step just written (seq) stays.
    `counts`: the chat's and the global counters as the put left them (read again after a deletion);
    `in_turn`: the turn's steps, the new one included, when the put read them; `present`: the bytes
    of the messages the step just written holds, when the put knows them; `now`: the store's figure of
    every chat's (read here again before a step goes for max_total_bytes).

    max_thread_bytes holds what a chat's steps keep beyond its conversation now (the messages of
    its newest step, counted as they are, before compression), and max_total_bytes the same over
    every chat: those messages are kept as long as the chat has a step at all, so dropping older
    steps that share them frees nothing. A chat whose conversation outgrew the budget (a year of
    it, hundreds of long tool results), or a team whose chats together did, keeps each chat's
    newest steps, restorable, and drops, oldest first, what only the history holds (its steps' own
    fields and questions, messages a chat no longer has) once that is over the budget."""
    evicted: list[str] = []
    if in_turn is None:
        (in_turn,) = conn.execute(
            "SELECT count(*) FROM steps WHERE chat_id = $1 AND turn_index = $2", (chat, turn_index)
        ).fetchone()
    for _ in range(max(in_turn - b.max_per_turn, 0)):
        # A turn keeps its first step and its newest ones.
        evicted += _delete_where(
            conn,
            "seq = (SELECT seq FROM steps WHERE chat_id = $1 AND turn_index = $2 ORDER BY seq LIMIT 1 OFFSET 1)",
            (chat, turn_index),
        )
    oldest_in_chat = "seq = (SELECT seq FROM steps WHERE chat_id = $1 AND seq < $2 ORDER BY seq LIMIT 1)"
    oldest_anywhere = "seq = (SELECT seq FROM steps WHERE seq < $1 ORDER BY seq LIMIT 1)"
    # The oldest step of any chat that has a newer one: history, not a chat's conversation now.
    oldest_history = (
        "seq = (SELECT s.seq FROM steps s WHERE s.seq < $1"
        " AND EXISTS (SELECT 1 FROM steps t WHERE t.chat_id = s.chat_id AND t.seq > s.seq) ORDER BY s.seq LIMIT 1)"
    )
    now = now or ConversationsNow()
    mine, total = counts if counts is not None and not evicted else (_counter(conn, chat), _counter(conn, GLOBAL))
    if mine[1] > b.max_thread_bytes and present is None:
        row = conn.execute("SELECT msg_bytes FROM steps WHERE seq = $1", (seq,)).fetchone()
        present = int(row[0]) if row else 0
    while mine[0] > b.max_snapshots or mine[1] - (present or 0) > b.max_thread_bytes:
        dropped = _delete_where(conn, oldest_in_chat, (chat, seq))
        if not dropped:
            break
        evicted += dropped
        mine, total = _counter(conn, chat), _counter(conn, GLOBAL)
    fresh = False  # whether `now` read every chat's conversation in this transaction
    while total[0] > b.max_global_snapshots or total[1] > b.max_total_bytes:
        if total[0] > b.max_global_snapshots:
            dropped = _delete_where(conn, oldest_anywhere, (seq,))
            fresh = False
        else:
            if total[1] - now.bytes <= b.max_total_bytes:
                break
            if not fresh:
                now.read(conn)
                fresh = True
                continue
            dropped = _delete_where(conn, oldest_history, (seq,))
        if not dropped:
            break
        evicted += dropped
        total = _counter(conn, GLOBAL)
    return evicted


class ConversationsNow:
    """The bytes of every chat's messages as its newest step holds them: what max_total_bytes does not
    hold. The read goes over every chat's newest step; it is made only when the figure kept says the
    steps are over the budget, and again before any step goes for it, so no step goes on a stale
    figure (one too high, after another replica's deletion, only lets the steps stay over the budget
    until this store's next write other than a save, which forgets it). At every save of a team over
    max_total_bytes, the read would make the saves of all chats conflict on PostgreSQL."""

    def __init__(self) -> None:
        self.bytes = 0

    def read(self, conn: Conn) -> None:
        (found,) = conn.execute(
            "SELECT coalesce(sum(s.msg_bytes), 0) FROM steps s"
            " WHERE s.seq = (SELECT max(t.seq) FROM steps t WHERE t.chat_id = s.chat_id)"
        ).fetchone()
        self.bytes = int(found)


def _read(conn: Conn, chat_id: str, step_id: str, window: tuple[int, int] | None = None) -> Step | None:
    row = conn.execute(
        f"SELECT {INFO_COLUMNS}, refs, fields FROM steps WHERE chat_id = $1 AND id = $2", (chat_id, step_id)
    ).fetchone()
    if row is None:
        return None
    runs = orjson.loads(row["refs"])
    first, stop = (0, row["message_count"]) if window is None else window
    page = runs if window is None else bodies.runs_slice(runs, first, stop)
    found = bodies.read(conn, "bodies", space_of(conn, chat_id), page)
    state = orjson.loads(b'{"messages":[' + b",".join(found) + b"]}")
    state.update(orjson.loads(row["fields"]))
    # What it shares with the chat's step before it is the same body numbers from the start.
    prev = conn.execute(
        "SELECT refs FROM steps WHERE chat_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT 1", (chat_id, row["seq"])
    ).fetchone()
    added_from = bodies.runs_common(runs, orjson.loads(prev["refs"])) if prev is not None else 0
    return Step(_info(row), state, first=min(first, row["message_count"]), added_from=added_from)


def _copy(
    conn: Conn, src: str, step_id: str, dst: str, new_id: str, budgets: Budgets, now: ConversationsNow | None = None
) -> StepInfo | None:
    row = conn.execute("SELECT * FROM steps WHERE chat_id = $1 AND id = $2", (src, step_id)).fetchone()
    if row is None:
        return None
    runs = orjson.loads(row["refs"])
    source_space = space_of(conn, src)
    if conn.execute("SELECT 1 FROM steps WHERE chat_id = $1 LIMIT 1", (dst,)).fetchone() is None:
        # A new chat (a fork) joins the source's body space: the step refers to the same bodies.
        conn.execute(
            f"INSERT INTO {SPACES} (thread_id, space) VALUES ($1, $2) ON CONFLICT (thread_id) DO UPDATE SET space = excluded.space",
            (dst, source_space),
        )
        _bump(conn, dst, 0, 0)
        new_ids, added = bodies.numbers(runs), 0
        extra = row["extra"]
    else:
        interner = _Interner(conn, dst)
        found = bodies.read(conn, "bodies", source_space, runs)
        new_ids = interner.add_all([(body, None) for body in found])
        # The step's files too, in the other chat's space (their numbers are that space's).
        files = files_sql.manifest_of(row["extra"])
        held = sorted(n for n in files.values() if n > 0)
        copied = interner.add_all([(b, None) for b in bodies.read(conn, "bodies", source_space, bodies.runs_extend([], held))])
        renumber = dict(zip(held, copied, strict=True))
        did = orjson.loads(row["extra"]).get("did") if row["extra"] else None
        extra = _extra({p: renumber.get(n, n) for p, n in files.items()}, did)
        added = interner.added
    refs = orjson.dumps(bodies.runs_extend([], new_ids))
    own = row["own_bytes"] - len(row["refs"]) + len(refs)
    cur = conn.execute(
        "INSERT INTO steps (id, chat_id, turn_index, iteration, created_at, model, questions, message_count,"
        " state_bytes, msg_bytes, own_bytes, truncated, tail_key, tail_digest, refs, fields, extra) SELECT $1, $2,"
        " turn_index, iteration, created_at, model, questions, message_count, $3, msg_bytes, $4, truncated, tail_key,"
        " tail_digest, $5, fields, $6"
        " FROM steps WHERE seq = $7 RETURNING seq",
        (new_id, dst, own + added, own, refs, extra, row["seq"]),
    )
    (seq,) = cur.fetchone()
    _bump_both(conn, dst, 1, own + added, row["created_at"])
    copied = conn.execute(f"SELECT {INFO_COLUMNS} FROM steps WHERE seq = $1", (seq,)).fetchone()
    info = _info(copied)
    _enforce(conn, dst, info.turn_index, seq, budgets, now=now)
    return info


class SqlSnapshotStore:
    """The SnapshotStore contract on one SQLite file (secure_delete on: a deleted step's text is gone)."""

    def __init__(self, db: Database, *, leases: str | None = None) -> None:
        self.db = db
        self.files = files_sql.SqlFileStore(db, collect_all)
        # The turn leases as this database names them when they share it (PostgreSQL's kazma.leases):
        # a step is then written only while its turn holds the chat (replicas/fence.py).
        self.leases = leases
        # How many messages each chat's newest step holds, as this store last wrote it: a new step
        # adds the messages after those (what tells a small step, SqliteDB.tx). Forgotten by every
        # other write, which may change which step is a chat's newest (one asked for while a step
        # was being written too: `_other_writes`).
        self._newest: OrderedDict[str, int] = OrderedDict()
        self._other_writes = 0
        self._now = ConversationsNow()  # every chat's conversation now, as last read (max_total_bytes)

    async def _tx(self, fn: Callable[[Conn], T]) -> T:
        self._newest.clear()
        self._now.bytes = 0  # a deletion may have made it less: read again when it matters
        self._other_writes += 1
        try:
            return await self.db.tx(fn)
        except DatabaseError as err:
            raise self._unavailable(err) from err

    async def _run(self, fn: Callable[[Conn], T]) -> T:
        try:
            return await self.db.run(fn)
        except DatabaseError as err:
            raise self._unavailable(err) from err

    def _unavailable(self, err: Exception) -> StoreUnavailable:
        return StoreUnavailable(message_id="steps_unreadable", cause=without_paths(str(err)), store=self.db.label)

    async def put(self, step: NewStep, budgets: Budgets) -> PutResult:
        """Write a step; LeaseLost when the turn writing it no longer holds its chat (replicas/fence.py)."""
        leases = self.leases
        held = fence.fence_for(step.chat_id) if leases else None

        def write(conn: Conn) -> PutResult:
            if leases:
                fence.check(conn, held, self.db, leases)
            return _put(conn, step, budgets, self._now)

        n, others = len(step.message_ids), self._other_writes
        try:
            result = await self.db.tx(write, small=self._small(step))
        except DatabaseError as err:
            raise self._unavailable(err) from err
        if others == self._other_writes:
            self._newest[step.chat_id] = n
            while len(self._newest) > NEWEST_KEPT:
                self._newest.popitem(last=False)
        return result

    def _small(self, step: NewStep) -> bool:
        """Whether the step adds SMALL_BYTES at most: its own fields, and the messages after the
        chat's newest step's (when this store wrote that one; else it is not known to be small),
        counting that step's last message too: the put encodes and hashes it again, to know that
        the new step shares the messages up to it (_shared). A step after a huge tool result is
        saved on the store's thread, not on the event loop."""
        before = self._newest.pop(step.chat_id, None)
        if before is None or before > len(step.message_ids):
            return False
        used = rough_bytes(step.fields, SMALL_BYTES)
        return used <= SMALL_BYTES and used + step.rough_bytes(max(before - 1, 0), SMALL_BYTES - used) <= SMALL_BYTES

    async def copy(self, src_chat: str, step_id: str, dst_chat: str, new_id: str, budgets: Budgets) -> StepInfo | None:
        """Copy one step into another chat (a fork's first step), bodies included."""
        return await self._tx(lambda c: _copy(c, src_chat, step_id, dst_chat, new_id, budgets, self._now))

    async def list_steps(self, chat_id: str) -> list[StepInfo]:
        rows = await self._run(
            lambda c: c.execute(f"SELECT {INFO_COLUMNS} FROM steps WHERE chat_id = $1 ORDER BY seq", (chat_id,)).fetchall()
        )
        return [_info(r) for r in rows]

    async def get(self, chat_id: str, step_id: str, window: tuple[int, int] | None = None) -> Step | None:
        return await self._run(lambda c: _read(c, chat_id, step_id, window))

    async def head(self, chat_id: str, step_id: str) -> StepHead | None:
        row = await self._run(
            lambda c: c.execute(
                f"SELECT {INFO_COLUMNS}, fields, tail_key, tail_digest FROM steps WHERE chat_id = $1 AND id = $2",
                (chat_id, step_id),
            ).fetchone()
        )
        if row is None:
            return None
        digest = bytes(row["tail_digest"]) if row["tail_digest"] is not None else None
        return StepHead(_info(row), orjson.loads(row["fields"]), row["tail_key"], digest)

    async def find(self, chat_id: str, prefix: str, limit: int = 10) -> list[StepInfo]:
        """Steps of one chat whose id starts with prefix: a range on the index, so no wildcard exists."""
        if not prefix:
            return []
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        rows = await self._run(
            lambda c: c.execute(
                f"SELECT {INFO_COLUMNS} FROM steps WHERE chat_id = $1 AND id >= $2 AND id < $3 ORDER BY seq LIMIT $4",
                (chat_id, prefix, upper, limit),
            ).fetchall()
        )
        return [_info(r) for r in rows]

    async def threads(self) -> list[ThreadSummary]:
        rows = await self._run(
            lambda c: c.execute(
                "SELECT scope, steps, bytes, last_at FROM counters WHERE scope != '' AND steps > 0 ORDER BY last_at DESC"
            ).fetchall()
        )
        return [ThreadSummary(r["scope"], r["steps"], r["bytes"], r["last_at"]) for r in rows]

    async def usage(self, chat_id: str | None = None) -> tuple[int, int]:
        """(steps, bytes) kept for one chat, or for the whole store."""
        return await self._run(lambda c: _counter(c, GLOBAL if chat_id is None else chat_id))

    async def bytes_of(self, chat_ids: list[str]) -> int:
        def read(conn: Conn) -> int:
            total = 0
            for at in range(0, len(chat_ids), 500):  # within every engine's limit on parameters
                some = chat_ids[at : at + 500]
                (found,) = conn.execute(
                    f"SELECT COALESCE(SUM(bytes), 0) FROM counters WHERE scope IN ({marks(len(some))})", some
                ).fetchone()
                total += int(found)
            return total

        return await self._run(read) if chat_ids else 0

    async def delete_chat(self, chat_id: str) -> int:
        """Every step of the chat, kept-aside ones too; how many were listed."""

        def write(conn: Conn) -> int:
            _drop_kept(conn, "chat_id = $1", (chat_id,))
            files = files_sql.has_files(conn, chat_id)
            files_sql.delete_chat(conn, chat_id)
            deleted = len(_delete_where(conn, "chat_id = $1", (chat_id,)))
            if files:  # the bodies its files alone held (a chat without steps has none to collect them)
                collect_all(conn, [chat_id])
            return deleted

        return await self._tx(write)

    async def keep_after(self, chat_id: str, step_id: str, restore_id: str) -> int:
        return await self._tx(lambda c: _keep_after(c, chat_id, step_id, restore_id))

    async def put_back(self, chat_id: str, restore_id: str) -> int:
        return await self._tx(lambda c: _put_back(c, chat_id, restore_id))

    async def drop_kept(self, chat_id: str) -> int:
        return await self._tx(lambda c: _drop_kept(c, "chat_id = $1", (chat_id,)))

    async def drop_kept_except(self, restore_ids: set[str]) -> int:
        """Kept-aside steps no live undo wants (left by a crash), for good."""

        def write(conn: Conn) -> int:
            found = {r[0] for table in ("kept_steps", "file_undo") for r in conn.execute(f"SELECT DISTINCT restore_id FROM {table}")}
            return sum(_drop_kept(conn, "restore_id = $1", (rid,)) for rid in found - restore_ids)

        return await self._tx(write)

    async def delete_after(self, chat_id: str, step_id: str) -> int:
        return len(
            await self._tx(
                lambda c: _delete_where(
                    c, "chat_id = $1 AND seq > (SELECT seq FROM steps WHERE id = $2 AND chat_id = $1)",
                    (chat_id, step_id),
                )
            )
        )

    async def delete_from_turn(self, chat_id: str, turn_index: int) -> int:
        return len(await self._tx(lambda c: _delete_where(c, "chat_id = $1 AND turn_index >= $2", (chat_id, turn_index))))

    async def delete_older_than(self, cutoff: float) -> int:
        return len(await self._tx(lambda c: _delete_where(c, "created_at < $1", (cutoff,))))

    async def purge_wal(self) -> None:
        await self.db.purge_wal()

    async def close(self) -> None:
        await self.db.close()
