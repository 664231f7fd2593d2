"""kazma.db's side of restore, undo and fork: the durable intent, and the rows taken back,
kept aside, put back or copied.

A step is (turn T, iteration j). What belongs to the chat "as of" that step: transcript
rows of earlier turns, the question of turn T (and its answer only when the step is the
turn's last), facts learned at or before (T, j), and facts forgotten after it come back.

What a restore takes back is kept aside (tables ``kept_*``, by the restore's id) with an
``undos`` row, so the restore can be undone until the chat's next turn, a reset, a
forgetting, or the row's expiry. Only the chat's last restore can be undone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from kazma_core.stores.engine import Conn, Database, Row
from kazma_core.stores.interfaces import GiveUp
from kazma_core.stores.transcript_sql import later_rows, materialize, release, share_of, share_rows

# What comes after a step, its values first in the statement: $1 its turn, $2 its iteration
# (StepPoint.step()), or for the transcript $2 whether the step ends with the turn's answer (.rows()).
# Each begins with `turn_index >= $1`, which the (chat_id, turn_index) indexes answer: a restore near
# the end of a long chat reads the rows after its step, not the whole chat (3 ms at 10,000 messages).
# The transcript's rule is transcript_sql.later_rows, which a fork's share of its source's rows uses too.
AFTER_STEP = "(turn_index >= $1 AND (turn_index > $1 OR iteration > $2))"
FORGOTTEN_AFTER_STEP = "(forgotten_turn > $1 OR (forgotten_turn = $1 AND forgotten_iteration > $2))"
LATER_ROWS = later_rows("$1", "$2")
LATER_CARDS = "(turn_index > $1 OR status = 'pending')"  # $1 alone
TRANSCRIPT_COLUMNS = "id, chat_id, turn_index, role, text, created_at, body_n, pos"
FACT_COLUMNS = "id, chat_id, turn_index, iteration, text, forgotten_turn, forgotten_iteration, created_at"
CARD_COLUMNS = "id, chat_id, turn_index, tool_call_id, tool, args, status, created_at, expires_at, decided_by, decided_at"
KEPT_TABLES = ("kept_transcript", "kept_facts", "kept_approvals")

# An undo row's states: ready to undo; undoing (its kazma.db part committed, its steps not yet
# back); and why there is nothing to undo any more.
READY = "ready"
UNDOING = "undoing"
UNDONE = "undone"
TURN = "turn"  # the chat's next turn (or a reset) started
FORGOTTEN = "forgotten"  # the chat was forgotten, or its memory turned off
EXPIRED = "expired"


# The chat's undo ready, if any; its parameters are the chat ($1) and READY ($2).
UNDO_READY = "SELECT 1 FROM undos WHERE chat_id = $1 AND state = $2"


def undo_ready(conn: Conn, chat_id: str) -> bool:
    """Whether the chat has an undo ready (one indexed read: every turn asks, as it takes the lease)."""
    return conn.execute(UNDO_READY, (chat_id, READY)).fetchone() is not None


@dataclass(frozen=True)
class StepPoint:
    """Where in a chat a step stands."""

    turn_index: int
    iteration: int
    is_turn_answer: bool  # the step ends with the turn's answer

    def step(self) -> tuple[int, int]:
        """The values of AFTER_STEP and FORGOTTEN_AFTER_STEP."""
        return self.turn_index, self.iteration

    def rows(self) -> tuple[int, int]:
        """The values of LATER_ROWS."""
        return self.turn_index, int(self.is_turn_answer)


@dataclass(frozen=True)
class Intent:
    id: str
    chat_id: str
    step_id: str
    state: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class Undo:
    """A chat's last restore, and what undoing it puts back."""

    chat_id: str
    restore_id: str
    step_id: str
    state: str
    checkpoint_before: str | None
    last_turn_before: int
    created_at: float
    expires_at: float


def _undo(row: Row) -> Undo:
    return Undo(
        row["chat_id"], row["restore_id"], row["step_id"], row["state"], row["checkpoint_before"],
        row["last_turn_before"], row["created_at"], row["expires_at"],
    )


