"""The agent: offline model commands, memory, the approval gate, the turn lease, chat step history."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import orjson
import pytest

from kazma_core.agent.runtime import PRUNE_EVERY
from kazma_core.core import Core
from kazma_core.errors import ApprovalClosed, ApprovalPending, TurnRunning
from kazma_core.stores.types import Chat, User
from tests.conftest import make_settings


async def test_remembered_fact_is_known_in_later_turns_until_forgotten(core: Core, chat: Chat) -> None:
    assert (await core.turns.send(chat.id, "remember: my cat is Miso")).reply == "Remembered: my cat is Miso"
    assert "my cat is Miso" in (await core.turns.send(chat.id, "who is my cat?")).reply
    assert (await core.turns.send(chat.id, "forget: my cat is Miso")).reply == "Forgot: my cat is Miso"
    assert (await core.turns.send(chat.id, "and now?")).reply.endswith("I know no facts yet.")
    facts_by_turn = [(r.turn_index, r.role) for r in await core.store.transcript.transcript(chat.id)]
    assert facts_by_turn == [(t, role) for t in (1, 2, 3, 4) for role in ("user", "assistant")]


async def test_calculator_is_safe_and_exact(core: Core, chat: Chat) -> None:
    assert (await core.turns.send(chat.id, "calc (2+3)*4 - 2**3")).reply == "(2+3)*4 - 2**3 = 12"
    refused = (await core.turns.send(chat.id, "calc __import__('os').system('true')")).reply
    assert refused.startswith("I cannot calculate")


async def test_write_waits_for_approval_and_writes_only_when_approved(core: Core, chat: Chat, user: User) -> None:
    waiting = await core.turns.send(chat.id, "write notes/todo.txt: buy milk")
    assert waiting.status == "awaiting_approval" and len(waiting.gates) == 1
    card = waiting.gates[0]
    assert card["tool"] == "write_file" and card["args"] == {"path": "notes/todo.txt", "text": "buy milk"}
    target = core.settings.files_of(user.id) / "notes" / "todo.txt"
    assert not target.exists()
    with pytest.raises(ApprovalPending) as pending:
        await core.turns.send(chat.id, "hello")
    assert [g["card_id"] for g in pending.value.details["gates"]] == [card["card_id"]]
    done = await core.turns.decide(chat.id, card["card_id"], "approve", user.id)
    assert done.status == "done" and done.reply == "Wrote 8 bytes to notes/todo.txt."
    assert target.read_text() == "buy milk"
    with pytest.raises(ApprovalClosed):
        await core.turns.decide(chat.id, card["card_id"], "approve", user.id)


async def test_denied_write_is_not_done(core: Core, chat: Chat, user: User) -> None:
    waiting = await core.turns.send(chat.id, "write a.txt: x")
    done = await core.turns.decide(chat.id, waiting.gates[0]["card_id"], "deny", user.id)
    assert done.reply == "Not done: write_file needed approval and it was denied."
    assert not (core.settings.files_of(user.id) / "a.txt").exists()


async def test_write_outside_the_workspace_is_refused_before_any_card(core: Core, chat: Chat, user: User) -> None:
    refused = await core.turns.send(chat.id, "write ../../escape.txt: x")
    assert refused.status == "done" and refused.gates == []
    assert refused.reply == "Bad arguments for write_file: a path cannot go up with ..; give a file name such as notes/todo.txt"
    assert not (core.settings.data_dir.parent / "escape.txt").exists()


async def test_expired_card_closes_its_turn_and_frees_the_chat(tmp_path: Path) -> None:
    core = await Core.open(make_settings(tmp_path / "data", agent={"approval_ttl_seconds": 5}))
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        waiting = await core.turns.send(chat.id, "write a.txt: x")
        card_id = waiting.gates[0]["card_id"]
        # Age the card instead of sleeping: its expiry is a stored time.
        with sqlite3.connect(core.settings.kazma_db) as conn:
            conn.execute("UPDATE approvals SET expires_at = ? WHERE id = ?", (time.time() - 1, card_id))
        result = await core.turns.send(chat.id, "hello")
        assert result.status == "done" and result.reply.startswith('You said: "hello"')
        (card,) = await core.store.cards.cards(chat.id)
        assert card.status == "expired"
        replies = [r.text for r in await core.store.transcript.transcript(chat.id) if r.role == "assistant"]
        assert replies[0] == "Not done: write_file needed approval and it expired."
        assert not (core.settings.files_of(user.id) / "a.txt").exists()
        with pytest.raises(ApprovalClosed):
            await core.turns.decide(chat.id, card_id, "approve", user.id)
    finally:
        await core.close()


async def test_a_second_message_while_a_turn_runs_is_refused_not_interleaved(core: Core, chat: Chat) -> None:
    slow = asyncio.create_task(core.turns.send(chat.id, "sleep 0.5"))
    while await core.store.leases.lease(chat.id) is None:
        await asyncio.sleep(0.01)
    with pytest.raises(TurnRunning):
        await core.turns.send(chat.id, "hello")
    assert (await slow).reply == "Slept 0.5 seconds."
    assert (await core.turns.send(chat.id, "hello")).turn_index == 2
    assert [r.text for r in await core.store.transcript.transcript(chat.id) if r.role == "user"] == ["sleep 0.5", "hello"]


async def test_the_turn_lease_is_seen_by_another_process(core: Core, chat: Chat) -> None:
    slow = asyncio.create_task(core.turns.send(chat.id, "sleep 0.5"))
    while await core.store.leases.lease(chat.id) is None:
        await asyncio.sleep(0.01)
    with sqlite3.connect(core.settings.kazma_db) as conn:
        (purpose,) = conn.execute("SELECT purpose FROM leases WHERE chat_id = ?", (chat.id,)).fetchone()
    assert purpose == "turn"
    await slow
    assert await core.store.leases.lease(chat.id) is None


async def test_a_dead_holders_lease_expires_and_the_sweep_frees_its_chat(core: Core, chat: Chat) -> None:
    # Long enough that a loaded machine still sends the first message inside it.
    assert await core.store.leases.acquire_lease(chat.id, "crashed-process", "turn", ttl=1.0)
    with pytest.raises(TurnRunning):
        await core.turns.send(chat.id, "hello")
    await asyncio.sleep(1.1)
    # Expired, a turn's lease may cover a turn its holder left cut: only the sweep takes it, to close that turn first.
    with pytest.raises(TurnRunning):
        await core.turns.send(chat.id, "hello")
    assert await core.recover() == [chat.id]
    assert (await core.turns.send(chat.id, "hello")).status == "done"


@pytest.mark.engines
async def test_a_lease_is_one_holders_and_its_take_may_run_twice(core: Core, chat: Chat) -> None:
    """Taken, a chat's lease is refused to anyone else until released; its holder's take, run again
    (a connection lost as it committed, then tried again), still holds it rather than refusing it."""
    leases = core.store.leases
    assert await leases.acquire_lease(chat.id, "one", "turn", ttl=30)
    assert await leases.acquire_lease(chat.id, "one", "turn", ttl=30)
    assert not await leases.acquire_lease(chat.id, "another", "turn", ttl=30)
    assert await leases.lease(chat.id) == ("one", "turn")
    await leases.release_lease(chat.id, "one")
    assert await leases.acquire_lease(chat.id, "another", "restore", ttl=30)
    assert await leases.lease(chat.id) == ("another", "restore")


async def test_chat_step_history_is_pruned_to_its_own_setting(tmp_path: Path) -> None:
    core = await Core.open(make_settings(tmp_path / "data", history={"checkpoints_per_chat": 5}))
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        for n in range(PRUNE_EVERY):  # the history is cut back every PRUNE_EVERY turns
            await core.turns.send(chat.id, f"steps 3 {n}" if n % 2 else "steps 3")
        with sqlite3.connect(core.settings.kazma_db) as conn:
            (count,) = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (chat.id,)).fetchone()
        assert count == 5
        # The newest checkpoint still carries the whole conversation.
        state = await core.turns.graph.aget_state(core.turns.config(chat.id))
        assert len([m for m in state.values["messages"] if m.type == "human"]) == PRUNE_EVERY
    finally:
        await core.close()


async def test_no_platform_id_enters_the_saved_state(core: Core, chat: Chat) -> None:
    await core.turns.send(chat.id, "remember: x")
    for info in await core.snapshots.list_steps(chat.id):
        step = await core.snapshots.get(chat.id, info.id)
        assert step is not None
        text = orjson.dumps(step.state).decode()
        for key in ('"chat_id"', '"user_id"', '"message_id"'):
            assert key not in text
