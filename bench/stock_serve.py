"""`kazma serve` with LangGraph's stock checkpointer, for bench/e2e.py to run beside ours.

The same server, routes and settings; only the checkpointer differs: LangGraph's
AsyncSqliteSaver in checkpoints.db (a whole copy of the state at every checkpoint), with
the transcript rows written after each put in a transaction of their own and restores
rebuilt from the step, as Kazma did before the conversation store. Not a product path:
a yardstick.

    .venv/bin/python bench/stock_serve.py --data-dir DIR --port PORT
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import aiosqlite
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import kazma_core.stores.backends as backends
from kazma_core.stores.conversation_sql import MESSAGES, _is_messages, transcript_role
from kazma_core.stores.sqlite import SqliteDB


class StockCheckpointer(AsyncSqliteSaver):
    """AsyncSqliteSaver plus what Kazma's code asks of its conversation store."""

    def __init__(self, db: SqliteDB) -> None:
        self.db = db
        self._conn_path = db.path.with_name("checkpoints.db")
        self._last: dict[str, list[Any]] = {}
        self._also: dict[str, tuple[Any, bool]] = {}
        super().__init__(None)  # type: ignore[arg-type]  # connected on first use

    async def setup(self) -> None:
        if self.conn is None:
            self.conn = await aiosqlite.connect(self._conn_path)
            await self.conn.execute("PRAGMA journal_mode=WAL")
            await self.conn.execute("PRAGMA synchronous=NORMAL")
        await super().setup()

    async def aput(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> RunnableConfig:
        out = await super().aput(config, checkpoint, metadata, new_versions)
        thread_id = str(config["configurable"]["thread_id"])
        messages = checkpoint["channel_values"].get(MESSAGES)
        also, derive = self._also.pop(str(config['configurable']['thread_id']), (None, True))
        if _is_messages(messages) and config["configurable"].get("checkpoint_ns", "") == "":
            old = self._last.get(thread_id, [])
            shared = next((i for i, (m, seen) in enumerate(zip(messages, old, strict=False)) if m.id != seen), min(len(messages), len(old)))
            new = messages[shared:] if derive else []
            self._last[thread_id] = [m.id for m in messages]
            turn = checkpoint["channel_values"].get("turn_index")
            await self.db.tx(lambda conn: self._rows(conn, thread_id, turn, new, also))
        elif also is not None:
            await self.db.tx(also)
        return out

    @staticmethod
    def _rows(conn: sqlite3.Connection, thread_id: str, turn: Any, new: Sequence[BaseMessage], also: Any) -> None:
        if also is not None:
            also(conn)
        for message in new:
            shown = transcript_role(message)
            if shown is not None:
                role, text = shown
                conn.execute(
                    "INSERT INTO transcript (chat_id, turn_index, role, text, created_at) SELECT $1, $2, $3, $4, $5"
                    " WHERE EXISTS (SELECT 1 FROM chats WHERE id = $1)",
                    (thread_id, turn or 0, role, text if text is not None else message.text, time.time()),
                )
                if role == "user":
                    conn.execute("UPDATE chats SET last_turn = max(last_turn, $1) WHERE id = $2", (turn or 0, thread_id))

    @contextlib.asynccontextmanager
    async def same_transaction(self, thread_id: str, also: Any = None, *, fork_from: str | None = None,
                               rewind: bool = False, taken_back: Any = None, last_turn_rows: bool = False) -> AsyncIterator[None]:
        # A restore's rows are Kazma's rewind rows (kazma.db), as before the conversation store: the
        # rows the step's last turn shows are there already, none is derived again (last_turn_rows).
        self._also[thread_id] = (also, not rewind)
        yield

    @contextlib.asynccontextmanager
    async def gathering(self, thread_id: str) -> AsyncIterator[None]:
        """The stock saver writes each task's writes as LangGraph hands them over: nothing is held."""
        yield

    async def adelete_thread(self, thread_id: str, also: Any = None) -> None:  # type: ignore[override]
        await self.setup()
        await super().adelete_thread(thread_id)
        if also is not None:
            await self.db.tx(also)

    async def drop_history(self, thread_id: str, give_up: Any) -> bool:
        """An undo given up: its rows in kazma.db go; the stock saver keeps every checkpoint, as it does."""
        return await self.db.tx(give_up) is not None

    async def head(self, thread_id: str) -> tuple[str, list[BaseMessage]] | None:
        found = await self.aget_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        return (found.checkpoint["id"], list(found.checkpoint["channel_values"].get(MESSAGES) or [])) if found else None

    async def body_digest(self, thread_id: str, checkpoint_id: str, index: int) -> bytes | None:
        return None  # no bodies: a restore rebuilds the step's messages, as before

    async def latest_id(self, thread_id: str) -> str | None:
        found = await self.aget_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        return found.checkpoint["id"] if found else None

    async def thread_ids(self) -> set[str]:
        await self.setup()
        async with self.conn.execute("SELECT DISTINCT thread_id FROM checkpoints") as cur:
            return {r[0] for r in await cur.fetchall()}

    async def trim(self, thread_id: str, keep: int, *, per_namespace: bool = False) -> int:
        await self.setup()
        async with self.lock:
            cur = await self.conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
                " ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?", (thread_id, keep - 1),
            )
            row = await cur.fetchone()
            if row is None:
                return 0
            cur = await self.conn.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id < ?", (thread_id, row[0]))
            await self.conn.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id < ?", (thread_id, row[0]))
            await self.conn.commit()
            return cur.rowcount

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        await self.setup()
        return await super().aget_tuple(config)


def main() -> None:
    from kazma_server.cli import main as kazma_main

    # Where the stores are opened for the server (Stores.open): its conversation store is this one.
    backends.SqlConversationStore = StockCheckpointer  # type: ignore[misc,assignment]
    sys.exit(kazma_main(["serve", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