@dataclass(frozen=True)
class Version:
    """A chat made by an edit or a regenerate: from which chat, anew from which turn, in which
    conversation (the first chat of its versions). A chat no edit made has no row."""

    chat_id: str
    conversation: str
    version_of: str
    turn_index: int
    created_at: float


def version_link(chat_id: str, version_of: str, turn_index: int) -> Callable[[Conn], None]:
    """The row that makes a new chat a version of `version_of` (in its conversation), to commit
    with the version's chat row."""

    def write(conn: Conn) -> None:
        found = conn.execute("SELECT conversation FROM chat_versions WHERE chat_id = $1", (version_of,)).fetchone()
        conn.execute(
            "INSERT INTO chat_versions (chat_id, conversation, version_of, turn_index, created_at) VALUES ($1, $2, $3, $4, $5)",
            (chat_id, found["conversation"] if found else version_of, version_of, turn_index, time.time()),
        )

    return write


def _version(row: Row) -> Version:
    return Version(row["chat_id"], row["conversation"], row["version_of"], row["turn_index"], row["created_at"])


def _drop_kept(conn: Conn, chat_id: str) -> None:
    for table in KEPT_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE chat_id = $1", (chat_id,))


def _undo_and_intent(conn: Conn, intent: Intent, last_turn: int, undo_seconds: float) -> None:
    """The restore's undo row (ready until it expires) and its intent (finished once its steps and files are done)."""
    now = time.time()
    conn.execute(
        "INSERT INTO undos (chat_id, restore_id, step_id, state, checkpoint_before, last_turn_before,"
        " created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (chat_id) DO UPDATE SET"
        " restore_id = excluded.restore_id, step_id = excluded.step_id, state = excluded.state,"
        " checkpoint_before = excluded.checkpoint_before, last_turn_before = excluded.last_turn_before,"
        " created_at = excluded.created_at, expires_at = excluded.expires_at",
        (intent.chat_id, intent.id, intent.step_id, READY, intent.payload.get("checkpoint_before"),
         last_turn, now, now + undo_seconds),
    )
    conn.execute(
        "INSERT INTO restore_intents (id, chat_id, step_id, state, payload, created_at)"
        " VALUES ($1, $2, $3, 'rows_done', $4, $5) ON CONFLICT (id) DO UPDATE SET chat_id = excluded.chat_id,"
        " step_id = excluded.step_id, state = excluded.state, payload = excluded.payload,"
        " created_at = excluded.created_at",
        (intent.id, intent.chat_id, intent.step_id, orjson.dumps(intent.payload).decode(), time.time()),
    )


