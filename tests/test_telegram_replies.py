"""Telegram: a reply with /fork, /replay or /replay show acts on the replied-to message's step, no id typed.

The fake Bot API carries the replied-to message whole in `reply_to_message`, as Telegram does; the
bot's answers are read off the fake's recorded sendMessage calls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kazma_core.catalogue import sentence
from kazma_ui.thread_rewind import RewindService
from tests.fakes.telegram_server import Sent, private_chat
from tests.test_telegram_bot import ANN, ARABIC, BOB, CANCEL, CY, LINA, TEAM, YES, Bot, bot, link_target, telegram_bot_running  # noqa: F401  (bot: the fixture)

UNKNOWN = "Kazma has no record of that message in this chat"


async def said(bot: Bot, user: dict[str, Any], chat: dict[str, Any], text: str) -> tuple[dict[str, Any], Sent]:
    """A person's message and the bot's answer to it."""
    before = len(bot.fake.to(chat["id"]))
    message = bot.fake.message(user, chat, text)
    [answer] = await bot.fake.replies(chat["id"], before)
    return message, answer


async def reply(bot: Bot, user: dict[str, Any], chat: dict[str, Any], text: str, to: Sent | dict[str, Any]) -> Sent:
    before = len(bot.fake.to(chat["id"]))
    bot.fake.message(user, chat, text, reply_to=to)
    [answer] = await bot.fake.replies(chat["id"], before)
    return answer


async def test_replay_in_reply_to_an_answer_asks_then_restores_to_the_end_of_its_turn(bot: Bot) -> None:
    ann = private_chat(ANN)
    _, first = await said(bot, ANN, ann, "hello")
    _, second = await said(bot, ANN, ann, "remember: tea is good")
    said_then = second.text
    end_of_first = (await bot.step_ids(ann, 1))[-1]
    asked = await reply(bot, ANN, ann, "/replay", first)
    assert asked.text.startswith("Restore this chat to turn 1, step ") and f"({end_of_first[:8]})?" in asked.text
    assert [label for label, _ in asked.buttons()] == [YES, CANCEL]
    chat = await bot.chat(ann)
    assert len(await bot.core.store.transcript.transcript(chat.id)) == 4  # asked, not done
    [done] = await bot.press(ANN, asked, YES)
    assert done.text.startswith("Restored this chat to turn 1, step ")
    assert [r.text for r in await bot.core.store.transcript.transcript(chat.id)] == ["hello", 'You said: "hello". I know no facts yet.']
    # The answer it took back says so, and /replay undo puts its text back.
    await bot.fake.wait_for(lambda: second.text == REWOUND or None)
    await bot.say(ANN, ann, "/replay undo")
    await bot.fake.wait_for(lambda: second.text == said_then or None)
    assert [e.message["message_id"] for e in bot.fake.edits] == [second.message["message_id"]] * 2


async def test_fork_in_reply_to_a_persons_message_forks_from_just_before_it(bot: Bot) -> None:
    ann = private_chat(ANN)
    await said(bot, ANN, ann, "hello")
    second, _ = await said(bot, ANN, ann, "calc 2+3")
    end_of_first = (await bot.step_ids(ann, 1))[-1]
    asked = await reply(bot, ANN, ann, "/fork here", second)
    assert f"({end_of_first[:8]})" in asked.text and [label for label, _ in asked.buttons()] == [YES, CANCEL]
    [forked] = await bot.press(ANN, asked, YES)
    fork = await bot.core.store.chats.get_chat(link_target(forked.text))
    assert fork is not None and fork.forked_from is not None and fork.forked_from["snapshot_id"] == end_of_first
    assert [r.text for r in await bot.core.store.transcript.transcript(fork.id)][-1] == 'You said: "hello". I know no facts yet.'


async def test_fork_in_reply_to_the_first_message_makes_an_empty_chat_of_its_lineage_as_the_http_route_does(bot: Bot) -> None:
    ann = private_chat(ANN)
    hello, _ = await said(bot, ANN, ann, "hello")
    await said(bot, ANN, ann, "calc 2+3")
    chat = await bot.chat(ann)
    asked = await reply(bot, ANN, ann, "/fork", hello)
    assert asked.text == sentence("commands.confirm_fork_start", "en") and [label for label, _ in asked.buttons()] == [YES, CANCEL]
    assert len(await bot.core.store.chats.list_chats((await bot.kazma_user(ANN)).id)) == 1  # asked, not done
    [forked] = await bot.press(ANN, asked, YES)
    assert forked.text.startswith("Forked from before the first message into a new chat, ")
    fork = await bot.core.store.chats.get_chat(link_target(forked.text))
    assert fork is not None and fork.forked_from == {"thread_id": chat.id, "snapshot_id": None, "turn_index": 0, "iteration": None}
    assert await bot.core.store.transcript.transcript(fork.id) == []
    assert len(await bot.core.store.transcript.transcript(chat.id)) == 4  # the source is untouched


async def test_an_arabic_speakers_fork_from_the_first_message_is_asked_and_told_in_arabic(bot: Bot) -> None:
    lina = private_chat(LINA)
    hello, _ = await said(bot, LINA, lina, "hello")
    asked = await reply(bot, LINA, lina, "/fork here", hello)
    assert asked.text == sentence("commands.confirm_fork_start", "ar") and ARABIC.search(asked.text)
    [forked] = await bot.press(LINA, asked, asked.buttons()[0][0])
    assert forked.text.startswith("فُرّعت " + sentence("commands.start_label", "ar") + " إلى دردشة جديدة")


async def test_replay_or_show_in_reply_to_the_first_message_says_why_not_and_changes_nothing(bot: Bot) -> None:
    ann = private_chat(ANN)
    hello, _ = await said(bot, ANN, ann, "hello")
    await said(bot, ANN, ann, "calc 2+3")
    # As POST /api/replay/restore refuses it: nothing before the first message to go back to, so nothing to confirm.
    refused = await reply(bot, ANN, ann, "/replay", hello)
    assert refused.text == sentence("errors.nothing_before_first", "en") and refused.buttons() == []
    shown = await reply(bot, ANN, ann, "/replay show", hello)
    assert shown.text == sentence("errors.message_first", "en")
    assert len(await bot.core.store.transcript.transcript((await bot.chat(ann)).id)) == 4


async def test_an_answer_given_after_an_approval_is_marked_by_a_restore_and_put_back_by_an_undo(bot: Bot) -> None:
    ann = private_chat(ANN)
    await said(bot, ANN, ann, "hello")
    _, card = await said(bot, ANN, ann, "write a.txt: hi")
    [answer] = await bot.press(ANN, card, "Approve")
    assert answer.text == "Wrote 2 bytes to a.txt."
    chat, user = await bot.chat(ann), await bot.kazma_user(ANN)
    rewind = RewindService(bot.core)
    await rewind.restore(user, "web", chat.id, (await bot.step_ids(ann, 1))[-1])
    await bot.fake.wait_for(lambda: answer.text == REWOUND or None)
    await rewind.undo(user, "web", chat.id)
    await bot.fake.wait_for(lambda: answer.text == "Wrote 2 bytes to a.txt." or None)


async def test_replay_show_in_reply_shows_that_messages_step_and_changes_nothing(bot: Bot) -> None:
    ann = private_chat(ANN)
    _, first = await said(bot, ANN, ann, "hello")
    await said(bot, ANN, ann, "calc 2+3")
    shown = await reply(bot, ANN, ann, "/replay show", first)
    assert shown.text.startswith("turn 1, step ") and "hello" in shown.text and "calc 2+3" not in shown.text
    assert len(await bot.core.store.transcript.transcript((await bot.chat(ann)).id)) == 4


async def test_a_reply_to_a_message_kazma_never_linked_says_so_and_a_forgotten_chat_forgets_its_links(bot: Bot) -> None:
    ann = private_chat(ANN)
    command = bot.fake.message(ANN, ann, "/help")  # a command: no transcript row of its own
    await bot.fake.replies(ann["id"], 0)
    _, first = await said(bot, ANN, ann, "hello")
    unknown = await reply(bot, ANN, ann, "/fork", command)
    assert unknown.text.startswith(UNKNOWN)
    chat = await bot.chat(ann)
    assert await bot.core.chats.links.find(f"telegram:{ann['id']}", str(first.message["message_id"])) is not None
    await bot.core.chats.forget(await bot.kazma_user(ANN), chat.id)
    assert await bot.core.chats.links.find(f"telegram:{ann['id']}", str(first.message["message_id"])) is None
    assert (await reply(bot, ANN, ann, "/replay", first)).text.startswith(UNKNOWN)


async def test_a_typed_step_still_wins_and_a_reply_without_a_command_is_a_message(bot: Bot) -> None:
    ann = private_chat(ANN)
    _, first = await said(bot, ANN, ann, "hello")
    listed = await reply(bot, ANN, ann, "/replay list", first)
    assert listed.text.startswith("This chat’s saved steps")
    answered = await reply(bot, ANN, ann, "and then?", first)
    assert answered.text == 'You said: "and then?". I know no facts yet.'
    bob = private_chat(BOB)
    assert (await reply(bot, BOB, bob, "/replay", first)).text.startswith(UNKNOWN)  # Ann's message, in Bob's chat


REWOUND = "⏪ Rewound: a restore took this answer back. /replay undo brings it back."


async def test_a_restore_made_on_the_web_marks_the_answers_it_took_back_and_an_undo_puts_their_text_back(bot: Bot) -> None:
    ann = private_chat(ANN)
    _, first = await said(bot, ANN, ann, "hello")
    _, second = await said(bot, ANN, ann, "remember: tea is good")
    said_then = second.text
    chat, user = await bot.chat(ann), await bot.kazma_user(ANN)
    end_of_first = (await bot.step_ids(ann, 1))[-1]
    rewind = RewindService(bot.core)
    await rewind.restore(user, "web", chat.id, end_of_first)
    edited = await bot.fake.wait_for(lambda: bot.fake.edits or None)
    assert [(e.message["message_id"], e.text) for e in edited] == [(second.message["message_id"], REWOUND)]
    assert second.text == REWOUND and first.text == 'You said: "hello". I know no facts yet.'  # the first was kept
    await rewind.undo(user, "web", chat.id)
    await bot.fake.wait_for(lambda: len(bot.fake.edits) == 2 or None)
    assert second.text == bot.fake.edits[-1].text == said_then != REWOUND


async def test_in_a_group_a_reply_restores_for_an_admin_and_is_refused_to_a_member(bot: Bot) -> None:
    bot.fake.members[(TEAM["id"], CY["id"])] = "administrator"
    _, first = await said(bot, ANN, TEAM, "@KazmaBot hello")
    await said(bot, ANN, TEAM, "@KazmaBot calc 1+1")
    chat = await bot.chat(TEAM)
    refused = await reply(bot, BOB, TEAM, "/replay", first)
    assert refused.text.startswith("Only this chat's owner or the group's admins can restore or clear it.")
    asked = await reply(bot, CY, TEAM, "/replay@KazmaBot", first)
    [done] = await bot.press(CY, asked, YES)
    assert done.text.startswith("Restored this chat to turn 1, step ")
    assert len(await bot.core.store.transcript.transcript(chat.id)) == 2


async def test_deleting_the_chat_deletes_which_messages_were_its_own(bot: Bot) -> None:
    ann = private_chat(ANN)
    asked, first = await said(bot, ANN, ann, "hello")
    place = f"telegram:{ann['id']}"
    links = bot.core.chats.links
    assert await links.find(place, str(asked["message_id"])) is not None
    await bot.core.chats.delete(await bot.kazma_user(ANN), (await bot.chat(ann)).id)
    assert await links.find(place, str(asked["message_id"])) is None
    assert await links.find(place, str(first.message["message_id"])) is None


async def test_an_arabic_speakers_rewound_answer_says_so_in_arabic(bot: Bot) -> None:
    lina = private_chat(LINA)
    await said(bot, LINA, lina, "hello")
    _, second = await said(bot, LINA, lina, "calc 2+3")
    chat, user = await bot.chat(lina), await bot.kazma_user(LINA)
    await RewindService(bot.core).restore(user, "web", chat.id, (await bot.step_ids(lina, 1))[-1])
    [edit] = await bot.fake.wait_for(lambda: bot.fake.edits or None)
    assert edit.message["message_id"] == second.message["message_id"]
    assert edit.text == sentence("chat_apps.rewound_message", "ar") and ARABIC.search(edit.text)


async def test_a_reply_to_a_message_whose_step_is_no_longer_kept_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KAZMA_TIME_TRAVEL__MAX_SNAPSHOTS", "3")
    async with telegram_bot_running(monkeypatch, tmp_path) as running:
        ann = private_chat(ANN)
        _, first = await said(running, ANN, ann, "hello")
        for text in ("one", "two", "three"):
            await said(running, ANN, ann, text)
        assert await running.step_ids(ann, 1) == []  # the budget kept only the newest steps
        gone = await reply(running, ANN, ann, "/replay", first)
        assert gone.text == sentence("errors.message_step_gone_here", "en", turn=1)


async def test_help_tells_how_to_act_on_a_message(bot: Bot) -> None:
    [helped] = await bot.say(ANN, private_chat(ANN), "/help")
    assert helped.text.endswith(
        "Reply to a message with /replay (go back to it), /fork (branch from it) or /replay show: no step id needed."
    )
