"""The rewind service: one behaviour for restore, fork, compare, clear, on every surface."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Awaitable
from pathlib import Path

import pytest

from kazma_core.core import Core
from kazma_core.errors import (
    AmbiguousStep,
    ApprovalPending,
    InvalidStep,
    NotFound,
    SnapshotTruncated,
    StoreUnavailable,
    TurnRunning,
)
from kazma_core.messages import encode_message
from kazma_core.stores.snapshots import NewStep
from kazma_core.stores.types import Chat, User
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings, metric

# The same behaviour on both store engines.
pytestmark = pytest.mark.engines()


@pytest.fixture
def rewind(core: Core) -> RewindService:
    return RewindService(core)


async def rows(core: Core, chat_id: str) -> list[tuple[int, str, str]]:
    return [(r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)]


async def step_of(core: Core, chat_id: str, turn: int, iteration: int | None = None) -> str:
    steps = [s for s in await core.snapshots.list_steps(chat_id) if s.turn_index == turn]
    chosen = steps[-1] if iteration is None else next(s for s in steps if s.iteration == iteration)
    return chosen.id


async def chat_with_history(core: Core, chat: Chat) -> None:
    for text in ("hello", "remember: tea is good", "remember: coffee is better", "forget: tea is good"):
        await core.turns.send(chat.id, text)


async def test_restore_forgets_later_facts_rows_and_steps(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await chat_with_history(core, chat)
    target = await step_of(core, chat.id, 2)
    result = await rewind.restore(user, "test", chat.id, target[:8])
    assert result.removed_steps == 4 and result.turn_index == 2
    assert await rows(core, chat.id) == [
        (1, "user", "hello"), (1, "assistant", 'You said: "hello". I know no facts yet.'),
        (2, "user", "remember: tea is good"), (2, "assistant", "Remembered: tea is good"),
    ]
    # coffee (learned later) is gone; tea (forgotten later) is back.
    assert [f.text for f in await core.store.memories.facts(chat.id)] == ["tea is good"]
    assert [s.id for s in await core.snapshots.list_steps(chat.id)][-1] == target
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    assert state.next == () and not state.interrupts


async def test_the_next_message_continues_from_the_restored_step(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await chat_with_history(core, chat)
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 2))
    result = await core.turns.send(chat.id, "what now?")
    assert result.turn_index == 3
    assert result.reply == 'You said: "what now?". I know: tea is good.'
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    assert [m.type for m in state.values["messages"]] == ["human", "ai", "human", "ai", "tool", "ai", "human", "ai"]


async def test_restore_to_a_step_inside_a_turn_drops_that_turns_answer(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await core.turns.send(chat.id, "steps 3")
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 1, iteration=1))
    assert await rows(core, chat.id) == [(1, "user", "steps 3")]
    assert [s.iteration for s in await core.snapshots.list_steps(chat.id)] == [0, 1]
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    assert state.values["scratchpad"] == {"notes": ["step 1 of 3", "step 2 of 3"]}


async def test_fork_leaves_the_source_identical_and_belongs_to_the_forker(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    await chat_with_history(core, chat)
    before = (await rows(core, chat.id), await core.store.memories.facts(chat.id), await core.snapshots.list_steps(chat.id),
              (await core.conversation.aget_tuple(core.turns.config(chat.id))).checkpoint["id"])
    target = await step_of(core, chat.id, 3)
    fork = await rewind.fork(user, "test", chat.id, target[:10])
    after = (await rows(core, chat.id), await core.store.memories.facts(chat.id), await core.snapshots.list_steps(chat.id),
             (await core.conversation.aget_tuple(core.turns.config(chat.id))).checkpoint["id"])
    assert after == before
    forked = await core.chats.owned(user, fork.chat_id)
    assert forked.forked_from == {"thread_id": chat.id, "snapshot_id": target, "turn_index": 3, "iteration": 1}
    assert [t for t, _, _ in await rows(core, fork.chat_id)] == [1, 1, 2, 2, 3, 3]
    assert sorted(f.text for f in await core.store.memories.facts(fork.chat_id)) == ["coffee is better", "tea is good"]
    reply = await core.turns.send(fork.chat_id, "facts?")
    assert reply.turn_index == 4 and "coffee is better" in reply.reply and "tea is good" in reply.reply
    # The fork can itself be restored and forked.
    first = (await core.snapshots.list_steps(fork.chat_id))[0]
    assert first.id == fork.step_id
    await rewind.restore(user, "test", fork.chat_id, first.id)
    again = await rewind.fork(user, "test", fork.chat_id, first.id)
    assert (await core.chats.owned(user, again.chat_id)).forked_from["thread_id"] == fork.chat_id


async def test_compare_reports_messages_plan_cost_and_a_short_text(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await core.turns.send(chat.id, "hello")
    await core.turns.send(chat.id, "calc 1+1")
    a, b = await step_of(core, chat.id, 1), await step_of(core, chat.id, 2)
    diff = await rewind.compare(user, "test", chat.id, a, b)
    assert [m.role for m in diff.messages.added] == ["user", "assistant", "tool", "assistant"]
    assert diff.messages.removed == [] and diff.messages.changed == []
    assert diff.cost["model_calls"] == 2
    assert (diff.a.turn_index, diff.b.turn_index, diff.b.iteration) == (1, 2, 1)
    assert diff.text.startswith("turn 1, step 0 → turn 2, step 1\nMessages: 4 added, 0 removed, 0 changed.")
    assert len(diff.text) <= 1500


async def test_preview_lists_the_side_effects_a_restore_will_not_undo(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await core.turns.send(chat.id, "hello")
    waiting = await core.turns.send(chat.id, "write plan.txt: step one")
    await core.turns.decide(chat.id, waiting.gates[0]["card_id"], "approve", user.id)
    preview = await rewind.preview_restore(user, "test", chat.id, await step_of(core, chat.id, 1))
    assert [e.model_dump() for e in preview.side_effects] == [
        {"kind": "file_written", "tool": "write_file", "args": {"path": "plan.txt", "text": "step one"}}
    ]
    assert preview.later_turns == 1
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 1))
    assert (core.settings.files_of(user.id) / "plan.txt").read_text() == "step one"  # the world is not rewound


async def audit_outcomes(core: Core, chat_id: str) -> list[tuple[str, str]]:
    return [(r.action, r.outcome) for r in await core.audit.rows(chat_id)]


async def test_restore_is_refused_while_a_turn_runs_and_audited(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await core.turns.send(chat.id, "hello")
    target = await step_of(core, chat.id, 1)
    before = metric("kazma_time_travel_rewind_total", action="restore", outcome="turn_running")
    slow = asyncio.create_task(core.turns.send(chat.id, "sleep 0.5"))
    while await core.store.leases.lease(chat.id) is None:
        await asyncio.sleep(0.01)
    with pytest.raises(TurnRunning):
        await rewind.restore(user, "web", chat.id, target)
    await slow
    assert await audit_outcomes(core, chat.id) == [("restore", "turn_running")]
    assert metric("kazma_time_travel_rewind_total", action="restore", outcome="turn_running") - before == 1
    (row,) = await core.audit.rows(chat.id)
    assert (row.user_id, row.surface, row.step_id) == (user.id, "web", target)


async def test_restore_is_refused_while_an_approval_waits_naming_the_card(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    await core.turns.send(chat.id, "hello")
    waiting = await core.turns.send(chat.id, "write x.txt: y")
    with pytest.raises(ApprovalPending) as refused:
        await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 1))
    assert [g["card_id"] for g in refused.value.details["gates"]] == [waiting.gates[0]["card_id"]]
    assert await audit_outcomes(core, chat.id) == [("restore", "approval_pending")]


async def test_a_truncated_step_can_be_read_but_not_restored_or_forked(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await core.turns.send(chat.id, "big 3000")
    target = await step_of(core, chat.id, 1)
    assert (await rewind.get_step(user, "test", chat.id, target)).step.truncated is True
    with pytest.raises(SnapshotTruncated):
        await rewind.restore(user, "test", chat.id, target)
    with pytest.raises(SnapshotTruncated):
        await rewind.fork(user, "test", chat.id, target)
    assert await audit_outcomes(core, chat.id) == [("restore", "snapshot_truncated"), ("fork", "snapshot_truncated")]


async def put_step(core: Core, chat_id: str, step_id: str, turn: int, extra: dict | None = None) -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    msgs = [HumanMessage("hi", id=f"h{turn}", additional_kwargs=extra or {}), AIMessage("hello", id=f"a{turn}")]
    await core.snapshots.put(
        NewStep(step_id, chat_id, turn, 0, time.time(), "m", ["hi"], {"turn_index": turn, "iteration": 0},
                [m.id for m in msgs], lambda i: encode_message(msgs[i])),
        core.recorder.budgets,
    )


async def test_step_addresses_are_unique_hex_prefixes_within_the_chat(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await put_step(core, chat.id, "abcdef01" + "0" * 24, 1)
    await put_step(core, chat.id, "abcdef01" + "f" * 24, 2)
    with pytest.raises(AmbiguousStep) as ambiguous:
        await rewind.get_step(user, "test", chat.id, "ABCDEF01")
    assert ambiguous.value.details["candidates"] == [
        "turn 1, step 0 (abcdef01" + "0" * 24 + ")", "turn 2, step 0 (abcdef01" + "f" * 24 + ")",
    ]
    assert (await rewind.get_step(user, "test", chat.id, "ABCDEF010")).step.turn_index == 1
    for bad in ("abc", "%%%%%%%%", "________", "abcdef0%", "' OR 1=1 --", ""):
        with pytest.raises(InvalidStep):
            await rewind.get_step(user, "test", chat.id, bad)
    for pattern in ("%%%%%%%%", "________", "abcdef0_"):
        assert await core.snapshots.find(chat.id, pattern) == []
    other = await core.chats.create(user)
    with pytest.raises(NotFound):
        await rewind.get_step(user, "test", other.id, "abcdef010")  # looked up within the chat only


async def test_platform_ids_are_dropped_from_a_restored_state(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await core.turns.send(chat.id, "hello")
    await put_step(core, chat.id, uuid.uuid4().hex, 1, extra={"chat_id": 42, "user_id": 7, "message_id": 9, "kept": 1})
    await rewind.restore(user, "test", chat.id, (await core.snapshots.list_steps(chat.id))[-1].id)
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    assert state.values["messages"][0].additional_kwargs == {"kept": 1}


async def test_another_users_chat_is_not_found_for_every_operation_and_unchanged(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    await chat_with_history(core, chat)
    target = await step_of(core, chat.id, 2)
    stranger = await core.store.users.add_user("eve")
    before = (await rows(core, chat.id), await core.snapshots.list_steps(chat.id))
    attempts = [
        rewind.list_steps(stranger, "test", chat.id),
        rewind.get_step(stranger, "test", chat.id, target),
        rewind.preview_restore(stranger, "test", chat.id, target),
        rewind.restore(stranger, "test", chat.id, target),
        rewind.fork(stranger, "test", chat.id, target),
        rewind.compare(stranger, "test", chat.id, target, target),
        rewind.clear(stranger, "test", chat.id),
    ]
    for attempt in attempts:
        with pytest.raises(NotFound):
            await attempt
    assert await rewind.list_chats(stranger, "test") == []
    assert (await rows(core, chat.id), await core.snapshots.list_steps(chat.id)) == before
    assert [c.id for c in await core.chats.list(stranger)] == []
    # The refused preview is a refused restore too: both are in the trail.
    assert await audit_outcomes(core, chat.id) == [
        ("restore", "not_found"), ("restore", "not_found"), ("fork", "not_found"), ("clear", "not_found"),
    ]


async def test_an_unreadable_store_is_store_unavailable_never_no_steps(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "snapshots.db").write_bytes(b"garbage" * 1000)
    core = await Core.open(make_settings(data))
    try:
        rewind = RewindService(core)
        user = await core.store.users.add_user("ann")
        chat = await core.chats.create(user)
        with pytest.raises(StoreUnavailable):
            await rewind.list_steps(user, "test", chat.id)
        with pytest.raises(StoreUnavailable):
            await rewind.list_chats(user, "test")
    finally:
        await core.close()


async def test_clear_and_the_cascades_of_deleting_and_forgetting(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await chat_with_history(core, chat)
    coffee = next(f for f in await core.store.memories.facts(chat.id) if f.text == "coffee is better")
    await core.chats.forget_fact(user, chat.id, coffee.id)
    assert {s.turn_index for s in await core.snapshots.list_steps(chat.id)} == {1, 2}
    assert (await rewind.clear(user, "test", chat.id)).deleted == 3
    assert await core.snapshots.list_steps(chat.id) == []
    await core.turns.send(chat.id, "hello")
    await core.chats.forget(user, chat.id)
    assert await core.snapshots.list_steps(chat.id) == [] and await core.store.memories.facts(chat.id) == []
    other = await core.chats.create(user)
    await core.turns.send(other.id, "hello")
    await core.chats.delete(user, other.id)
    assert await core.snapshots.list_steps(other.id) == []
    assert ("clear", "ok") in await audit_outcomes(core, chat.id)


async def test_restore_and_fork_are_audited_with_the_checkpoint_before_and_the_new_chat(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    await chat_with_history(core, chat)
    checkpoint = (await core.conversation.aget_tuple(core.turns.config(chat.id))).checkpoint["id"]
    target = await step_of(core, chat.id, 2)
    fork = await rewind.fork(user, "telegram", chat.id, target)
    await rewind.restore(user, "tui", chat.id, target)
    fork_row, restore_row = await core.audit.rows(chat.id)
    assert (fork_row.action, fork_row.surface, fork_row.new_chat_id) == ("fork", "telegram", fork.chat_id)
    assert (restore_row.action, restore_row.surface, restore_row.checkpoint_before) == ("restore", "tui", checkpoint)


async def test_restore_and_new_messages_racing_never_interleave(core: Core, chat: Chat, user: User, rewind: RewindService) -> None:
    await core.turns.send(chat.id, "hello")
    target = await step_of(core, chat.id, 1)
    first_turn = await rows(core, chat.id)
    outcomes: dict[str, int] = {}
    jitter = random.Random(7)

    async def later(coro: Awaitable[object]) -> object:
        await asyncio.sleep(jitter.random() * 0.006)
        return await coro

    for n in range(200):
        results = await asyncio.gather(
            later(rewind.restore(user, "test", chat.id, target)),
            later(core.turns.send(chat.id, f"message {n}")),
            return_exceptions=True,
        )
        restored, sent = (not isinstance(r, BaseException) for r in results)
        for r in results:
            if isinstance(r, BaseException) and not isinstance(r, TurnRunning):
                raise r
        key = f"restore={'ok' if restored else 'refused'} message={'ok' if sent else 'refused'}"
        outcomes[key] = outcomes.get(key, 0) + 1
        transcript = await rows(core, chat.id)
        state = await core.turns.graph.aget_state(core.turns.config(chat.id))
        humans = [m.content for m in state.values["messages"] if m.type == "human"]
        # The transcript and the agent's state always tell the same story, turn by turn.
        assert [text for _, role, text in transcript if role == "user"] == humans
        assert transcript[:2] == first_turn
        assert [role for _, role, _ in transcript] == ["user", "assistant"] * (len(transcript) // 2)
        assert len(transcript) in (2, 4)
        await rewind.restore(user, "test", chat.id, target)
    assert sum(outcomes.values()) == 200
    assert len(outcomes) >= 2, outcomes  # both orders really happened


async def test_group_members_read_and_fork_while_only_admins_restore_or_clear(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    from kazma_core.errors import Forbidden
    from kazma_ui.thread_rewind import GroupGrant

    await chat_with_history(core, chat)
    target = await step_of(core, chat.id, 2)
    member, admin = await core.store.users.add_user("bob"), await core.store.users.add_user("carol")
    as_member, as_admin = GroupGrant(chat.id, "member"), GroupGrant(chat.id, "admin")
    assert (await rewind.list_steps(member, "telegram", chat.id, as_member)).turns
    fork = await rewind.fork(member, "telegram", chat.id, target, as_member)
    assert (await core.chats.owned(member, fork.chat_id)).owner_id == member.id
    with pytest.raises(Forbidden):
        await rewind.restore(member, "telegram", chat.id, target, as_member)
    with pytest.raises(Forbidden):
        await rewind.clear(member, "telegram", chat.id, as_member)
    with pytest.raises(NotFound):  # a grant for another chat opens nothing
        await rewind.restore(admin, "telegram", chat.id, target, GroupGrant("another-chat", "admin"))
    assert (await rewind.restore(admin, "telegram", chat.id, target, as_admin)).turn_index == 2
    assert await audit_outcomes(core, chat.id) == [
        ("fork", "ok"), ("restore", "forbidden"), ("clear", "forbidden"), ("restore", "not_found"), ("restore", "ok"),
    ]


async def test_a_deleted_chat_leaves_no_text_in_any_database_file(core: Core, chat: Chat, user: User) -> None:
    secret = "zebra-quartz-7781"
    await core.turns.send(chat.id, f"remember: my code is {secret}")
    await core.turns.send(chat.id, "hello")
    await core.chats.delete(user, chat.id)
    for path in (core.settings.kazma_db, core.settings.snapshots_db):
        for name in (path, path.with_name(path.name + "-wal")):
            if name.exists():
                assert secret.encode() not in name.read_bytes(), name


async def test_a_step_holding_an_ending_the_transcript_never_showed_restores_and_forks_with_it_shown(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    """Regression (the chaos test, seed 865910): a turn's closing step is saved just before its
    checkpoint, and a database outage or a lost lease can keep that checkpoint from committing; the
    step then holds an ending (a stop's note, an answer) that no transcript row shows. A restore to
    it put the ending in the agent's state, not in the transcript: the two disagreed from then on."""
    await core.turns.send(chat.id, "hello")
    await core.turns.send(chat.id, "calc 2+2")
    target = await step_of(core, chat.id, 2)
    # What the lost checkpoint leaves: the answer's row was never written.
    await core.store.db.tx(lambda c: c.execute(
        "DELETE FROM transcript WHERE chat_id = $1 AND turn_index = 2 AND role = 'assistant'", (chat.id,)))
    assert [role for _, role, _ in await rows(core, chat.id)] == ["user", "assistant", "user"]

    async def agree(chat_id: str) -> list[tuple[int, str, str]]:
        state = await core.turns.graph.aget_state(core.turns.config(chat_id))
        shown = [m.content for m in state.values["messages"] if m.type == "human" or (m.type == "ai" and not m.tool_calls)]
        transcript = await rows(core, chat_id)
        assert [text for _, _, text in transcript] == shown
        return transcript

    await rewind.restore(user, "test", chat.id, target)
    restored = await agree(chat.id)
    assert [(turn, role) for turn, role, _ in restored] == [(1, "user"), (1, "assistant"), (2, "user"), (2, "assistant")]
    assert "4" in restored[-1][2]
    forked = await rewind.fork(user, "test", chat.id, target)
    assert await agree(forked.chat_id) == restored
    assert (await core.turns.send(chat.id, "and now?")).status == "done"
    await agree(chat.id)
