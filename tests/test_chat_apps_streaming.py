"""A chat app shows the answer as it is made: posted once it has been growing a moment, edited
as it grows at the platform's pace, its final text exact. Through the fake platform servers,
with the real SDKs and the real core (the offline model says a word every 0.1 s).
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bots.streaming import GROWING_MARK
from tests.conftest import make_settings
from tests.fakes.discord_server import ALICE, GENERAL
from tests.fakes.slack_server import serve_fake_slack
from tests.fakes.telegram_server import person, private_chat
from tests.http_server import serve_kazma
from tests.test_discord_bot import Bot as DiscordBot
from tests.test_discord_bot import bot as discord_bot  # noqa: F401  (fixtures of the Discord tests)
from tests.test_discord_bot import fake, kazma, restore_discord_globals  # noqa: F401
from tests.test_slack_bot import ANN as SLACK_ANN
from tests.test_slack_bot import BOT_TOKEN, DM, SECRET, Slack, add_people, text_of
from tests.test_telegram_bot import telegram_bot_running

QUESTION = " ".join(f"w{n}" for n in range(40))
ANSWER = f'You said: "{QUESTION}". I know no facts yet.'
ANN = person(5551234987, "Ann")


@pytest.fixture(autouse=True)
def slow_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAZMA_MODEL__PIECE_SECONDS", "0.1")


def grew_in_order(texts: list[str], final: str) -> bool:
    """Each text shown was the start of the final one, none shorter than the one before (under load the
    whole answer can be shown growing once before its final write)."""
    words = [t.removesuffix(GROWING_MARK) for t in texts]
    return all(final.startswith(w) for w in words) and all(len(a) <= len(b) for a, b in itertools.pairwise(words))


async def test_telegram_posts_the_answer_once_then_edits_it_as_it_grows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async with telegram_bot_running(monkeypatch, tmp_path) as bot:
        bot.fake.edit_interval(0.5)  # Telegram's flood control, short of the bot's own pace
        chat = private_chat(ANN)
        bot.fake.message(ANN, chat, QUESTION)
        [growing] = await bot.fake.replies(chat["id"], 0)
        first = growing.text  # as posted (the fake edits the message in place)
        assert first.endswith(GROWING_MARK) and ANSWER.startswith(first.removesuffix(GROWING_MARK))
        assert growing.reply_to is not None  # in reply to the person's message
        await bot.fake.wait_for(lambda: bot.fake.to(chat["id"])[0].text == ANSWER, 15)
        assert len(bot.fake.to(chat["id"])) == 1  # one message, edited: never a second one
        edits = [e.text for e in bot.fake.edits]
        assert len(edits) >= 2 and edits[-1] == ANSWER
        assert grew_in_order([first, *edits], ANSWER)
        assert bot.fake.flooded_edits == 0  # never faster than Telegram allows in a chat


async def test_telegram_posts_a_short_answer_once_without_edits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KAZMA_MODEL__PIECE_SECONDS", "0")
    async with telegram_bot_running(monkeypatch, tmp_path) as bot:
        [answer] = await bot.say(ANN, private_chat(ANN), "hello")
        assert answer.text == 'You said: "hello". I know no facts yet.' and bot.fake.edits == []


async def test_discord_posts_the_answer_once_then_edits_it_as_it_grows(discord_bot: DiscordBot) -> None:
    fake = discord_bot.fake
    fake.edit_limit, fake.edit_window = 5, 5.0  # Discord's bucket for edits in a channel
    await fake.message(ALICE, QUESTION, channel=GENERAL)
    [_growing] = await fake.until(lambda: fake.in_channel(GENERAL) or None)
    await fake.until(lambda: fake.in_channel(GENERAL)[0].content == ANSWER, 15)
    assert len(fake.in_channel(GENERAL)) == 1  # one message, edited
    edits = [e.content for e in fake.edits]
    assert len(edits) >= 2 and edits[-1] == ANSWER and grew_in_order(edits, ANSWER)
    assert fake.edits_limited == 0  # within the channel's bucket: never a 429


@pytest.fixture
async def slack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[Slack]:
    async with serve_fake_slack(BOT_TOKEN) as fake_slack:
        add_people(fake_slack)
        monkeypatch.setenv("KAZMA_SLACK__BOT_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("KAZMA_SLACK__SIGNING_SECRET", SECRET)
        monkeypatch.setenv("KAZMA_SLACK__API_URL", fake_slack.api_url)
        settings = make_settings(tmp_path / "data", model={"piece_seconds": 0.1})
        async with serve_kazma(settings) as server, server.client() as http:
            await fake_slack.wait_for(lambda: fake_slack.called("auth.test"))
            yield Slack(fake_slack, server, http)


async def test_slack_posts_the_answer_once_then_updates_it_as_it_grows(slack: Slack) -> None:
    slack.fake.update_interval(0.5)  # chat.update's rate limit, short of the bot's own pace
    await slack.dm(SLACK_ANN, QUESTION)
    await slack.posts(1)
    await slack.fake.wait_for(lambda: slack.fake.shown(DM) == [ANSWER], 15)
    updates = [u["text"] for u in slack.fake.updates]
    assert len(updates) >= 2 and grew_in_order(updates, ANSWER)
    [message] = [m for (channel, _), m in slack.fake.messages.items() if channel == DM]
    assert text_of(message) == ANSWER  # the blocks say it all too
    assert slack.fake.updates_limited == 0 and len(slack.fake.posts()) == 1
