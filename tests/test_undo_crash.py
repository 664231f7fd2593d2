"""Crashes during an undo: a SIGKILL at any stage leaves, after the next start, the restore whole or
the undo whole; a kill while a turn drops an undo leaves no kept-aside step behind; a kill before
the write-ahead logs are emptied (after a newer restore ended the undo) leaves them emptied by the next start."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kazma_core.core import Core
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings
from tests.crash import run_killed

# An undo (or the turn or restore that drops it) cut right after each of its stages: the server dies at
# the crash point named (kazma_core/crashpoints.py).
CUT_AT = {"checks": "checks", "checkpoint": "undo-checkpoint", "steps": "undo-steps", "done": "undo-done",
          "turn": "turn-drops-undo",
          "purge": "restore-drops-undo"}


async def seen(core: Core, chat_id: str) -> dict[str, Any]:
    state = await core.turns.graph.aget_state(core.turns.config(chat_id))
    chat = await core.store.chats.get_chat(chat_id)
    return {
        "rows": [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)],
        "facts": [f.text for f in await core.store.memories.facts(chat_id)],
        "steps": [s.id for s in await core.snapshots.list_steps(chat_id)],
        "humans": [m.content for m in state.values["messages"] if m.type == "human"],
        "last_turn": chat.last_turn if chat else None,
    }


async def prepared(data: Path, **settings: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A chat of four turns restored to turn 2: what it was before, and after the restore."""
    core = await Core.open(make_settings(data, **settings))
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        for text in ("hello", "remember: tea", "remember: coffee", "steps 2"):
            await core.turns.send(chat.id, text)
        before = await seen(core, chat.id)
        target = [s for s in await core.snapshots.list_steps(chat.id) if s.turn_index == 2][-1]
        await RewindService(core).restore(user, "test", chat.id, target.id)
        return chat.id, before, await seen(core, chat.id)
    finally:
        await core.close()


def kept_steps(data: Path) -> int:
    with sqlite3.connect(data / "snapshots.db") as conn:
        return int(conn.execute("SELECT count(*) FROM kept_steps").fetchone()[0])


async def run_child(stage: str, data: Path, chat_id: str, what: str) -> None:
    """The child undoes the restore (`undo`) or sends `what`, and dies right after `stage`."""
    if what == "undo":
        await run_killed(CUT_AT[stage], data, chat_id, "undo")
    else:
        await run_killed(CUT_AT[stage], data, chat_id, "send", what)


@pytest.mark.parametrize("stage", ["checks", "checkpoint", "steps", "done"])
async def test_a_killed_undo_leaves_the_restore_or_the_undo_whole(tmp_path: Path, stage: str) -> None:
    data = tmp_path / "data"
    chat_id, before, restored = await prepared(data)
    await run_child(stage, data, chat_id, "undo")

    core = await Core.open(make_settings(data))
    try:
        await core.recover()
        rewind = RewindService(core)
        finished = await rewind.recover()
        user = await core.store.users.user_by_name("ann")
        if stage == "checks":
            assert finished == 0
            assert await seen(core, chat_id) == restored
            await rewind.undo(user, "test", chat_id)  # still offered, and it works
        else:
            assert finished == (0 if stage == "done" else 1)
        assert await seen(core, chat_id) == before
        assert kept_steps(data) == 0
        state = await core.turns.graph.aget_state(core.turns.config(chat_id))
        assert state.next == ()
        assert (await core.turns.send(chat_id, "still here?")).turn_index == 5
    finally:
        await core.close()


async def test_a_turn_killed_while_dropping_the_undo_leaves_no_kept_step(tmp_path: Path) -> None:
    data = tmp_path / "data"
    chat_id, _, restored = await prepared(data)
    assert kept_steps(data) > 0
    await run_child("turn", data, chat_id, "hello again")

    core = await Core.open(make_settings(data))
    try:
        await core.recover()
        await RewindService(core).recover()
        assert kept_steps(data) == 0
        assert await seen(core, chat_id) == restored
        assert (await core.turns.send(chat_id, "and now?")).turn_index == 3
    finally:
        await core.close()


def files_holding(data: Path, text: str) -> list[str]:
    marker = text.encode()
    return [p.name for p in sorted(data.rglob("*")) if p.is_file() and marker in p.read_bytes()]


async def test_a_restore_killed_before_emptying_the_logs_leaves_them_emptied_by_the_next_start(tmp_path: Path) -> None:
    """A newer restore ends the last one's undo; the write-ahead logs are emptied only after its
    answer. Killed once the undo was dropped, what the first restore took back is still in the
    files, and the next start empties them."""
    data = tmp_path / "data"
    chat_id, _, restored = await prepared(data)
    core = await Core.open(make_settings(data))
    try:  # the same step again: a newer restore, which ends the first one's undo
        target = [s for s in await core.snapshots.list_steps(chat_id) if s.turn_index == 2][-1]
    finally:
        await core.close()
    await run_killed(CUT_AT["purge"], data, chat_id, "restore", target.id)
    assert files_holding(data, "coffee"), "killed before the purge: the given-up text is still in a file"

    core = await Core.open(make_settings(data))
    try:
        await core.recover()
        await RewindService(core).recover()
        await core.kept.purged()
        assert files_holding(data, "coffee") == []
        assert kept_steps(data) == 0
        assert await seen(core, chat_id) == restored
    finally:
        await core.close()
