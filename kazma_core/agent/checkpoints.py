"""LangGraph's checkpoints (the chat step history): opened, pruned per chat, written back."""

from __future__ import annotations

from pathlib import Path

import aiosqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


async def open_saver(path: Path) -> AsyncSqliteSaver:
    conn = await aiosqlite.connect(path)
    await conn.execute("PRAGMA synchronous=NORMAL")
    await conn.execute("PRAGMA secure_delete=ON")  # deleted chats leave no text in free pages
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    return saver


async def prune(saver: AsyncSqliteSaver, thread_id: str, keep: int) -> int:
    """Keep the newest `keep` checkpoints of a chat (ids sort by time), with their writes."""
    async with saver.lock:
        cur = await saver.conn.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
            " ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?",
            (thread_id, keep - 1),
        )
        row = await cur.fetchone()
        if row is None:
            return 0
        cur = await saver.conn.execute(
            "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id < ?", (thread_id, row[0])
        )
        removed = cur.rowcount
        await saver.conn.execute("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id < ?", (thread_id, row[0]))
        await saver.conn.commit()
        return removed


async def latest_checkpoint_id(saver: AsyncSqliteSaver, thread_id: str) -> str | None:
    """The id of a chat's newest checkpoint, without loading it."""
    async with saver.lock:
        cur = await saver.conn.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
            " ORDER BY checkpoint_id DESC LIMIT 1",
            (thread_id,),
        )
        row = await cur.fetchone()
    return str(row[0]) if row else None


async def purge_wal(saver: AsyncSqliteSaver) -> None:
    """Fold checkpoints.db's WAL into the file and empty it (deleted chats leave no copy there)."""
    async with saver.lock:
        await saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
