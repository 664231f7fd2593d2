"""A chat's transcript as people read it: its rows are written by the conversation store, with the
checkpoints they show; here are its reads, and the rows that are no message (a reset's marker).

A fork shares its source's rows instead of copying them (a fork of a 10,000-message chat wrote
10,000 rows: 33 ms of its 58). Its `transcript_shares` row says which: the source's rows up to
row id `upto` (the source's newest when the fork was made), less those after the fork's step
(`later_rows`). The chat shows those rows, then its own, each in its place (`k`: a row's `pos`,
or its id). What a source has shared never changes under the fork: before rows a fork shares
are deleted (a restore, an undo's rows coming back, the source deleted), the fork copies what it
shares into its own rows (`materialize`, in the same transaction), keeping their places; and a
fork taking back rows it shares (a restore to a step before its own start) copies them first.
A fork's own rows always come after the rows it shares: ids only grow while the row `upto` is there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from kazma_core.stores.bodies import unpack
from kazma_core.stores.engine import Conn, Database, Row
from kazma_core.stores.interfaces import Also
from kazma_core.stores.types import TranscriptRow


def body_text(body: bytes) -> str:
    """The words of a saved message body (its content; the text parts of a list content)."""
    content = orjson.loads(unpack(body)).get("data", {}).get("content", "")
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def later_rows(turn: str, answer: str, t: str = "") -> str:
    """What comes after a step in a transcript (SQL): rows of later turns, and of the step's turn
    its answer and tool rows unless the step ends with the answer (`answer` 1). `turn` and
    `answer` are parameters or columns; `t` the rows' alias with its dot. It begins with
    `turn_index >= turn`, which the (chat_id, turn_index) index answers: a restore near the end
    of a long chat reads the rows after its step, not the whole chat."""
    return f"({t}turn_index >= {turn} AND ({t}turn_index > {turn} OR ({t}role != 'user' AND {answer} = 0)))"


# The rows chat `{chat}` shares with its source (t), as a FROM and WHERE.
SHARED_ROWS = (
    "transcript_shares s JOIN transcript t ON t.chat_id = s.source AND t.id <= s.upto"
    " WHERE s.chat_id = {chat} AND NOT " + later_rows("s.turn_index", "s.answer", "t.")
)
PLACE = "coalesce(t.pos, t.id)"  # a row's place in its chat


def visible_rows(chat: str, columns: str, where: str = "", last: str = "") -> str:
    """A SELECT of the rows chat `chat` (a parameter) shows, its own and those it shares, each with
    `columns` (of alias t) and its place k; `where` narrows both (AND ..., of t). With `last` (a
    LIMIT's parameter), only the newest that many of each, found by the (chat_id, place) index."""
    tail = f" ORDER BY k DESC LIMIT {last}" if last else ""
    own = f"SELECT {columns}, {PLACE} AS k FROM transcript t WHERE t.chat_id = {chat} {where}{tail}"
    shared = f"SELECT {columns}, {PLACE} AS k FROM {SHARED_ROWS.format(chat=chat)} {where}{tail}"
    return f"SELECT * FROM ({own}) o UNION ALL SELECT * FROM ({shared}) h" if last else f"{own} UNION ALL {shared}"


def add_row(conn: Conn, chat_id: str, turn: int, role: str, text: str, n: int) -> bool:
    """Give message body `n` a row of the chat, unless the chat shows one already (its own, or one
    it shares) or is gone; whether it was added. One statement: a turn adds two rows."""
    return conn.execute(
        "INSERT INTO transcript (chat_id, turn_index, role, text, created_at, body_n) SELECT $1, $2, $3, $4, $5, $6"
        " FROM chats WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM transcript WHERE chat_id = $1 AND body_n = $6"
        f" UNION ALL SELECT 1 FROM {SHARED_ROWS.format(chat='$1')} AND t.body_n = $6)",
        (chat_id, turn, role, text, time.time(), n),
    ).rowcount == 1


def share_of(conn: Conn, chat_id: str) -> Row | None:
    """The chat's share of its source's rows (source, upto, turn_index, answer), or None."""
    return conn.execute(
        "SELECT source, upto, turn_index, answer FROM transcript_shares WHERE chat_id = $1", (chat_id,)
    ).fetchone()


def share_rows(conn: Conn, chat_id: str, source: str, turn_index: int, answer: int) -> None:
    """Chat `chat_id` (new: no row of its own yet) shows the rows of `source` as of a step (turn
    `turn_index`, `answer` 1 when the step ends with the turn's answer), by reference. A source
    that shares another's rows passes that share on (narrowed to the earlier step of the two) with
    copies of its own rows: a share is never of a share."""
    share = share_of(conn, source)
    if share is None:
        (upto,) = conn.execute("SELECT coalesce(max(id), 0) FROM transcript WHERE chat_id = $1", (source,)).fetchone()
        if upto:
            conn.execute(
                "INSERT INTO transcript_shares (chat_id, source, upto, turn_index, answer) VALUES ($1, $2, $3, $4, $5)",
                (chat_id, source, upto, turn_index, answer),
            )
        return
    turn, ends = min((int(share["turn_index"]), int(share["answer"])), (turn_index, answer))
    conn.execute(
        "INSERT INTO transcript_shares (chat_id, source, upto, turn_index, answer) VALUES ($1, $2, $3, $4, $5)",
        (chat_id, share["source"], share["upto"], turn, ends),
    )
    conn.execute(
        "INSERT INTO transcript (chat_id, turn_index, role, text, created_at, body_n) SELECT $1, turn_index, role,"
        f" text, created_at, body_n FROM transcript t WHERE chat_id = $2 AND NOT {later_rows('$3', '$4')} ORDER BY {PLACE}",
        (chat_id, source, turn_index, answer),
    )


def materialize(conn: Conn, chat_id: str) -> None:
    """The rows the chat shares become its own: copied in their places (`pos`), the chat-app
    messages linked to them linked to the copies; the share goes."""
    share = share_of(conn, chat_id)
    if share is None:
        return
    conn.execute(
        "INSERT INTO transcript (chat_id, turn_index, role, text, created_at, body_n, pos) SELECT $1, t.turn_index,"
        f" t.role, t.text, t.created_at, t.body_n, {PLACE} FROM {SHARED_ROWS.format(chat='$1')} ORDER BY {PLACE}",
        (chat_id,),
    )
    copy_of = (
        "FROM transcript n JOIN transcript t ON coalesce(n.pos, n.id) = coalesce(t.pos, t.id)"
        " WHERE n.chat_id = $1 AND n.pos IS NOT NULL AND t.chat_id = $2 AND t.id = message_links.row_id"
    )
    conn.execute(
        f"UPDATE message_links SET row_id = (SELECT n.id {copy_of}) WHERE chat_id = $1 AND EXISTS (SELECT 1 {copy_of})",
        (chat_id, share["source"]),
    )
    conn.execute("DELETE FROM transcript_shares WHERE chat_id = $1", (chat_id,))


def release(conn: Conn, source: str, from_id: int = 0) -> None:
    """Before rows of `source` from row id `from_id` on are deleted (or put back by an undo): every
    chat sharing any of them makes what it shares its own."""
    for (chat_id,) in conn.execute(
        "SELECT chat_id FROM transcript_shares WHERE source = $1 AND upto >= $2", (source, from_id)
    ).fetchall():
        materialize(conn, chat_id)


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
        self, chat_id: str, *, before: int | None = None, through: int | None = None, limit: int | None = None
    ) -> list[TranscriptRow]:
        """The chat's visible messages (its own rows and those it shares), oldest first; a row that
        refers to a message body shows that body's text. With `limit`, only the newest `limit` rows
        (of those before row `before`, or up to row `through` included): a page read by the index,
        however long the chat."""
        params: list[str | int] = [chat_id]
        where = ""
        for bound, op in ((before, "<"), (through, "<=")):
            if bound is not None:
                params.append(bound)
                # The place of that row; a number that is no row's id is a place itself.
                where += f" AND {PLACE} {op} coalesce((SELECT coalesce(pos, id) FROM transcript WHERE id = ${len(params)}), ${len(params)})"
        columns = "t.id, t.chat_id, t.turn_index, t.role, t.text, t.created_at, t.body_n"
        if limit is None:
            rows_sql, order = visible_rows("$1", columns, where), "v.k"
        else:
            params.append(limit)
            last = f"${len(params)}"
            # The newest `limit` of each part, then of both: a page reads a page, however long the chat.
            rows_sql, order = f"SELECT * FROM ({visible_rows('$1', columns, where, last)}) u ORDER BY k DESC LIMIT {last}", "v.k DESC"

        def read(conn: Conn) -> list[TranscriptRow]:
            rows = conn.execute(
                "SELECT v.id, v.turn_index, v.role, v.text, v.created_at, b.body"
                f" FROM ({rows_sql}) v"
                " LEFT JOIN conv_spaces s ON s.thread_id = v.chat_id"
                " LEFT JOIN conv_bodies b ON b.chat_id = coalesce(s.space, v.chat_id) AND b.n = v.body_n"
                f" ORDER BY {order}",
                params,
            ).fetchall()
            if limit is not None:
                rows.reverse()
            # A row's own text (an error note's reason, a reset marker) comes first; else its message's words.
            return [TranscriptRow(r[0], r[1], r[2], r[3] or (body_text(r[5]) if r[5] is not None else ""), r[4]) for r in rows]

        return await self.db.run(read)
