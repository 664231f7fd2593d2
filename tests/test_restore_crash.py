"""Crashes: a restore killed (SIGKILL) at any point leaves the chat, after the next start, fully restored
or as before; a turn killed mid-way is closed at the next start, and the chat goes on."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from kazma_core.core import Core
from kazma_core.crashpoints import POINTS
from kazma_core.errors import TurnRunning
from kazma_core.rewind.rows import RewindRows
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings
from tests.crash import run_killed, start_killable

# A restore cut right after each of its stages: the server dies at the crash point named (kazma_core/crashpoints.py).
CUT_AT = {"checks": "checks", "messages": "restore-messages", "checkpoint": "restore-checkpoint", "steps": "restore-steps"}


async def prepared(data: Path, **settings: Any) -> tuple[str, str, list[tuple[int, str, str]], list[str]]:
    """Ann's chat of four turns, the step of turn 2 to restore, its transcript and its steps."""
    core = await Core.open(make_settings(data, **settings))
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        for text in ("hello", "remember: tea", "remember: coffee", "steps 2"):
            await core.turns.send(chat.id, text)
        steps = await core.snapshots.list_steps(chat.id)
        target = next(s for s in steps if s.turn_index == 2 and s.iteration == 1)
        transcript = [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat.id)]
        return chat.id, target.id, transcript, [s.id for s in steps]
    finally:
        await core.close()


@pytest.mark.parametrize("stage", ["checks", "messages", "checkpoint", "steps"])
async def test_a_killed_restore_is_finished_or_undone_at_the_next_start(tmp_path: Path, stage: str) -> None:
    data = tmp_path / "data"
    chat_id, step_id, transcript, step_ids = await prepared(data)
    await run_killed(CUT_AT[stage], data, chat_id, "restore", step_id)

    core = await Core.open(make_settings(data))
    try:
        await core.recover()
        finished = await RewindService(core).recover()
        rows = [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)]
        facts = [f.text for f in await core.store.memories.facts(chat_id)]
        steps = [s.id for s in await core.snapshots.list_steps(chat_id)]
        state = await core.turns.graph.aget_state(core.turns.config(chat_id))
        humans = [m.content for m in state.values["messages"] if m.type == "human"]
        if stage in ("checks", "messages"):
            assert finished == 0
            assert (rows, facts, steps) == (transcript, ["tea", "coffee"], step_ids)
            assert humans == ["hello", "remember: tea", "remember: coffee", "steps 2"]
        else:
            assert finished == 1
            assert rows == transcript[:4]
            assert facts == ["tea"]
            assert steps == step_ids[: step_ids.index(step_id) + 1]
            assert humans == ["hello", "remember: tea"]
            # A restore finished after a crash can still be undone, whole.
            user = await core.store.users.user_by_name("ann")
            await RewindService(core).undo(user, "test", chat_id)
            assert [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)] == transcript
            assert [s.id for s in await core.snapshots.list_steps(chat_id)] == step_ids
            state = await core.turns.graph.aget_state(core.turns.config(chat_id))
        assert state.next == ()
        assert await RewindRows(core.store.db).open_intents() == []
        # The chat is usable at once: the dead process's lease does not block it.
        assert (await core.turns.send(chat_id, "still here?")).status == "done"
    finally:
        await core.close()


@pytest.mark.parametrize("message", ["sleep 30", "steps 99999"])
async def test_a_turn_killed_mid_way_is_closed_at_the_next_start_and_the_chat_goes_on(tmp_path: Path, message: str) -> None:
    data = tmp_path / "data"
    core = await Core.open(make_settings(data))
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        await core.turns.send(chat.id, "hello")
    finally:
        await core.close()
    child = await start_killable(data, chat.id, "send", message)
    try:
        # Wait until the turn is under way: its question is in the transcript and a step or the lease is there.
        for _ in range(600):
            with sqlite3.connect(data / "kazma.db") as conn:
                (rows,) = conn.execute("SELECT count(*) FROM transcript WHERE chat_id = ?", (chat.id,)).fetchone()
                (leases,) = conn.execute("SELECT count(*) FROM leases WHERE chat_id = ?", (chat.id,)).fetchone()
            if rows == 3 and leases == 1:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
    finally:
        child.kill()
        await asyncio.wait_for(child.wait(), 30)

    core = await Core.open(make_settings(data))
    try:
        assert await core.recover() == [chat.id]
        rows = [(r.turn_index, r.role) for r in await core.store.transcript.transcript(chat.id)]
        assert rows == [(1, "user"), (1, "assistant"), (2, "user"), (2, "error")]
        state = await core.turns.graph.aget_state(core.turns.config(chat.id))
        assert state.next == ()
        result = await core.turns.send(chat.id, "still there?")
        assert (result.turn_index, result.status) == (3, "done")
        history = (await core.turns.graph.aget_state(core.turns.config(chat.id))).values["messages"]
        answered = {m.tool_call_id for m in history if m.type == "tool"}
        assert all(c["id"] in answered for m in history if m.type == "ai" for c in m.tool_calls)
    finally:
        await core.close()


async def test_a_restore_cut_before_its_steps_holds_the_chat_until_it_is_finished(tmp_path: Path) -> None:
    """Regression: a restore cut after its kazma.db part (a kill, or the database away) left the
    chat free with the steps after it still listed. A turn could run before the sweep finished the
    restore, whose finishing then hid that turn's steps; a restore to one of the old later steps
    brought back messages the transcript no longer had."""
    data = tmp_path / "data"
    chat_id, step_id, transcript, step_ids = await prepared(data)
    await run_killed(CUT_AT["steps"], data, chat_id, "restore", step_id)
    core = await Core.open(make_settings(data))
    try:
        assert await core.recover() == [chat_id]  # the dead process's lease is freed...
        with pytest.raises(TurnRunning):  # ...but the chat waits for its restore to be finished
            await core.turns.send(chat_id, "too soon")
        assert await RewindService(core).recover() == 1
        assert (await core.turns.send(chat_id, "now")).status == "done"
        steps = [s.id for s in await core.snapshots.list_steps(chat_id)]
        assert steps[: step_ids.index(step_id) + 1] == step_ids[: step_ids.index(step_id) + 1]
        assert len(steps) > step_ids.index(step_id) + 1  # the new turn's steps are listed
        assert [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)][:4] == transcript[:4]
    finally:
        await core.close()


def test_every_crash_point_is_passed_once_in_the_code_and_cut_at_by_a_crash_test() -> None:
    """A point renamed, moved out of the code or no longer cut at by any test is caught here, not by a
    crash test that waits for a server that never dies."""
    root = Path(__file__).resolve().parents[1]
    code = "".join(p.read_text() for folder in ("kazma_core", "kazma_ui") for p in sorted((root / folder).rglob("*.py")))
    tests = "".join(p.read_text() for p in sorted((root / "tests").glob("test_*.py")))
    for point in POINTS:
        # once as the only argument, or as one of a conditional's two
        assert code.count(f'crashpoints.passed("{point}")') + code.count(f'"{point}" if') + code.count(f'else "{point}")') == 1, point
        assert f'"{point}"' in tests, f"no crash test cuts at {point}"
