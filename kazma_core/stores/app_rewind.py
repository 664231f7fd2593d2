"""kazma.db's side of restore and fork: the durable intent, and the rows taken back or copied.

A step is (turn T, iteration j). What belongs to the chat "as of" that step: transcript
rows of earlier turns, the question of turn T (and its answer only when the step is the
turn's last), facts learned at or before (T, j), and facts forgotten after it come back.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from kazma_core.stores.app_sqlite import AppStore

AFTER_STEP = "(turn_index > :t OR (turn_index = :t AND iteration > :j))"
FORGOTTEN_AFTER_STEP = "(forgotten_turn > :t OR (forgotten_turn = :t AND forgotten_iteration > :j))"
LATER_ROWS = "(turn_index > :t OR (turn_index = :t AND role != 'user' AND NOT :keep_answer))"


@dataclass(frozen=True)
class StepPoint:
    """Where in a chat a step stands."""

    turn_index: int
    iteration: int
    is_turn_answer: bool  # the step ends with the turn's answer

    def params(self) -> dict[str, Any]:
        return {"t": self.turn_index, "j": self.iteration, "keep_answer": int(self.is_turn_answer)}


@dataclass(frozen=True)
class Intent:
    id: str
    chat_id: str
    step_id: str
    state: str
    payload: dict[str, Any]


class RewindRows:
    def __init__(self, store: AppStore) -> None:
        self.db = store.db

    async def finish_intent(self, intent_id: str) -> None:
        await self.db.tx(lambda c: c.execute("DELETE FROM restore_intents WHERE id = ?", (intent_id,)))

    async def open_intents(self) -> list[Intent]:
        rows = await self.db.run(lambda c: c.execute("SELECT * FROM restore_intents ORDER BY created_at").fetchall())
        return [Intent(r["id"], r["chat_id"], r["step_id"], r["state"], orjson.loads(r["payload"])) for r in rows]

    def restore_writes(self, intent: Intent, point: StepPoint) -> Callable[[sqlite3.Connection], None]:
        """Delete what came after the step, and record the restore's intent as past its
        checkpoint: run inside the transaction that writes the step back (see
        SqliteConversationStore.same_transaction), so the three commit together."""

        def write(conn: sqlite3.Connection) -> None:
            p = {**point.params(), "chat": intent.chat_id}
            conn.execute(f"DELETE FROM transcript WHERE chat_id = :chat AND {LATER_ROWS}", p)
            conn.execute(f"DELETE FROM facts WHERE chat_id = :chat AND {AFTER_STEP}", p)
            conn.execute(
                f"UPDATE facts SET forgotten_turn = NULL, forgotten_iteration = NULL WHERE chat_id = :chat AND {FORGOTTEN_AFTER_STEP}",
                p,
            )
            conn.execute("DELETE FROM approvals WHERE chat_id = :chat AND (turn_index > :t OR status = 'pending')", p)
            conn.execute("UPDATE chats SET last_turn = :t WHERE id = :chat", p)
            conn.execute(
                "INSERT OR REPLACE INTO restore_intents (id, chat_id, step_id, state, payload, created_at)"
                " VALUES (?, ?, ?, 'rows_done', ?, ?)",
                (intent.id, intent.chat_id, intent.step_id, orjson.dumps(intent.payload).decode(), time.time()),
            )

        return write

    def fork_writes(
        self, new_chat_id: str, owner_id: str, title: str, source_chat: str, step_id: str, point: StepPoint
    ) -> Callable[[sqlite3.Connection], None]:
        """The fork's chat with its lineage, transcript and facts as of the step, to commit with the
        fork's first checkpoint (which puts the fork in its source's body space, where the rows'
        bodies are)."""

        def write(conn: sqlite3.Connection) -> None:
            p = {**point.params(), "src": source_chat, "dst": new_chat_id, "now": time.time()}
            conn.execute(
                "INSERT INTO chats (id, owner_id, title, created_at, last_turn, forked_from_chat, forked_from_step,"
                " forked_from_turn, forked_from_iteration) VALUES (:dst, :owner, :title, :now, :t, :src, :step, :t, :j)",
                {**p, "owner": owner_id, "title": title, "step": step_id},
            )
            conn.execute(
                "INSERT INTO transcript (chat_id, turn_index, role, text, created_at, body_n) SELECT :dst, turn_index,"
                f" role, text, created_at, body_n FROM transcript WHERE chat_id = :src AND NOT {LATER_ROWS} ORDER BY id",
                p,
            )
            conn.execute(
                "INSERT INTO facts (chat_id, turn_index, iteration, text, forgotten_turn, forgotten_iteration, created_at)"
                " SELECT :dst, turn_index, iteration, text,"
                f" CASE WHEN {FORGOTTEN_AFTER_STEP} THEN NULL ELSE forgotten_turn END,"
                f" CASE WHEN {FORGOTTEN_AFTER_STEP} THEN NULL ELSE forgotten_iteration END, created_at"
                f" FROM facts WHERE chat_id = :src AND NOT {AFTER_STEP} ORDER BY id",
                p,
            )

        return write
