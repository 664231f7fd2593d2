"""Discord: "Fork from here" and "Rewind to here" in a message's Apps menu, no id typed.

They are message commands (application commands of type 3), synced from the command registry;
the fake Discord sends their interaction as Discord documents it, with `data.target_id` and the
message under `data.resolved.messages`.
"""

from __future__ import annotations

from commands import registry
from kazma_core.catalogue import sentence
from kazma_ui.thread_rewind import RewindService
from tests.fakes.discord_server import ALICE, BOB, GENERAL, Sent
from tests.test_discord_bot import Bot, bot, fake, kazma, restore_discord_globals  # noqa: F401  (fixtures)

FORK, REWIND = "Fork from here", "Rewind to here"
UNKNOWN = "Kazma has no record of that message in this chat"


async def said(bot: Bot, author: int, text: str) -> tuple[int, Sent]:
    """A person's message (its id) and the bot's answer to it."""
    before = len(bot.fake.in_channel(GENERAL))
    mid = await bot.fake.message(author, text)
    [answer] = await bot.fake.until(lambda: new if (new := bot.fake.in_channel(GENERAL)[before:]) else None)
    return mid, answer


async def on_message(bot: Bot, user: int, name: str, message_id: int) -> Sent:
    iid = await bot.fake.message_command(user, name, message_id)
    return (await bot.fake.until(lambda: bot.fake.answers(iid)))[0]


async def test_the_message_commands_are_synced_from_the_registry_as_type_3(bot: Bot) -> None:
    menus = [c for c in bot.fake.synced[-1] if c.get("type") == 3]
    assert [c["name"] for c in menus] == [a.name.en for a in registry.MESSAGE_ACTIONS] == [FORK, REWIND]
    assert all(not c.get("description") and not c.get("options") for c in menus)


async def test_rewind_to_here_on_an_answer_asks_then_restores_to_the_end_of_its_turn(bot: Bot) -> None:
    _, first = await said(bot, ALICE, "hello")
    _, second = await said(bot, ALICE, "remember: tea is good")
    said_then = second.content
    chat = await bot.chat()
    end_of_first = [s.id for s in await bot.core.snapshots.list_steps(chat.id) if s.turn_index == 1][-1]
    asked = await on_message(bot, ALICE, REWIND, first.message_id)
    assert asked.ephemeral and asked.content.startswith("Restore this chat to turn 1, step ")
    assert f"({end_of_first[:8]})?" in asked.content
    assert len(await bot.core.store.transcript.transcript(chat.id)) == 4  # asked, not done
    done = await bot.click(ALICE, asked, "Yes, do it")
    assert any(s.content.startswith("Restored this chat to turn 1, step ") for s in done)
    assert [r.text for r in await bot.core.store.transcript.transcript(chat.id)] == ["hello", 'You said: "hello". I know no facts yet.']
    # The answer it took back says so, and /replay undo puts its text back.
    [edit] = await bot.fake.until(lambda: bot.fake.edits or None)
    assert (edit.message_id, edit.content) == (second.message_id, REWOUND)
    await bot.slash(ALICE, "replay", "undo")
    back = await bot.fake.until(lambda: bot.fake.edits[1:] or None)
    assert [(e.message_id, e.content) for e in back] == [(second.message_id, said_then)]


async def test_fork_from_here_on_a_persons_message_forks_from_just_before_it(bot: Bot) -> None:
    await said(bot, ALICE, "hello")
    second, _ = await said(bot, ALICE, "calc 2+3")
    chat = await bot.chat()
    end_of_first = [s.id for s in await bot.core.snapshots.list_steps(chat.id) if s.turn_index == 1][-1]
    asked = await on_message(bot, ALICE, FORK, second)
    assert f"({end_of_first[:8]})" in asked.content and set(asked.buttons) == {"Yes, do it", "Cancel"}
    # Confirmed, the fork opens in a thread of its own, as a typed /fork does.
    [forked] = [s for s in await bot.click(ALICE, asked, "Yes, do it") if s.kind == "followup"]
    [(thread_id, _)] = bot.fake.threads.items()
    fork = await bot.chat(thread_id)
    assert fork.forked_from is not None and fork.forked_from["snapshot_id"] == end_of_first
    assert [r.text for r in await bot.core.store.transcript.transcript(fork.id)] == ["hello", 'You said: "hello". I know no facts yet.']
    assert "it continues in the thread" in forked.content


