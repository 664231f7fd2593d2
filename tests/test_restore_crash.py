"""A restore killed (SIGKILL) at any point leaves the chat, after the next start, fully restored or as before."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kazma_core.core import Core
from kazma_core.stores.app_rewind import RewindRows
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings

# The child runs a real restore and kills itself right after one stage of it.
CHILD = """
import asyncio, os, signal, sys
import kazma_ui.thread_rewind as rewind_module
from kazma_core.core import Core
from kazma_core.settings import load_settings
from kazma_core.stores.app_rewind import RewindRows
from kazma_core.stores.snapshots_sqlite import SqliteSnapshotStore
from kazma_ui.thread_rewind import RewindService

stage, data_dir, user_name, chat_id, step_id = sys.argv[1:]

def die_after(owner, name):
    original = getattr(owner, name)
    async def then_die(*args, **kwargs):
        await original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
    setattr(owner, name, then_die)

STAGES = {
    "checks": (RewindService, "_refuse_pending"),
    "intent": (RewindRows, "start_intent"),
    "checkpoint": (rewind_module, "write_finished_turn"),
    "checkpointed": (RewindRows, "set_intent_state"),
    "rows": (RewindRows, "take_back"),
    "steps": (SqliteSnapshotStore, "delete_after"),
}
die_after(*STAGES[stage])

async def main():
    core = await Core.open(load_settings(data_dir=data_dir))
    user = await core.store.user_by_name(user_name)
    await RewindService(core).restore(user, "test", chat_id, step_id)

asyncio.run(main())
"""


async def prepared(data: Path) -> tuple[str, str, list[tuple[int, str, str]], list[str]]:
    core = await Core.open(make_settings(data))
    try:
        user = await core.store.add_user("ann")
        chat = await core.chats.create(user)
        for text in ("hello", "remember: tea", "remember: coffee", "steps 2"):
            await core.turns.send(chat.id, text)
        steps = await core.snapshots.list_steps(chat.id)
        target = next(s for s in steps if s.turn_index == 2 and s.iteration == 1)
        transcript = [(r.turn_index, r.role, r.text) for r in await core.store.transcript(chat.id)]
        return chat.id, target.id, transcript, [s.id for s in steps]
    finally:
        await core.close()


@pytest.mark.parametrize("stage", ["checks", "intent", "checkpoint", "checkpointed", "rows", "steps"])
async def test_a_killed_restore_is_finished_or_undone_at_the_next_start(tmp_path: Path, stage: str) -> None:
    data = tmp_path / "data"
    chat_id, step_id, transcript, step_ids = await prepared(data)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, stage, str(data), "ann", chat_id, step_id],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert child.returncode == -9, child.stderr

    core = await Core.open(make_settings(data))
    try:
        finished = await RewindService(core).recover()
        rows = [(r.turn_index, r.role, r.text) for r in await core.store.transcript(chat_id)]
        facts = [f.text for f in await core.store.facts(chat_id)]
        steps = [s.id for s in await core.snapshots.list_steps(chat_id)]
        state = await core.turns.graph.aget_state(core.turns.config(chat_id))
        humans = [m.content for m in state.values["messages"] if m.type == "human"]
        if stage == "checks":
            assert finished == 0
            assert (rows, facts, steps) == (transcript, ["tea", "coffee"], step_ids)
            assert humans == ["hello", "remember: tea", "remember: coffee", "steps 2"]
        else:
            assert finished == 1
            assert rows == transcript[:4]
            assert facts == ["tea"]
            assert steps == step_ids[: step_ids.index(step_id) + 1]
            assert humans == ["hello", "remember: tea"]
        assert state.next == ()
        assert await RewindRows(core.store).open_intents() == []
        # The chat is usable at once: the dead process's lease does not block it.
        assert (await core.turns.send(chat_id, "still here?")).status == "done"
    finally:
        await core.close()
