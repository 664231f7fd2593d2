"""Budgets: each limit (steps per chat, steps in all, bytes per chat, bytes in all) drops exactly the
oldest steps past it, of that chat or of any chat, checked on every save."""

from __future__ import annotations

import base64
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from kazma_core.core import Core
from kazma_core.stores.types import Chat
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings, metric
from tests.helpers import announced


@pytest.fixture
def database(engine: str, request: pytest.FixtureRequest) -> dict[str, str]:
    """The `database` settings of this test's engine (tests marked `engines` run on both)."""
    return {"url": request.getfixturevalue("pg_kazma_url")} if engine == "postgresql" else {}


async def open_core(tmp_path: Path, database: dict[str, str] | None = None, **time_travel: Any) -> Core:
    return await Core.open(make_settings(tmp_path / "data", time_travel=time_travel, database=database or {}))


async def turns_of(core: Core, chat: Chat) -> list[int]:
    return [s.turn_index for s in await core.snapshots.list_steps(chat.id)]


async def test_max_snapshots_keeps_the_newest_steps_of_each_chat(tmp_path: Path) -> None:
    core = await open_core(tmp_path, max_snapshots=3)
    try:
        user = await core.store.users.add_user("ann")
        a, b = await core.chats.create(user), await core.chats.create(user)
        for n in range(5):
            await core.turns.send(a.id, f"hello {n}")
        await core.turns.send(b.id, "hello")
        assert await turns_of(core, a) == [3, 4, 5]
        assert await turns_of(core, b) == [1]
    finally:
        await core.close()


async def test_max_global_snapshots_drops_the_oldest_in_the_whole_store(tmp_path: Path) -> None:
    core = await open_core(tmp_path, max_global_snapshots=4)
    try:
        user = await core.store.users.add_user("ann")
        a, b = await core.chats.create(user), await core.chats.create(user)
        for chat in (a, b, a, b, a, b):
            await core.turns.send(chat.id, "hello")
        assert await turns_of(core, a) == [2, 3]
        assert await turns_of(core, b) == [2, 3]
        assert (await core.snapshots.usage())[0] == 4
    finally:
        await core.close()


@pytest.mark.engines()
async def test_max_thread_bytes_drops_the_chats_oldest_steps_first(tmp_path: Path, database: dict[str, str]) -> None:
    """What a chat's steps keep beyond its conversation now (here the question each step keeps with
    it, 8 KB that does not compress) is held to max_thread_bytes, the oldest steps dropped first."""
    limit = 1 << 16
    core = await open_core(tmp_path, database, max_thread_bytes=limit, max_snapshot_bytes=16_384)
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        for _ in range(12):
            await core.turns.send(chat.id, base64.b64encode(os.urandom(6000)).decode())
        steps, used = await core.snapshots.list_steps(chat.id), (await core.snapshots.usage(chat.id))[1]
        assert used - await conversation_now(core, chat) <= limit < used
        kept = [s.turn_index for s in steps]
        assert kept == sorted(kept) and kept[-1] == 12 and kept[0] > 1
        assert (await core.snapshots.usage(chat.id))[0] == len(kept)
    finally:
        await core.close()


@pytest.mark.engines()
async def test_a_chat_whose_conversation_outgrew_max_thread_bytes_can_still_be_rewound_to_its_start(
    tmp_path: Path, database: dict[str, str]
) -> None:
    """The messages of a chat's newest step are its conversation now, kept as long as the chat has a
    step: dropping older steps that share them would free nothing. A chat of long tool results far
    over max_thread_bytes keeps its steps, and its first turn can still be restored (it used to keep
    only its newest step: no way back at all)."""
    limit = 1 << 16
    core = await open_core(tmp_path, database, max_thread_bytes=limit)
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        for _ in range(8):
            await core.turns.send(chat.id, "big 60")
        _steps, used = await core.snapshots.usage(chat.id)
        assert used > 6 * limit
        kept = await turns_of(core, chat)
        assert sorted(set(kept)) == list(range(1, 9))
        first = (await core.snapshots.list_steps(chat.id))[0]
        await RewindService(core).restore(user, "test", chat.id, first.id)
        assert [r.text for r in await core.store.transcript.transcript(chat.id)] == ["big 60"]
    finally:
        await core.close()


@pytest.mark.engines()
async def test_max_total_bytes_drops_the_oldest_steps_of_any_chat(tmp_path: Path, database: dict[str, str]) -> None:
    """Over every chat, what the steps keep beyond the chats' conversations now (here the 30 KB
    question each step keeps) is held to max_total_bytes, the oldest steps of any chat dropped
    first; each chat keeps its newest steps, its conversation with them."""
    limit = 1 << 20
    core = await open_core(tmp_path, database, max_total_bytes=limit)
    try:
        a, b = await two_chats(core, 20, lambda: base64.b64encode(os.urandom(22_000)).decode())
        _steps, used = await core.snapshots.usage()
        now = await conversation_now(core, a) + await conversation_now(core, b)
        assert used - now <= limit < used
        kept_a, kept_b = await turns_of(core, a), await turns_of(core, b)
        assert kept_a[-1] == kept_b[-1] == 20
        assert 1 < kept_b[0] <= kept_a[0]  # the oldest first: the older chat's turn before the other's
    finally:
        await core.close()


