"""Undo a restore: everything the restore took comes back, until the chat moves on or forgets."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from kazma_core.core import Core
from kazma_core.errors import InvalidInput, NotFound, TurnRunning
from kazma_core.maintenance import Maintenance
from kazma_core.stores.types import Chat, User
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings, metric

# The same behaviour on both store engines.
pytestmark = pytest.mark.engines()


@pytest.fixture
def rewind(core: Core) -> RewindService:
    return RewindService(core)


async def everything(core: Core, chat_id: str) -> dict[str, Any]:
    """What a person can see of a chat: transcript, facts, steps, the agent's messages, its turn count."""
    state = await core.turns.graph.aget_state(core.turns.config(chat_id))
    chat = await core.store.chats.get_chat(chat_id)
    return {
        "rows": [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)],
        "facts": [f.text for f in await core.store.memories.facts(chat_id)],
        "steps": [s.id for s in await core.snapshots.list_steps(chat_id)],
        "messages": [(m.type, m.content) for m in state.values["messages"]],
        "next": state.next,
        "last_turn": chat.last_turn if chat else None,
        "usage": await core.snapshots.usage(chat_id),
    }


async def history(core: Core, chat: Chat) -> None:
    for text in ("hello", "remember: tea is good", "remember: coffee is better", "forget: tea is good"):
        await core.turns.send(chat.id, text)


async def step_of(core: Core, chat_id: str, turn: int) -> str:
    return [s for s in await core.snapshots.list_steps(chat_id) if s.turn_index == turn][-1].id


async def test_undo_puts_back_exactly_what_the_restore_took(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await history(core, chat)
    before = await everything(core, chat.id)
    restored = await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 2))
    assert restored.undo is not None
    after_restore = await everything(core, chat.id)
    assert after_restore["facts"] == ["tea is good"] and after_restore["last_turn"] == 2
    undone_before = metric("kazma_time_travel_rewind_total", action="undo", outcome="ok")
    done = await rewind.undo(user, "test", chat.id)
    assert done.back.model_dump() == {"messages": 4, "memories": 1, "forgotten_again": 1, "cards": 0, "steps": 4}
    assert await everything(core, chat.id) == before
    assert metric("kazma_time_travel_rewind_total", action="undo", outcome="ok") - undone_before == 1
    assert [(r.action, r.outcome) for r in await core.audit.rows(chat.id)] == [("restore", "ok"), ("undo", "ok")]
    # The chat goes on from where it was before the restore.
    result = await core.turns.send(chat.id, "what do you know?")
    assert result.turn_index == 5 and "coffee is better" in result.reply and "tea is good" not in result.reply


async def test_undo_brings_back_the_approval_cards_the_restore_took(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await core.turns.send(chat.id, "hello")
    waiting = await core.turns.send(chat.id, "write x.txt: y")
    await core.turns.decide(chat.id, waiting.gates[0]["card_id"], "deny", user.id)
    cards = [c.to_dict() for c in await core.store.cards.cards(chat.id)]
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 1))
    assert await core.store.cards.cards(chat.id) == []
    assert (await rewind.undo(user, "test", chat.id)).back.cards == 1
    assert [c.to_dict() for c in await core.store.cards.cards(chat.id)] == cards


async def test_nothing_to_undo_says_why(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await history(core, chat)
    with pytest.raises(NotFound, match="no restore to undo"):
        await rewind.undo(user, "test", chat.id)
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 2))
    await rewind.undo(user, "test", chat.id)
    with pytest.raises(NotFound, match="undone already"):
        await rewind.undo(user, "test", chat.id)
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 2))
    await core.turns.send(chat.id, "hello again")
    with pytest.raises(NotFound, match="moved on") as moved:
        await rewind.undo(user, "test", chat.id)
    assert moved.value.details["reason"] == "undo_turn"
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 2))
    await core.chats.reset(user, chat.id)
    with pytest.raises(NotFound, match="moved on"):
        await rewind.undo(user, "test", chat.id)
    outcomes = [(r.action, r.outcome) for r in await core.audit.rows(chat.id) if r.action == "undo"]
    assert outcomes == [("undo", "not_found"), ("undo", "ok"), ("undo", "not_found"), ("undo", "not_found"), ("undo", "not_found")]


async def test_an_undo_runs_out_after_its_time(tmp_path: Path) -> None:
    core = await Core.open(make_settings(tmp_path / "data", time_travel={"undo_seconds": 1}))
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        await history(core, chat)
        rewind = RewindService(core)
        await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 2))
        restored = await everything(core, chat.id)
        await asyncio.sleep(1.2)
        assert await rewind.undo_offer(chat.id) is None
        with pytest.raises(NotFound, match="time to undo ran out"):
            await rewind.undo(user, "test", chat.id)
        now = await everything(core, chat.id)
        assert now["usage"][1] < restored["usage"][1]  # the bodies only the kept-aside steps used are gone
        assert {**now, "usage": None} == {**restored, "usage": None}
    finally:
        await core.close()


