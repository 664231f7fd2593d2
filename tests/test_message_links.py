"""The links between chat-app messages and transcript rows, on both engines: which bot messages a
restore took back and an undo put back, and that they go with their chat (forgotten, deleted)."""

from __future__ import annotations

import pytest

from kazma_core.core import Core
from kazma_core.stores.types import Chat, User
from kazma_ui.thread_rewind import RewindService

pytestmark = pytest.mark.engines()
PLACE = "telegram:42"


async def turn(core: Core, chat: Chat, text: str, person: str, bot: str) -> str:
    """A turn, its rows linked as the gateway links them: the person's message and the bot's answer."""
    result = await core.turns.send(chat.id, text)
    rows = [r for r in await core.store.transcript.transcript(chat.id) if r.turn_index == result.turn_index]
    links = core.chats.links
    await links.record(PLACE, person, chat.id, rows[0].id, by_bot=False)
    await links.record(PLACE, bot, chat.id, rows[-1].id, by_bot=True, text=result.reply)
    return result.reply


async def test_a_restore_takes_back_the_bots_later_messages_and_an_undo_brings_them_back(core: Core, user: User, chat: Chat) -> None:
    await turn(core, chat, "hello", "1", "2")
    answer = await turn(core, chat, "calc 2+3", "3", "4")
    links = core.chats.links
    assert await links.out_of_step(chat.id) == ([], [])
    end_of_first = [s.id for s in await core.snapshots.list_steps(chat.id) if s.turn_index == 1][-1]
    rewind = RewindService(core)
    await rewind.restore(user, "web", chat.id, end_of_first)
    taken, back = await links.out_of_step(chat.id)
    assert [link.message for link in taken] == ["4"] and back == []  # the person's "3" is not the bot's to edit
    await links.set_rewound(taken[0], True)
    assert await links.out_of_step(chat.id) == ([], [])  # marked once
    await rewind.undo(user, "web", chat.id)
    taken, back = await links.out_of_step(chat.id)
    assert taken == [] and [(link.message, link.rewound) for link in back] == [("4", True)]
    assert back[0].text == answer != ""  # the answer's own text, to put back


async def test_links_go_when_the_chat_is_forgotten_and_when_it_is_deleted(core: Core, user: User, chat: Chat) -> None:
    await turn(core, chat, "hello", "1", "2")
    await core.chats.forget(user, chat.id)
    assert await core.chats.links.find(PLACE, "2") is None
    await turn(core, chat, "again", "5", "6")
    assert await core.chats.links.find(PLACE, "6") is not None
    await core.chats.delete(user, chat.id)
    assert await core.chats.links.find(PLACE, "6") is None and await core.chats.links.find(PLACE, "5") is None