@pytest.mark.engines()
async def test_chats_whose_conversations_together_outgrew_max_total_bytes_keep_their_steps(
    tmp_path: Path, database: dict[str, str]
) -> None:
    """A team's conversations (here two chats of long tool results) over max_total_bytes keep their
    steps: the messages of each chat's newest step stay as long as the chat has a step, so dropping
    steps that share them frees nothing (every save used to drop every other chat's steps, the
    older chat's time travel gone)."""
    limit = 1 << 20
    core = await open_core(tmp_path, database, max_total_bytes=limit)
    try:
        a, b = await two_chats(core, 10, lambda: "big 64")
        _steps, used = await core.snapshots.usage()
        assert used > 1.2 * limit
        assert sorted(set(await turns_of(core, a))) == sorted(set(await turns_of(core, b))) == list(range(1, 11))
    finally:
        await core.close()


async def two_chats(core: Core, rounds: int, text: Callable[[], str]) -> tuple[Chat, Chat]:
    """Two chats of one person taking turns, each sent `rounds` messages."""
    user = await core.store.users.add_user("ann")
    a, b = await core.chats.create(user), await core.chats.create(user)
    for _ in range(rounds):
        for chat in (a, b):
            await core.turns.send(chat.id, text())
    return a, b


async def conversation_now(core: Core, chat: Chat) -> int:
    """The bytes of the chat's messages as its newest step holds them."""
    newest = await core.snapshots.get(chat.id, (await core.snapshots.list_steps(chat.id))[-1].id)
    assert newest is not None
    return sum(len(orjson.dumps(m)) for m in newest.state["messages"])


async def test_counters_match_what_is_really_stored(tmp_path: Path) -> None:
    """The budgets trust counters; after evictions they must equal a full count of the file."""
    core = await open_core(tmp_path, max_snapshots=4, max_per_turn=3)
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        for text in ("steps 6", "big 50", "hello", "steps 3"):
            await core.turns.send(chat.id, text)
        steps, used = await core.snapshots.usage()
        with sqlite3.connect(core.settings.snapshots_db) as conn:
            (rows,) = conn.execute("SELECT count(*) FROM steps").fetchone()
            (own,) = conn.execute("SELECT sum(own_bytes) FROM steps").fetchone()
            (bodies,) = conn.execute("SELECT sum(length(body)) FROM bodies").fetchone()
            (orphans,) = conn.execute(
                "SELECT count(*) FROM bodies b WHERE NOT EXISTS (SELECT 1 FROM steps s, json_each(s.refs) r"
                " WHERE s.chat_id = b.chat_id AND b.n BETWEEN json_extract(r.value, '$[0]')"
                " AND json_extract(r.value, '$[0]') + json_extract(r.value, '$[1]') - 1)"
            ).fetchone()
        assert (steps, used) == (rows, own + bodies)
        assert rows == 4 and orphans == 0
    finally:
        await core.close()


async def test_unreadable_store_counts_failed_announces_nothing_and_the_turn_answers(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "snapshots.db").write_bytes(b"this is not a database" * 100)
    core = await open_core(tmp_path)
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        failed_before = metric("kazma_time_travel_capture_total", result="failed")
        async with core.events.subscribe(chat.id) as events:
            result = await core.turns.send(chat.id, "calc 1+1")
            kinds = [e.type for e in await announced(events)]
        assert result.reply == "1+1 = 2"
        assert "snapshot" not in kinds and "message" in kinds
        assert metric("kazma_time_travel_capture_total", result="failed") - failed_before == 2
        assert [r.role for r in await core.store.transcript.transcript(chat.id)] == ["user", "assistant"]
    finally:
        await core.close()


async def test_file_grows_linearly_with_the_conversation(tmp_path: Path) -> None:
    core = await open_core(tmp_path, max_snapshots=1000)
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        sizes = []
        logical = 0
        for block in range(3):
            for n in range(30):
                await core.turns.send(chat.id, f"message {block}-{n} " + "lorem ipsum " * 80)
            sizes.append((await core.snapshots.usage(chat.id))[1])
        growth = [sizes[0], sizes[1] - sizes[0], sizes[2] - sizes[1]]
        # Each block of 30 turns adds about the same bytes: no square growth.
        assert max(growth) < 1.2 * min(growth)
        # A step's size is what it added, so the sizes add up to what the chat's steps take...
        steps = await core.snapshots.list_steps(chat.id)
        assert sum(s.size for s in steps) == sizes[-1]
        # ...and storing whole states would have cost the sum of theirs.
        whole = [await core.snapshots.get(chat.id, s.id) for s in steps]
        logical = sum(len(orjson.dumps(step.state)) for step in whole if step is not None)
        assert sizes[-1] * 20 < logical
    finally:
        await core.close()
