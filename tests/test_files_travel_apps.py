"""Files travel too, in the chat apps and the TUI's grammar: a restore whose files would change asks
with one button for each choice (Conversation / Files / Both), and the button pressed is what is done.
The real adapters against their fake platform servers (tests/fakes/), the real core behind them."""

from __future__ import annotations

from pathlib import Path

from commands.parser import ReplayRestore, parse
from kazma_core.core import Core
from kazma_core.stores.types import Chat
from tests.fakes.telegram_server import private_chat
from tests.test_discord_bot import ALICE, fake, followups, kazma, restore_discord_globals  # noqa: F401
from tests.test_discord_bot import Bot as DiscordBot
from tests.test_discord_bot import bot as discord_bot  # noqa: F401  (fixtures)
from tests.test_slack_bot import ANN as SLACK_ANN
from tests.test_slack_bot import DM, Slack, buttons_of, slack, talk, text_of  # noqa: F401  (slack is a fixture)
from tests.test_telegram_bot import ANN, Bot, bot  # noqa: F401  (bot is a fixture)

CHOICES = ["Conversation", "Files", "Both", "Cancel"]


async def three_writes(core: Core, chat: Chat) -> tuple[str, Path]:
    """The issue's three approved writes in the chat; the end of its first write's turn; the owner's folder."""
    first = None
    for text in ("write notes.txt: v1", "write notes.txt: v2", "write draft.txt: x"):
        waiting = await core.turns.send(chat.id, text)
        await core.turns.decide(chat.id, waiting.gates[0]["card_id"], "approve", chat.owner_id)
        if first is None:
            first = [s for s in await core.snapshots.list_steps(chat.id) if s.turn_index == waiting.turn_index][-1].id
    assert first is not None
    return first, core.settings.files_of(chat.owner_id)


def test_the_tui_and_chat_apps_grammar_takes_what_a_restore_takes_back() -> None:
    assert parse("/replay 0123abcd files") == ReplayRestore("0123abcd", "files")
    assert parse("/replay restore 0123abcd both force") == ReplayRestore("0123abcd", "both", "force")
    assert parse("/replay 0123abcd").what is None  # type: ignore[union-attr]  # the conversation, as ever
    assert parse("/replay 0123abcd everything").reason == "bad_choice"  # type: ignore[union-attr]


async def test_telegram_asks_with_three_buttons_and_files_restores_only_the_files(bot: Bot) -> None:
    ann = private_chat(ANN)
    await bot.say(ANN, ann, "hello")
    chat = await bot.chat(ann)
    target, folder = await three_writes(bot.core, chat)
    rows = await bot.core.store.transcript.transcript(chat.id)

    [asked] = await bot.say(ANN, ann, f"/replay {target[:8]}")
    assert [label for label, _ in asked.buttons()] == CHOICES
    assert all(len(data.encode()) <= 64 for _, data in asked.buttons())
    assert "notes.txt: back to its content at the step" in asked.text and "draft.txt: removed" in asked.text
    [done] = await bot.press(ANN, asked, "Files")
    assert "Files put back: 2." in done.text
    assert (folder / "notes.txt").read_text() == "v1" and not (folder / "draft.txt").exists()
    assert await bot.core.store.transcript.transcript(chat.id) == rows  # the conversation stays

    # A hand edit: named, refused, then forced with the word the sentence gives.
    (folder / "notes.txt").write_text("mine")
    [undo] = await bot.say(ANN, ann, "/replay undo")
    assert "notes.txt" in undo.text and (folder / "notes.txt").read_text() == "mine"
    [asked] = await bot.say(ANN, ann, f"/replay {target[:8]} both")
    assert [label for label, _ in asked.buttons()] == ["Yes, do it", "Cancel"]
    [refused] = await bot.press(ANN, asked, "Yes, do it")
    assert "notes.txt" in refused.text and "force" in refused.text
    [asked] = await bot.say(ANN, ann, f"/replay {target[:8]} both force")
    [done] = await bot.press(ANN, asked, "Yes, do it")
    assert (folder / "notes.txt").read_text() == "v1"
    assert {r.turn_index for r in await bot.core.store.transcript.transcript(chat.id)} == {1, 2}  # hello, then the first write


async def test_discord_asks_with_three_buttons_and_both_restores_the_chat_and_its_files(discord_bot: DiscordBot) -> None:
    await discord_bot.say(ALICE, "hello")
    chat = await discord_bot.chat()
    target, folder = await three_writes(discord_bot.core, chat)
    asked = await discord_bot.slash(ALICE, "replay", "restore", target[:8])
    assert list(asked.buttons) == CHOICES
    assert asked.buttons["Both"] == f"kazma:confirm:/replay {target} both"
    done = await discord_bot.click(ALICE, asked, "Both")
    [restored] = followups(done)
    assert "Files put back: 2." in restored.content
    assert (folder / "notes.txt").read_text() == "v1" and not (folder / "draft.txt").exists()
    assert {r.turn_index for r in await discord_bot.core.store.transcript.transcript(chat.id)} == {1, 2}


async def test_slack_asks_with_three_buttons_and_conversation_leaves_the_files(slack: Slack) -> None:
    await talk(slack, SLACK_ANN, "hello")
    chat = await slack.server.core.store.places.bound_chat(f"slack:{DM}")
    assert chat is not None
    target, folder = await three_writes(slack.server.core, chat)
    (question,) = await slack.answers(await slack.command(SLACK_ANN, target[:8]))
    buttons = buttons_of(question)
    assert list(buttons) == CHOICES and "draft.txt" in text_of(question)
    _, restored = await slack.answers(await slack.press(SLACK_ANN, buttons["Conversation"]), 2)
    assert text_of(restored).startswith("Restored this chat to turn 2")
    assert (folder / "notes.txt").read_text() == "v2" and (folder / "draft.txt").read_text() == "x"
