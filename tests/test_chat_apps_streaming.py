"""A chat app shows the answer as it is made: posted once it has been growing a moment, edited
as it grows at the platform's pace, its final text exact. Through the fake platform servers,
with the real SDKs and the real core (the offline model says a word every 0.1 s).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.streaming import GROWING_MARK
from tests.fakes.telegram_server import person, private_chat
from tests.test_telegram_bot import telegram_bot_running

QUESTION = " ".join(f"w{n}" for n in range(40))
ANSWER = f'You said: "{QUESTION}". I know no facts yet.'
ANN = person(5551234987, "Ann")


@pytest.fixture(autouse=True)
def slow_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAZMA_MODEL__PIECE_SECONDS", "0.1")


def grew_in_order(texts: list[str], final: str) -> bool:
    """Each text shown was the start of the final one, each longer than the one before."""
    words = [t.removesuffix(GROWING_MARK) for t in texts]
    return all(final.startswith(w) for w in words) and all(len(a) < len(b) for a, b in zip(words, words[1:]))


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
