"""A fork shows its source's transcript by reference, not a copy (transcript_sql.py): whatever
happens to the source afterwards (a restore, its undo, new turns, its deletion), the fork shows
what it showed, its rows found where they were, by their ids, by search and by the chat apps'
links. On both engines."""

from __future__ import annotations

import random

import pytest

from kazma_core.core import Core
from kazma_core.stores.types import Chat, User
from kazma_ui.message_point import message_point
from kazma_ui.thread_rewind import RewindService
from tests.test_rewind import chat_with_history, step_of

pytestmark = pytest.mark.engines()

Rows = list[tuple[int, int, str, str]]


@pytest.fixture
def rewind(core: Core) -> RewindService:
    return RewindService(core)


async def shown(core: Core, chat_id: str) -> Rows:
    return [(r.id, r.turn_index, r.role, r.text) for r in await core.store.transcript.transcript(chat_id)]


def words(rows: Rows) -> list[tuple[int, str, str]]:
    return [(turn, role, text) for _, turn, role, text in rows]


async def points(core: Core, chat_id: str, rows: Rows) -> list[int | None]:
    """The turn each row's message point names (what rewinding from that message would use)."""
    return [(await message_point(core, chat_id, row_id)).turn_index for row_id, *_ in rows]


async def test_a_fork_shows_what_it_showed_whatever_its_source_does_after(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    await chat_with_history(core, chat)
    fork = await rewind.fork(user, "test", chat.id, await step_of(core, chat.id, 3))
    await core.turns.send(fork.chat_id, "in the fork")
    seen = await shown(core, fork.chat_id)
    assert [t for _, t, _, _ in seen] == [1, 1, 2, 2, 3, 3, 4, 4]
    # A chat app's message showing a row the fork shares with its source (a reply quoting it).
    shared_row = seen[3][0]
    rewinds_to = await points(core, fork.chat_id, seen)
    await core.chats.links.record("telegram:1", "77", fork.chat_id, shared_row, by_bot=True, text="quoted")

    # The source restored to its first turn: the rows the fork shares leave the source, not the fork.
    await rewind.restore(user, "test", chat.id, await step_of(core, chat.id, 1))
    assert words(await shown(core, chat.id)) == words(seen[:2])
    after = await shown(core, fork.chat_id)
    assert words(after) == words(seen)
    assert await core.chats.links.out_of_step(fork.chat_id) == ([], [])  # the quoted message is still shown
    link = await core.chats.links.find("telegram:1", "77")
    assert after[3][0] != shared_row  # the fork has its own copy of that row now
    assert link is not None and link.row_id == after[3][0]
    # Every row is found by its id, in its place: paging back and rewinding from a message.
    assert await points(core, fork.chat_id, after) == rewinds_to == [None, 1, 1, 2, 2, 3, 3, 4]
    page = await core.store.transcript.transcript(fork.chat_id, before=after[6][0], limit=3)
    assert [r.id for r in page] == [r[0] for r in after[3:6]]

    # Undone: the source has its rows back; a fork made meanwhile still shows only what it forked.
    meanwhile = await rewind.fork(user, "test", chat.id, await step_of(core, chat.id, 1))
    await rewind.undo(user, "test", chat.id)
    assert [t for _, t, _, _ in await shown(core, chat.id)] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert words(await shown(core, meanwhile.chat_id)) == words(seen[:2])
    assert words(await shown(core, fork.chat_id)) == words(seen)

    # The source deleted: each fork keeps its whole transcript, found by search, and goes on.
    later = await rewind.fork(user, "test", chat.id, await step_of(core, chat.id, 4))
    kept = {c: await shown(core, c) for c in (fork.chat_id, meanwhile.chat_id, later.chat_id)}
    await core.chats.delete(user, chat.id)
    for chat_id, rows in kept.items():
        assert words(await shown(core, chat_id)) == words(rows)
    found = {c.id for c, _ in await core.chats.search(user, "coffee is better")}
    assert found == {fork.chat_id, later.chat_id}
    reply = await core.turns.send(later.chat_id, "facts?")
    assert reply.turn_index == 5 and "coffee is better" in reply.reply
    assert [t for _, t, _, _ in await shown(core, later.chat_id)] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


async def test_a_fork_of_a_fork_shows_its_sources_rows_then_the_forks_own(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    await chat_with_history(core, chat)
    fork = await rewind.fork(user, "test", chat.id, await step_of(core, chat.id, 2))
    await core.turns.send(fork.chat_id, "only in the fork")
    await core.turns.send(chat.id, "only in the source")
    grandchild = await rewind.fork(user, "test", fork.chat_id, await step_of(core, fork.chat_id, 3))
    earlier = await rewind.fork(user, "test", fork.chat_id, fork.step_id)
    source_rows, fork_rows = await shown(core, chat.id), await shown(core, fork.chat_id)
    assert words(await shown(core, grandchild.chat_id)) == words(fork_rows) == words(source_rows[:4]) + words(fork_rows[4:])
    assert fork_rows[4][3] == "only in the fork"
    assert words(await shown(core, earlier.chat_id)) == words(source_rows[:4])
    # Its own turn after what it shows, and a restore of it to where it began, undone.
    await core.turns.send(grandchild.chat_id, "the grandchild's own")
    before = await shown(core, grandchild.chat_id)
    await rewind.restore(user, "test", grandchild.chat_id, grandchild.step_id)
    assert words(await shown(core, grandchild.chat_id)) == words(before[:6])
    await rewind.undo(user, "test", grandchild.chat_id)
    assert await shown(core, grandchild.chat_id) == before
    # Neither the source nor the fork changed.
    assert await shown(core, chat.id) == source_rows and await shown(core, fork.chat_id) == fork_rows


async def test_random_forks_restores_undos_and_deletions_never_change_another_chats_transcript(
    core: Core, chat: Chat, user: User, rewind: RewindService
) -> None:
    """Chats forked from chats forked from chats, each going on, restored, undone or deleted at
    random: what one chat does never changes what another shows, and each chat's transcript tells
    the story its state holds."""
    dice = random.Random(20261204)
    chats = [chat.id]
    made = 0
    await chat_with_history(core, chat)
    for n in range(40):
        before = {c: words(await shown(core, c)) for c in chats}
        acted = dice.choice(chats)
        steps = await core.snapshots.list_steps(acted)
        move = dice.choice(["send", "send", "fork", "fork", "restore", "undo", "delete"])
        if move == "fork" and steps:
            forked = await rewind.fork(user, "test", acted, dice.choice(steps).id)
            chats.append(forked.chat_id)
            made += 1
        elif move == "restore" and steps:
            await rewind.restore(user, "test", acted, dice.choice(steps).id)
        elif move == "undo" and await rewind.undo_offer(acted) is not None:
            await rewind.undo(user, "test", acted)
        elif move == "delete" and len(chats) > 2:
            await core.chats.delete(user, acted)
            chats.remove(acted)
        else:
            await core.turns.send(acted, f"message {n}")
        for other, rows in before.items():
            if other != acted and other in chats:
                assert words(await shown(core, other)) == rows, (n, move, acted, other)
        for c in chats:
            state = await core.turns.graph.aget_state(core.turns.config(c))
            humans = [m.content for m in state.values["messages"] if m.type == "human"]
            assert [text for _, role, text in words(await shown(core, c)) if role == "user"] == humans, (n, move, c)
    assert made >= 5, (made, chats)  # forks of forks really happened