async def test_on_the_first_message_fork_makes_an_empty_chat_of_its_lineage_and_rewind_says_why_not(bot: Bot) -> None:
    hello, _ = await said(bot, ALICE, "hello")
    await said(bot, ALICE, "calc 2+3")
    chat = await bot.chat()
    refused = await on_message(bot, ALICE, REWIND, hello)
    assert refused.ephemeral and refused.content == sentence("errors.nothing_before_first", "en") and not refused.buttons
    asked = await on_message(bot, ALICE, FORK, hello)
    assert asked.content == sentence("commands.confirm_fork_start", "en") and set(asked.buttons) == {"Yes, do it", "Cancel"}
    [forked] = [s for s in await bot.click(ALICE, asked, "Yes, do it") if s.kind == "followup"]
    [(thread_id, _)] = bot.fake.threads.items()
    fork = await bot.chat(thread_id)
    assert fork.forked_from == {"thread_id": chat.id, "snapshot_id": None, "turn_index": 0, "iteration": None}
    assert await bot.core.store.transcript.transcript(fork.id) == [] and len(await bot.core.store.transcript.transcript(chat.id)) == 4
    assert forked.content.startswith("Forked from before the first message into a new chat, ")


async def test_a_message_kazma_never_linked_is_refused_with_a_sentence(bot: Bot) -> None:
    mid = await bot.fake.message(BOB, "talking among ourselves", mention=False)
    await said(bot, ALICE, "hello")
    refused = await on_message(bot, ALICE, FORK, mid)
    assert refused.ephemeral and refused.content.startswith(UNKNOWN)


REWOUND = "⏪ Rewound: a restore took this answer back. /replay undo brings it back."


async def test_a_restore_marks_the_answers_it_took_back_and_an_undo_puts_their_text_back(bot: Bot) -> None:
    await said(bot, ALICE, "hello")
    _, second = await said(bot, ALICE, "calc 2+3")
    await restored_on_the_web_then_undone(bot, second.message_id, second.content)


async def restored_on_the_web_then_undone(bot: Bot, message_id: int, said_then: str) -> None:
    """Alice's channel chat restored to the end of its first turn on the web: the bot's message
    `message_id` is marked rewound; undone, it says `said_then` again."""
    chat, user = await bot.chat(), await bot.user(ALICE)
    end_of_first = [s.id for s in await bot.core.snapshots.list_steps(chat.id) if s.turn_index == 1][-1]
    rewind = RewindService(bot.core)
    await rewind.restore(user, "web", chat.id, end_of_first)
    [edit] = await bot.fake.until(lambda: bot.fake.edits or None)
    assert (edit.message_id, edit.content) == (message_id, REWOUND)
    await rewind.undo(user, "web", chat.id)
    back = await bot.fake.until(lambda: bot.fake.edits[1:] or None)
    assert [(e.message_id, e.content) for e in back] == [(message_id, said_then)]


async def test_an_answer_given_after_an_approval_is_marked_by_a_restore_and_put_back_by_an_undo(bot: Bot) -> None:
    await said(bot, ALICE, "hello")
    _, card = await said(bot, ALICE, "write a.txt: hi")
    await bot.fake.click(ALICE, card, "Approve")
    # The answer is posted in the channel, not as the click's follow-up: a follow-up can be edited only
    # through the interaction's token, for 15 minutes; a channel message whenever a restore comes.
    [answer] = await bot.fake.until(lambda: bot.fake.in_channel(GENERAL)[2:] or None)
    assert answer.content == "Wrote 2 bytes to a.txt."
    await restored_on_the_web_then_undone(bot, answer.message_id, answer.content)