class RewindRows:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def versions_of_owner(self, owner_id: str) -> list[Version]:
        """Every version among a person's chats."""
        rows = await self.db.run(
            lambda c: c.execute(
                "SELECT v.* FROM chat_versions v JOIN chats ch ON ch.id = v.chat_id WHERE ch.owner_id = $1", (owner_id,)
            ).fetchall()
        )
        return [_version(r) for r in rows]

    async def conversation_versions(self, chat_id: str) -> list[Version]:
        """The versions in the conversation of this chat (its first chat has none of its own row)."""

        def read(conn: Conn) -> list[Row]:
            found = conn.execute("SELECT conversation FROM chat_versions WHERE chat_id = $1", (chat_id,)).fetchone()
            key = found["conversation"] if found else chat_id
            return conn.execute(
                "SELECT * FROM chat_versions WHERE conversation = $1 ORDER BY created_at, chat_id", (key,)
            ).fetchall()

        return [_version(r) for r in await self.db.run(read)]

    async def finish_intent(self, intent_id: str) -> None:
        await self.db.tx(lambda c: c.execute("DELETE FROM restore_intents WHERE id = $1", (intent_id,)))

    async def open_intents(self) -> list[Intent]:
        rows = await self.db.run(lambda c: c.execute("SELECT * FROM restore_intents ORDER BY created_at").fetchall())
        return [Intent(r["id"], r["chat_id"], r["step_id"], r["state"], orjson.loads(r["payload"])) for r in rows]

    def restore_writes(self, intent: Intent, point: StepPoint, undo_seconds: float) -> Callable[[Conn], None]:
        """Take back what came after the step (kept aside for an undo), and record the restore's
        intent as past its checkpoint: run inside the transaction that writes the step back (see
        SqlConversationStore.same_transaction), so they all commit together."""

        def write(conn: Conn) -> None:
            chat, rid, step, rows = intent.chat_id, intent.id, point.step(), point.rows()
            # Only the last restore can be undone: what an earlier one kept goes now.
            _drop_kept(conn, chat)
            share = share_of(conn, chat)
            if share is not None and (int(share["turn_index"]), int(share["answer"])) > rows:
                materialize(conn, chat)  # rows it shares go back: they become its own first
            (first,) = conn.execute(f"SELECT min(id) FROM transcript WHERE chat_id = $3 AND {LATER_ROWS}", (*rows, chat)).fetchone()
            if first is not None:
                release(conn, chat, first)  # forks sharing rows that go copy them first
            conn.execute(
                f"INSERT INTO kept_transcript (restore_id, {TRANSCRIPT_COLUMNS}) SELECT $3, {TRANSCRIPT_COLUMNS}"
                f" FROM transcript WHERE chat_id = $4 AND {LATER_ROWS}", (*rows, rid, chat),
            )
            conn.execute(f"DELETE FROM transcript WHERE chat_id = $3 AND {LATER_ROWS}", (*rows, chat))
            conn.execute(
                f"INSERT INTO kept_facts (restore_id, kind, {FACT_COLUMNS}) SELECT $3, 'deleted', {FACT_COLUMNS}"
                f" FROM facts WHERE chat_id = $4 AND {AFTER_STEP}", (*step, rid, chat),
            )
            conn.execute(f"DELETE FROM facts WHERE chat_id = $3 AND {AFTER_STEP}", (*step, chat))
            conn.execute(
                f"INSERT INTO kept_facts (restore_id, kind, {FACT_COLUMNS}) SELECT $3, 'unforgotten', {FACT_COLUMNS}"
                f" FROM facts WHERE chat_id = $4 AND {FORGOTTEN_AFTER_STEP}", (*step, rid, chat),
            )
            conn.execute(
                f"UPDATE facts SET forgotten_turn = NULL, forgotten_iteration = NULL WHERE chat_id = $3 AND {FORGOTTEN_AFTER_STEP}",
                (*step, chat),
            )
            conn.execute(
                f"INSERT INTO kept_approvals (restore_id, {CARD_COLUMNS}) SELECT $2, {CARD_COLUMNS}"
                f" FROM approvals WHERE chat_id = $3 AND {LATER_CARDS}", (point.turn_index, rid, chat),
            )
            conn.execute(f"DELETE FROM approvals WHERE chat_id = $2 AND {LATER_CARDS}", (point.turn_index, chat))
            (last_turn,) = conn.execute("SELECT last_turn FROM chats WHERE id = $1", (chat,)).fetchone()
            _undo_and_intent(conn, intent, last_turn, undo_seconds)
            conn.execute("UPDATE chats SET last_turn = $1 WHERE id = $2", (point.turn_index, chat))

        return write

    @staticmethod
    def files_only_writes(intent: Intent, undo_seconds: float) -> Callable[[Conn], None]:
        """A restore of the files alone: its undo row and intent, the conversation left as it is."""

        def write(conn: Conn) -> None:
            (last_turn,) = conn.execute("SELECT last_turn FROM chats WHERE id = $1", (intent.chat_id,)).fetchone()
            _drop_kept(conn, intent.chat_id)
            _undo_and_intent(conn, intent, last_turn, undo_seconds)

        return write

    @staticmethod
    def keep_rows(restore_id: str) -> Callable[[Conn, list[int]], None]:
        """Keep aside, for the restore's undo, the transcript rows the conversation store takes back
        because the restored state no longer holds their messages (it deletes them after)."""

        def keep(conn: Conn, row_ids: list[int]) -> None:
            conn.executemany(
                f"INSERT INTO kept_transcript (restore_id, {TRANSCRIPT_COLUMNS}) SELECT $1, {TRANSCRIPT_COLUMNS}"
                " FROM transcript WHERE id = $2",
                [(restore_id, row_id) for row_id in row_ids],
            )

        return keep

    def undo_writes(self, undo: Undo) -> Callable[[Conn], None]:
        """Put back what the restore took from kazma.db, and mark the undo as past its kazma.db
        part: run in the transaction that takes the restore's checkpoint away, so all commit together."""

        def write(conn: Conn) -> None:
            kept = (undo.chat_id, undo.restore_id)
            (first,) = conn.execute("SELECT min(id) FROM kept_transcript WHERE chat_id = $1 AND restore_id = $2", kept).fetchone()
            if first is not None:
                release(conn, undo.chat_id, first)  # a fork made since shares none of the rows coming back
            conn.execute(
                f"INSERT INTO transcript ({TRANSCRIPT_COLUMNS}) SELECT {TRANSCRIPT_COLUMNS} FROM kept_transcript"
                " WHERE chat_id = $1 AND restore_id = $2 ORDER BY id", kept,
            )
            conn.execute(
                f"INSERT INTO facts ({FACT_COLUMNS}) SELECT {FACT_COLUMNS} FROM kept_facts"
                " WHERE chat_id = $1 AND restore_id = $2 AND kind = 'deleted' ORDER BY id", kept,
            )
            conn.execute(
                "UPDATE facts SET forgotten_turn = k.forgotten_turn, forgotten_iteration = k.forgotten_iteration"
                " FROM kept_facts AS k WHERE k.chat_id = $1 AND k.restore_id = $2 AND k.kind = 'unforgotten'"
                " AND facts.id = k.id AND facts.chat_id = $1", kept,
            )
            conn.execute(
                f"INSERT INTO approvals ({CARD_COLUMNS}) SELECT {CARD_COLUMNS} FROM kept_approvals"
                " WHERE chat_id = $1 AND restore_id = $2", kept,
            )
            conn.execute("UPDATE chats SET last_turn = $1 WHERE id = $2", (undo.last_turn_before, undo.chat_id))
            _drop_kept(conn, undo.chat_id)
            conn.execute("UPDATE undos SET state = $1 WHERE chat_id = $2 AND restore_id = $3", (UNDOING, undo.chat_id, undo.restore_id))

        return write

    async def kept_counts(self, chat_id: str, restore_id: str) -> dict[str, int]:
        """How much of each kind an undo would put back in kazma.db."""

        def read(conn: Conn) -> dict[str, int]:
            def count(table: str, extra: str = "") -> int:
                return int(conn.execute(
                    f"SELECT count(*) FROM {table} WHERE chat_id = $1 AND restore_id = $2{extra}", (chat_id, restore_id)
                ).fetchone()[0])

            return {
                "messages": count("kept_transcript"),
                "memories": count("kept_facts", " AND kind = 'deleted'"),
                "forgotten_again": count("kept_facts", " AND kind = 'unforgotten'"),
                "cards": count("kept_approvals"),
            }

        return await self.db.run(read)

    async def undo_of(self, chat_id: str) -> Undo | None:
        row = await self.db.run(lambda c: c.execute("SELECT * FROM undos WHERE chat_id = $1", (chat_id,)).fetchone())
        return _undo(row) if row else None

    async def undoing(self) -> list[Undo]:
        """Undos a crash interrupted after their kazma.db part."""
        rows = await self.db.run(lambda c: c.execute("SELECT * FROM undos WHERE state = $1", (UNDOING,)).fetchall())
        return [_undo(r) for r in rows]

    async def live_restores(self) -> set[str]:
        """The restores whose kept-aside steps must stay (an undo may still want them)."""
        rows = await self.db.run(
            lambda c: c.execute("SELECT restore_id FROM undos WHERE state IN ($1, $2)", (READY, UNDOING)).fetchall()
        )
        return {r[0] for r in rows}

    async def undone(self, undo: Undo) -> None:
        await self.db.tx(
            lambda c: c.execute(
                "UPDATE undos SET state = $1 WHERE chat_id = $2 AND restore_id = $3", (UNDONE, undo.chat_id, undo.restore_id)
            )
        )

    async def ready(self, chat_id: str) -> bool:
        """Whether the chat has an undo ready."""
        return await self.db.run(lambda c: undo_ready(c, chat_id))

    @staticmethod
    def give_up(chat_id: str, why: str) -> GiveUp:
        """Whatever a ready undo would put back in kazma.db goes, and the row says why (`why`): run
        first in the transaction that drops the chat's history from before the restore
        (ConversationStore.drop_history), whose newest checkpoint it names. None, and nothing
        changed, when no undo was ready (another caller gave it up, or undid it, first)."""

        def write(conn: Conn) -> str | None:
            row = conn.execute(
                "UPDATE undos SET state = $1 WHERE chat_id = $2 AND state = $3 RETURNING checkpoint_before",
                (why, chat_id, READY),
            ).fetchone()
            if row is None:
                return None
            _drop_kept(conn, chat_id)
            return str(row[0] or "")

        return write

    async def purge(self) -> None:
        """What was given up leaves kazma.db's files now (its WAL: secure_delete zeroed the pages)."""
        await self.db.purge_wal()

    async def expired_undos(self, now: float) -> list[str]:
        rows = await self.db.run(
            lambda c: c.execute("SELECT chat_id FROM undos WHERE state = $1 AND expires_at <= $2", (READY, now)).fetchall()
        )
        return [r[0] for r in rows]

    def fork_writes(
        self, new_chat_id: str, owner_id: str, title: str, source_chat: str, step_id: str, point: StepPoint,
        counted: list[int] | None = None,
    ) -> Callable[[Conn], None]:
        """The fork's chat with its lineage, transcript (the source's rows as of the step, shared by
        reference) and facts as of the step, to commit with the fork's first checkpoint (which puts
        the fork in its source's body space, where the rows' bodies are). With `counted`, the bytes
        of text the rows it copied hold (what the fork adds to its owner's quota in kazma.db) are
        appended to it once written."""

        def write(conn: Conn) -> None:
            conn.execute(
                "INSERT INTO chats (id, owner_id, title, created_at, last_turn, forked_from_chat, forked_from_step,"
                " forked_from_turn, forked_from_iteration) VALUES ($1, $2, $3, $4, $5, $6, $7, $5, $8)",
                (new_chat_id, owner_id, title, time.time(), point.turn_index, source_chat, step_id, point.iteration),
            )
            share_rows(conn, new_chat_id, source_chat, *point.rows())  # by reference, not copied
            conn.execute(
                "INSERT INTO facts (chat_id, turn_index, iteration, text, forgotten_turn, forgotten_iteration, created_at)"
                " SELECT $3, turn_index, iteration, text,"
                f" CASE WHEN {FORGOTTEN_AFTER_STEP} THEN NULL ELSE forgotten_turn END,"
                f" CASE WHEN {FORGOTTEN_AFTER_STEP} THEN NULL ELSE forgotten_iteration END, created_at"
                f" FROM facts WHERE chat_id = $4 AND NOT {AFTER_STEP} ORDER BY id",
                (*point.step(), new_chat_id, source_chat),
            )
            if counted is not None:  # the fork's own rows only: the same sums as owner_text_bytes
                counted.append(sum(
                    int(conn.execute(f"SELECT COALESCE(SUM({self.db.octets('text')}), 0) FROM {table} WHERE chat_id = $1",
                                     (new_chat_id,)).fetchone()[0])
                    for table in ("transcript", "facts")
                ))

        return write
