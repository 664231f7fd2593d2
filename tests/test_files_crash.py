"""Crashes with files: a restore that takes the files too, or its undo, SIGKILLed at any of its stages
(tests/crash.py), leaves after the next start the chat and its files both as they were or both
restored, never the conversation of one and the files of the other."""

from __future__ import annotations

from pathlib import Path

import pytest

from kazma_core.core import Core
from kazma_core.rewind.rows import RewindRows
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings
from tests.crash import run_killed

BEFORE = {"notes.txt": "v2", "draft.txt": "x"}
RESTORED = {"notes.txt": "v1"}


async def prepared(data: Path) -> tuple[str, str, Path, list[tuple[int, str, str]]]:
    """Ann's chat of three approved writes; the end of its first turn; her folder; its transcript."""
    core = await Core.open(make_settings(data))
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        for text in ("write notes.txt: v1", "write notes.txt: v2", "write draft.txt: x"):
            waiting = await core.turns.send(chat.id, text)
            await core.turns.decide(chat.id, waiting.gates[0]["card_id"], "approve", user.id)
        target = [s for s in await core.snapshots.list_steps(chat.id) if s.turn_index == 1][-1]
        rows = [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat.id)]
        return chat.id, target.id, core.settings.files_of(user.id), rows
    finally:
        await core.close()


def files_in(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.is_file()}


async def after_start(data: Path, chat_id: str) -> tuple[Core, list[tuple[int, str, str]]]:
    core = await Core.open(make_settings(data))
    await core.recover()
    await RewindService(core).recover()
    assert await RewindRows(core.store.db).open_intents() == []
    return core, [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)]


@pytest.mark.parametrize(
    "stage", ["checks", "restore-files-kept", "restore-checkpoint", "first-file", "restore-files", "restore-steps"]
)
async def test_a_killed_restore_with_files_leaves_both_as_they_were_or_both_restored(tmp_path: Path, stage: str) -> None:
    data = tmp_path / "data"
    chat_id, step_id, folder, rows = await prepared(data)
    assert files_in(folder) == BEFORE
    await run_killed(stage, data, chat_id, "restore-both", step_id)

    core, now = await after_start(data, chat_id)
    try:
        if stage in ("checks", "restore-files-kept"):
            assert (now, files_in(folder)) == (rows, BEFORE)
            # What the cut restore kept for an undo that never came is gone.
            left = await core.snapshots.db.run(lambda c: c.execute("SELECT count(*) FROM file_undo").fetchone())
            assert left[0] == 0
        else:
            assert {r[0] for r in now} == {1}
            assert files_in(folder) == RESTORED
            # Finished after a crash, it is undone whole: the conversation and the files.
            user = await core.store.users.user_by_name("ann")
            assert user is not None
            await RewindService(core).undo(user, "test", chat_id)
            assert [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)] == rows
            assert files_in(folder) == BEFORE
        assert not list(folder.glob(".kazma-restore-*"))  # no half-written file left behind
    finally:
        await core.close()


@pytest.mark.parametrize("stage", ["checks", "undo-checkpoint", "undo-steps", "first-file", "undo-files", "undo-done"])
async def test_a_killed_undo_of_a_restore_with_files_leaves_both_restored_or_both_put_back(
    tmp_path: Path, stage: str
) -> None:
    data = tmp_path / "data"
    chat_id, step_id, folder, rows = await prepared(data)
    core = await Core.open(make_settings(data))
    try:
        user = await core.store.users.user_by_name("ann")
        assert user is not None
        await RewindService(core).restore(user, "test", chat_id, step_id, what="both")
        assert files_in(folder) == RESTORED
    finally:
        await core.close()
    await run_killed(stage, data, chat_id, "undo")

    core, now = await after_start(data, chat_id)
    try:
        if stage == "checks":
            assert {r[0] for r in now} == {1}
            assert files_in(folder) == RESTORED
        else:
            assert (now, files_in(folder)) == (rows, BEFORE)
    finally:
        await core.close()
