"""The SQLite step store on its own: what it keeps, what it reads back, how it stays small."""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path

import orjson
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from kazma_core.messages import encode_message
from kazma_core.stores.snapshots import Budgets, NewStep
from kazma_core.stores.snapshots_sql import MIGRATIONS, SqlSnapshotStore
from kazma_core.stores.sqlite import SqliteDB
from kazma_core.time_travel import MessageIds

ROOMY = Budgets(10_000, 1_000_000, 10_000, 1 << 40, 1 << 44, 1 << 30)


def new_step(chat: str, messages: list[BaseMessage], turn: int = 1) -> NewStep:
    return NewStep(
        uuid.uuid4().hex, chat, turn, 0, time.time(), "m", ["q"], {"turn_index": turn},
        MessageIds(messages), lambda i: encode_message(messages[i]),
    )


async def test_interleaved_chats_keep_each_steps_references_one_run(tmp_path: Path) -> None:
    """Regression: bodies were numbered across chats, so two chats capturing in turns
    fragmented every step's references and reads slowed with the conversation."""
    store = SqlSnapshotStore(SqliteDB(tmp_path / "snapshots.db", MIGRATIONS, secure_delete=True))
    try:
        convs: dict[str, list[BaseMessage]] = {"a": [], "b": []}
        for n in range(60):
            for chat, msgs in convs.items():
                msgs.append(HumanMessage(f"{chat} question {n}", id=f"{chat}h{n}"))
                msgs.append(AIMessage(f"{chat} answer {n}", id=f"{chat}a{n}"))
                await store.put(new_step(chat, msgs), ROOMY)
        with sqlite3.connect(tmp_path / "snapshots.db") as conn:
            refs = [orjson.loads(r) for (r,) in conn.execute("SELECT refs FROM steps")]
        assert all(len(runs) == 1 for runs in refs)
        newest = (await store.list_steps("a"))[-1]
        step = await store.get("a", newest.id)
        assert step is not None and len(step.state["messages"]) == 120
    finally:
        await store.close()


async def test_a_message_changed_under_the_same_id_is_stored_as_changed(tmp_path: Path) -> None:
    """Regression: only the tail's id was compared, so a replaced message read back stale."""
    store = SqlSnapshotStore(SqliteDB(tmp_path / "snapshots.db", MIGRATIONS, secure_delete=True))
    try:
        await store.put(new_step("c", [HumanMessage("hi", id="h1"), AIMessage("draft answer", id="a1")]), ROOMY)
        second = [HumanMessage("hi", id="h1"), AIMessage("final answer", id="a1"), HumanMessage("next", id="h2")]
        result = await store.put(new_step("c", second), ROOMY)
        step = await store.get("c", result.info.id)
        assert step is not None
        assert [m["data"]["content"] for m in step.state["messages"]] == ["hi", "final answer", "next"]
    finally:
        await store.close()


async def test_messages_without_ids_are_never_taken_as_already_stored(tmp_path: Path) -> None:
    store = SqlSnapshotStore(SqliteDB(tmp_path / "snapshots.db", MIGRATIONS, secure_delete=True))
    try:
        await store.put(new_step("c", [HumanMessage("question A"), AIMessage("answer A")]), ROOMY)
        result = await store.put(new_step("c", [HumanMessage("question B"), AIMessage("answer B"), HumanMessage("more")]), ROOMY)
        step = await store.get("c", result.info.id)
        assert step is not None
        assert [m["data"]["content"] for m in step.state["messages"]] == ["question B", "answer B", "more"]
    finally:
        await store.close()


async def test_a_copied_step_reads_back_the_same_and_its_chat_grows_from_it(tmp_path: Path) -> None:
    """A fork's first step refers to its source's bodies (none copied); the fork's later captures
    build on it, and each chat counts the bytes it added."""
    store = SqlSnapshotStore(SqliteDB(tmp_path / "snapshots.db", MIGRATIONS, secure_delete=True))
    try:
        msgs: list[BaseMessage] = []
        for n in range(30):
            msgs += [HumanMessage(f"q{n}", id=f"h{n}"), AIMessage(f"a{n}", id=f"a{n}")]
            source = await store.put(new_step("src", msgs), ROOMY)
        with sqlite3.connect(tmp_path / "snapshots.db") as conn:
            (before,) = conn.execute("SELECT count(*) FROM bodies").fetchone()
        copied = await store.copy("src", source.info.id, "dst", uuid.uuid4().hex, ROOMY)
        assert copied is not None
        with sqlite3.connect(tmp_path / "snapshots.db") as conn:
            assert conn.execute("SELECT count(*) FROM bodies").fetchone() == (before,)
        original, copy = await store.get("src", source.info.id), await store.get("dst", copied.id)
        assert original is not None and copy is not None and copy.state == original.state
        grown = await store.put(new_step("dst", [*msgs, HumanMessage("more", id="m1")]), ROOMY)
        step = await store.get("dst", grown.info.id)
        assert step is not None and [m["data"]["content"] for m in step.state["messages"]][-2:] == ["a29", "more"]
        with sqlite3.connect(tmp_path / "snapshots.db") as conn:
            (dst_bodies,) = conn.execute("SELECT sum(length(body)) FROM bodies WHERE added_by = 'dst'").fetchone()
            (dst_rows,) = conn.execute("SELECT sum(own_bytes) FROM steps WHERE chat_id = 'dst'").fetchone()
        assert await store.usage("dst") == (2, dst_bodies + dst_rows)
    finally:
        await store.close()


async def test_any_page_of_a_step_reads_as_that_slice_of_it_and_what_it_added_is_what_it_does_not_share(tmp_path: Path) -> None:
    """A step whose references are several runs (its last message changed under its id: a new body
    number): every window of it reads the same messages as the whole, and `added_from` is where
    it stops sharing bodies with the chat's step before it."""
    store = SqlSnapshotStore(SqliteDB(tmp_path / "snapshots.db", MIGRATIONS, secure_delete=True))
    try:
        first = [HumanMessage(f"q{n}", id=f"h{n}") for n in range(6)]
        await store.put(new_step("c", first), ROOMY)
        second = [*first[:5], AIMessage("changed", id="h5"), HumanMessage("new", id="h6")]
        result = await store.put(new_step("c", second), ROOMY)
        whole = await store.get("c", result.info.id)
        assert whole is not None and (whole.first, whole.added_from) == (0, 5)
        texts = [m["data"]["content"] for m in whole.state["messages"]]
        assert texts == ["q0", "q1", "q2", "q3", "q4", "changed", "new"]
        with sqlite3.connect(tmp_path / "snapshots.db") as conn:
            (refs,) = conn.execute("SELECT refs FROM steps WHERE id = ?", (result.info.id,)).fetchone()
        assert len(orjson.loads(refs)) == 2
        for start in range(8):
            for stop in range(start, 8):
                page = await store.get("c", result.info.id, (start, stop))
                assert page is not None
                assert [m["data"]["content"] for m in page.state["messages"]] == texts[start:stop]
                assert page.first == start and page.added_from == 5
        oldest = (await store.list_steps("c"))[0]
        assert (await store.get("c", oldest.id)).added_from == 0  # type: ignore[union-attr]  # nothing before it
    finally:
        await store.close()
