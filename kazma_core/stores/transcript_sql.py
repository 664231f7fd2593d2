"""A chat's transcript as people read it: its rows are written by the conversation store, with the
checkpoints they show; here are its reads, and the rows that are no message (a reset's marker)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from kazma_core.stores.bodies import unpack
from kazma_core.stores.engine import Conn, Database
from kazma_core.stores.interfaces import Also
from kazma_core.stores.types import TranscriptRow


def body_text(body: bytes) -> str:
    """The words of a saved message body (its content; the text parts of a list content)."""
    content = orjson.loads(unpack(body)).get("data", {}).get("content", "")
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def transcript_row(chat_id: str, turn_index: int, role: str, text: str) -> Callable[[Conn], None]:
    """A row that is not a message of the conversation (a reset's marker), to commit with a checkpoint."""

    def write(conn: Conn) -> None:
        conn.execute(
            "INSERT INTO transcript (chat_id, turn_index, role, text, created_at) VALUES ($1, $2, $3, $4, $5)",
            (chat_id, turn_index, role, text, time.time()),
        )

    return write


@dataclass(frozen=True)
class TranscriptStore:
    """Reads of kazma.db's transcript, and the rows that are not messages (a reset's marker)."""

    db: Database

    def marker_row(self, chat_id: str, turn_index: int, role: str, text: str) -> Also:
        """A transcript row that is not a message of the conversation (a reset's marker), to commit
        with the chat's next checkpoint (ConversationStore.same_transaction)."""
        return transcript_row(chat_id, turn_index, role, text)

    async def transcript(
        self, chat_id: str, *, before: int | None = None, limit: int | None = None
    ) -> list[TranscriptRow]:
        """The chat's visible messages, oldest first; a row that refers to a message body shows that
        body's text. With `limit`, only the newest `limit` rows (of those before row id `before`):
        a page read by the index, however long the chat."""
        where = "t.chat_id = $1"
        params: list[str | int] = [chat_id]
        if before is not None:
            params.append(before)
            where += f" AND t.id < ${len(params)}"
        order = "t.id"
        if limit is not None:
            params.append(limit)
            order += f" DESC LIMIT ${len(params)}"

        def read(conn: Conn) -> list[TranscriptRow]:
            rows = conn.execute(
                "SELECT t.id, t.turn_index, t.role, t.text, t.created_at, b.body FROM transcript t"
                " LEFT JOIN conv_spaces s ON s.thread_id = t.chat_id"
                " LEFT JOIN conv_bodies b ON b.chat_id = coalesce(s.space, t.chat_id) AND b.n = t.body_n"
                f" WHERE {where} ORDER BY {order}",
                params,
            ).fetchall()
            if limit is not None:
                rows.reverse()
            # A row's own text (an error note's reason, a reset marker) comes first; else its message's words.
            return [TranscriptRow(r[0], r[1], r[2], r[3] or (body_text(r[5]) if r[5] is not None else ""), r[4]) for r in rows]

        return await self.db.run(read)