async def test_undo_is_refused_while_a_turn_runs(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await history(core, chat)
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 2))
    holder = await core.store.leases.acquire_lease(chat.id, "someone-else", "turn", 30)
    assert holder
    with pytest.raises(TurnRunning):
        await rewind.undo(user, "test", chat.id)
    await core.store.leases.release_lease(chat.id, "someone-else")
    assert (await rewind.undo(user, "test", chat.id)).back.memories == 1
    assert [r.outcome for r in await core.audit.rows(chat.id) if r.action == "undo"] == ["turn_running", "ok"]


async def test_another_users_chat_has_nothing_to_undo_for_them(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await history(core, chat)
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 2))
    bob = await core.store.users.add_user("bob")
    with pytest.raises(NotFound):
        await rewind.undo(bob, "test", chat.id)
    assert (await rewind.undo(user, "test", chat.id)).back.steps == 4


@pytest.mark.engines("sqlite")  # it reads the files' bytes: PostgreSQL's are the server's
@pytest.mark.parametrize("how", ["forget", "memory_off", "delete"])
async def test_forgetting_after_a_restore_leaves_nothing_an_undo_could_bring_back(
    core: Core, chat: Chat, user: User, rewind: RewindService, how: str
) -> None:
    secret = "walrus-opal-5523"
    await core.turns.send(chat.id, "hello")
    await core.turns.send(chat.id, f"remember: my code is {secret}")
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 1))
    await core.store.db.purge_wal()
    assert secret.encode() in core.settings.kazma_db.read_bytes()  # kept aside for the undo
    await getattr(core.chats, how)(user, chat.id)
    for path in (core.settings.kazma_db, core.settings.snapshots_db):
        for name in (path, path.with_name(path.name + "-wal")):
            if name.exists():
                assert secret.encode() not in name.read_bytes(), name
    if how != "delete":
        with pytest.raises(NotFound, match="forgotten"):
            await rewind.undo(user, "test", chat.id)


async def test_compare_across_a_fork_and_its_source(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await history(core, chat)
    fork = await rewind.fork(user, "test", chat.id, await step_of(core, chat.id, 2))
    await core.turns.send(fork.chat_id, "remember: milk is fine")
    diff = await rewind.compare(user, "test", chat.id, await step_of(core, chat.id, 4), await step_of(core, fork.chat_id, 3),
                                b_chat_id=fork.chat_id)
    assert (diff.a.chat_id, diff.b.chat_id) == (chat.id, fork.chat_id)
    assert diff.messages.added or diff.messages.removed
    other = await core.chats.create(user)
    await core.turns.send(other.id, "hello")
    with pytest.raises(InvalidInput, match="not of one lineage"):
        await rewind.compare(user, "test", chat.id, await step_of(core, chat.id, 1), await step_of(core, other.id, 1), b_chat_id=other.id)
    bob = await core.store.users.add_user("bob")
    bobs = await core.chats.create(bob)
    with pytest.raises(NotFound):
        await rewind.compare(user, "test", chat.id, await step_of(core, chat.id, 1), "0" * 32, b_chat_id=bobs.id)
    with pytest.raises(NotFound):
        await rewind.compare(bob, "test", chat.id, await step_of(core, chat.id, 1), await step_of(core, fork.chat_id, 3),
                             b_chat_id=fork.chat_id)


async def test_the_daily_clean_up_drops_what_an_expired_undo_kept(tmp_path: Path) -> None:
    core = await Core.open(make_settings(tmp_path / "data", time_travel={"undo_seconds": 1}))
    try:
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        await history(core, chat)
        rewind = RewindService(core)
        await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 2))
        kept = await core.snapshots.db.run(lambda c: c.execute("SELECT count(*) FROM kept_steps").fetchone()[0])
        assert kept == 4
        await Maintenance.of(core, now=lambda: time.time() + 5).run_pass(by_hand=True)
        assert await core.snapshots.db.run(lambda c: c.execute("SELECT count(*) FROM kept_steps").fetchone()[0]) == 0
        with pytest.raises(NotFound, match="time to undo ran out"):
            await rewind.undo(user, "test", chat.id)
    finally:
        await core.close()


async def test_only_the_last_restore_is_undone_back_to_where_it_started(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    await history(core, chat)
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 3))
    after_first = await everything(core, chat.id)
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 1))
    await rewind.undo(user, "test", chat.id)
    now = await everything(core, chat.id)
    # Byte counts differ: the bodies only the first restore's kept-aside steps used are gone.
    assert {**now, "usage": now["usage"][0]} == {**after_first, "usage": after_first["usage"][0]}
    with pytest.raises(NotFound, match="undone already"):
        await rewind.undo(user, "test", chat.id)
    kept = await core.snapshots.db.run(lambda c: c.execute("SELECT count(*) FROM kept_steps").fetchone()[0])
    assert kept == 0  # what the first restore kept went when the second one was made
