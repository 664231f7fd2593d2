"""Capture: the steps of a turn saved into snapshots.db, each with its id, chat, turn, questions,
iteration, time, model and whole state; a long turn's steps thinned; a large state stored cut;
each new step announced on the chat stream once it is stored."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kazma_core.core import Core
from kazma_core.stores.types import Chat
from kazma_core.time_travel import CUT_MARK
from tests.conftest import make_settings, metric
from tests.helpers import announced

# The same behaviour on both store engines.
pytestmark = pytest.mark.engines()


async def test_captured_step_has_every_field(core: Core, chat: Chat) -> None:
    async with core.events.subscribe(chat.id) as events:
        await core.turns.send(chat.id, "calc 6*7")
        seen = await announced(events)
    steps = await core.snapshots.list_steps(chat.id)
    assert [(s.turn_index, s.iteration) for s in steps] == [(1, 0), (1, 1)]
    first = steps[0]
    assert re.fullmatch(r"[0-9a-f]{32}", first.id)
    assert first.chat_id == chat.id
    assert first.questions == ["calc 6*7"]
    assert first.model == "kazma-offline"
    assert first.created_at > 0 and first.message_count == 3 and first.size > 0 and not first.truncated
    step = await core.snapshots.get(chat.id, steps[-1].id)
    assert step is not None
    state = step.state
    assert {"messages", "plan", "routing", "cost", "scratchpad", "turn_index", "questions", "iteration", "model", "gates"} <= set(state)
    assert [m["type"] for m in state["messages"]] == ["human", "ai", "tool", "ai"]
    assert state["messages"][2]["data"]["content"] == "6*7 = 42"
    assert state["messages"][-1]["data"]["content"] == "6*7 = 42"
    assert state["cost"]["model_calls"] == 2
    assert state["routing"]["next"] == "done"
    # Announced only after the write, one snapshot event per stored step, with its id.
    snapshot_ids = [e.data["snapshot_id"] for e in seen if e.type == "snapshot"]
    assert snapshot_ids == [s.id for s in steps]


async def test_long_turn_keeps_first_twenty_then_every_tenth_and_the_last(core: Core, chat: Chat) -> None:
    skipped_before = metric("kazma_time_travel_capture_total", result="skipped")
    result = await core.turns.send(chat.id, "steps 45")
    assert result.reply == "Done: 45 steps."
    iterations = [s.iteration for s in await core.snapshots.list_steps(chat.id)]
    # 45 tool iterations (0..44) then the answer (45): steps 1-20, 30, 40 and the last.
    assert iterations == [*range(20), 29, 39, 45]
    assert metric("kazma_time_travel_capture_total", result="skipped") - skipped_before == 46 - 23


async def test_max_per_turn_keeps_the_first_and_the_newest(tmp_path: Path, user_name: str = "ann") -> None:
    core = await Core.open(make_settings(tmp_path, time_travel={"max_per_turn": 5}))
    try:
        user = await core.store.users.add_user(user_name)
        chat = await core.chats.create(user)
        await core.turns.send(chat.id, "steps 8")
        iterations = [s.iteration for s in await core.snapshots.list_steps(chat.id)]
        assert iterations == [0, 5, 6, 7, 8]
    finally:
        await core.close()


async def test_big_state_is_stored_cut_and_flagged_truncated(core: Core, chat: Chat) -> None:
    truncated_before = metric("kazma_time_travel_capture_total", result="truncated")
    result = await core.turns.send(chat.id, "big 3000")
    assert result.reply == "Received 3000 KB of text."
    steps = await core.snapshots.list_steps(chat.id)
    assert [s.truncated for s in steps] == [True, True]
    assert all(s.size <= core.settings.time_travel.max_snapshot_bytes for s in steps)
    step = await core.snapshots.get(chat.id, steps[0].id)
    assert step is not None
    tool_text = step.state["messages"][2]["data"]["content"]
    assert CUT_MARK.split("{")[0] in tool_text and len(tool_text) < 10_000
    assert metric("kazma_time_travel_capture_total", result="truncated") - truncated_before == 2
    # The next small turn is whole again.
    await core.turns.send(chat.id, "hello")
    assert (await core.snapshots.list_steps(chat.id))[-1].truncated is True  # still holds the big message
