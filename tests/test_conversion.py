"""A data folder of the first layout (LangGraph's stock saver in checkpoints.db) is converted on
first start: the chats go on where they were, a copy of the old files is kept, and a
conversion that fails leaves the old files untouched and says why."""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
import uuid
from pathlib import Path

import aiosqlite
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from kazma_core.agent.graph import TurnDeps, build_graph
from kazma_core.agent.offline_model import OfflineChatModel
from kazma_core.core import Core
from kazma_core.stores.app_schema import MIGRATIONS
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.legacy import ConversionFailed
from kazma_core.stores.sqlite import SqliteDB
from tests.conftest import make_settings

QUESTIONS = ["remember: the boat is blue", "hello there", "steps 2"]


async def old_layout(data: Path) -> tuple[str, list[str], list[tuple[int, str, str]]]:
    """A folder as the first Kazma left it: kazma.db at schema 1, the conversation in checkpoints.db."""
    data.mkdir(parents=True)
    old = SqliteDB(data / "kazma.db", MIGRATIONS[:1], secure_delete=True)
    chat_id, user_id = uuid.uuid4().hex, uuid.uuid4().hex
    # The tools' facts, as the first Kazma kept them.
    scratch = AppStore(SqliteDB(data.parent / "scratch.db", MIGRATIONS, secure_delete=True))
    await scratch.users.count_users()
    conn = await aiosqlite.connect(data / "checkpoints.db")
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    graph = build_graph(saver)
    rows: list[tuple[int, str, str]] = []
    config = {"configurable": {"thread_id": chat_id}, "recursion_limit": 50}
    for turn, question in enumerate(QUESTIONS, start=1):
        deps = TurnDeps(chat_id, turn, scratch.memories, scratch.cards, OfflineChatModel(), data / "workspace", 20, 100_000, 900)
        start = {"messages": [HumanMessage(question)], "turn_index": turn, "questions": [question], "iteration": -1,
                 "plan": [], "routing": {}, "gates": [], "model": "kazma-offline"}
        state = await graph.ainvoke(start, config, context=deps)
        rows += [(turn, "user", question), (turn, "assistant", state["messages"][-1].text)]
    await conn.close()
    await scratch.close()

    def write(c: sqlite3.Connection) -> None:
        now = time.time()
        c.execute("INSERT INTO users (id, name, role, lang, created_at) VALUES ($1, 'olga', 'owner', '', $2)", (user_id, now))
        c.execute("INSERT INTO chats (id, owner_id, title, created_at, last_turn) VALUES ($1, $2, 'old', $3, $4)",
                  (chat_id, user_id, now, len(QUESTIONS)))
        c.executemany("INSERT INTO transcript (chat_id, turn_index, role, text, created_at) VALUES ($1, $2, $3, $4, $5)",
                      [(chat_id, t, r, x, now) for t, r, x in rows])
        c.execute("INSERT INTO facts (chat_id, turn_index, text, created_at) VALUES ($1, 1, 'the boat is blue', $2)", (chat_id, now))

    await old.tx(write)
    await old.close()
    return chat_id, [m.content for m in state["messages"]], rows


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_a_first_layout_folder_is_converted_once_and_the_chat_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    chat_id, contents, rows = await old_layout(data)
    caplog.set_level(logging.WARNING, logger="kazma_core.stores.legacy")
    core = await Core.open(make_settings(data))
    try:
        lines = [r.getMessage() for r in caplog.records if r.name == "kazma_core.stores.legacy"]
        assert len(lines) == 1 and lines[0].startswith("converted the chat history of 1 chats from checkpoints.db")
        assert not (data / "checkpoints.db").exists()
        (kept,) = (data / "backups").iterdir()
        assert sorted(p.name for p in kept.iterdir()) == ["checkpoints.db", "kazma.db"]
        state = await core.turns.graph.aget_state(core.turns.config(chat_id))
        assert [m.content for m in state.values["messages"]] == contents and state.next == ()
        assert [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)] == rows
        reply = (await core.turns.send(chat_id, "what do you know?")).reply
        assert reply == 'You said: "what do you know?". I know: the boat is blue.'
        state = await core.turns.graph.aget_state(core.turns.config(chat_id))
        assert [m.content for m in state.values["messages"]][: len(contents)] == contents
        transcript = [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)]
        assert transcript == [*rows, (4, "user", "what do you know?"), (4, "assistant", reply)]
    finally:
        await core.close()
    caplog.clear()
    again = await Core.open(make_settings(data))  # the second start finds nothing to convert
    await again.close()
    assert not [r for r in caplog.records if r.name == "kazma_core.stores.legacy"]


async def test_a_conversion_that_fails_leaves_the_old_files_untouched_and_says_why(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await old_layout(data)
    with sqlite3.connect(data / "checkpoints.db") as conn:  # one checkpoint no serialiser can read
        conn.execute("UPDATE checkpoints SET type = 'msgpack', checkpoint = x'c1c1c1' WHERE rowid = (SELECT max(rowid) FROM checkpoints)")
    conn.close()
    before = {name: digest(data / name) for name in ("kazma.db", "checkpoints.db")}
    with pytest.raises(ConversionFailed) as refused:
        await Core.open(make_settings(data))
    assert refused.value.message.startswith(f"Kazma could not convert {data / 'checkpoints.db'} into kazma.db (")
    assert "The old files are untouched." in refused.value.message
    assert {name: digest(data / name) for name in ("kazma.db", "checkpoints.db")} == before
    assert not (data / ".kazma.db.converting").exists()
