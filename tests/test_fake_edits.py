"""The fake platforms edit a posted message as the real APIs document, driven by the real SDKs.

A chat app that streams an answer posts it once and edits it as it grows; these tests pin
down what the fakes answer to those edits (the edited message, the errors, the rate limits)
so the bots' tests read off the fakes what a person would see.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import discord
import pytest
import telegram
import yarl
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from telegram.error import BadRequest, RetryAfter

from tests.fakes.discord_server import BOT_ID, GENERAL, serve_fake_discord
from tests.fakes.slack_server import serve_fake_slack
from tests.fakes.telegram_server import person, private_chat, serve_fake_telegram

TG_TOKEN = "5550001111:AAH-fake-token-for-edits"
DISCORD_TOKEN = "discord-fake-token-for-edits"
SLACK_TOKEN = "xoxb-fake-token-for-edits"
ANN = person(5551234987, "Ann")


async def test_telegram_edit_message_text_answers_the_same_message_with_the_new_text() -> None:
    async with serve_fake_telegram(TG_TOKEN) as fake:
        fake.message(ANN, private_chat(ANN), "hi")  # the fake learns the chat, as from a person's message
        async with telegram.Bot(TG_TOKEN, base_url=fake.base_url) as bot:
            posted = await bot.send_message(ANN["id"], "The answer")
            edited = await bot.edit_message_text("The answer grows", chat_id=ANN["id"], message_id=posted.message_id)
            assert isinstance(edited, telegram.Message)
            assert edited.message_id == posted.message_id and edited.text == "The answer grows"
            assert edited.edit_date is not None
            assert [s.text for s in fake.to(ANN["id"])] == ["The answer grows"]  # one message, reading the new text
            assert [e.text for e in fake.edits] == ["The answer grows"]

            with pytest.raises(BadRequest, match="not modified"):
                await bot.edit_message_text("The answer grows", chat_id=ANN["id"], message_id=posted.message_id)
            with pytest.raises(BadRequest, match="not found"):
                await bot.edit_message_text("x", chat_id=ANN["id"], message_id=posted.message_id + 999)
            with pytest.raises(BadRequest, match="too long"):
                await bot.edit_message_text("x" * 4097, chat_id=ANN["id"], message_id=posted.message_id)

            fake.edit_interval(60)  # flood control: the last write of this chat was just now
            with pytest.raises(RetryAfter):
                await bot.edit_message_text("Too soon", chat_id=ANN["id"], message_id=posted.message_id)
            assert fake.flooded_edits == 1 and fake.to(ANN["id"])[0].text == "The answer grows"


@pytest.fixture
async def discord_client(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[discord.Client, object]]:
    async with serve_fake_discord(DISCORD_TOKEN) as fake:
        monkeypatch.setattr(discord.http.Route, "BASE", fake.api_base)
        monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway_url))
        client = discord.Client(intents=discord.Intents.none())
        await client.login(DISCORD_TOKEN)  # REST only: no gateway needed to post and edit
        try:
            yield client, fake
        finally:
            await client.close()


async def test_discord_patch_edits_the_bots_message_and_paces_by_the_bucket(discord_client: tuple[discord.Client, object]) -> None:
    client, fake = discord_client
    channel = client.get_partial_messageable(GENERAL)
    posted = await channel.send("The answer")
    edited = await posted.edit(content="The answer grows")
    assert edited.id == posted.id and edited.content == "The answer grows"
    assert edited.edited_at is not None and edited.author.id == BOT_ID
    assert [s.content for s in fake.in_channel(GENERAL)] == ["The answer grows"]  # type: ignore[attr-defined]

    with pytest.raises(discord.NotFound):
        await channel.get_partial_message(posted.id + 999).edit(content="x")
    with pytest.raises(discord.HTTPException, match="2000 or fewer"):
        await posted.edit(content="x" * 2001)

    # A bucket of 2 edits a window: discord.py reads the headers, waits, and every edit lands in order.
    fake.edit_limit, fake.edit_window = 2, 0.3  # type: ignore[attr-defined]
    for n in range(5):
        await posted.edit(content=f"piece {n}")
    assert [e.content for e in fake.edits][-5:] == [f"piece {n}" for n in range(5)]  # type: ignore[attr-defined]
    assert fake.in_channel(GENERAL)[0].content == "piece 4"  # type: ignore[attr-defined]


async def test_slack_chat_update_edits_the_bots_message() -> None:
    async with serve_fake_slack(SLACK_TOKEN) as fake:
        client = AsyncWebClient(token=SLACK_TOKEN, base_url=fake.api_url)
        posted = await client.chat_postMessage(channel="C0GENERAL", text="The answer")
        updated = await client.chat_update(channel="C0GENERAL", ts=posted["ts"], text="The answer grows")
        assert updated["ok"] and updated["ts"] == posted["ts"] and updated["text"] == "The answer grows"
        assert updated["message"]["text"] == "The answer grows" and "edited" in updated["message"]
        assert fake.shown("C0GENERAL") == ["The answer grows"]
        assert fake.updates == [{"channel": "C0GENERAL", "ts": posted["ts"], "text": "The answer grows"}]

        for kwargs, error in (({"ts": "1.999999", "text": "x"}, "message_not_found"),
                              ({"ts": posted["ts"], "text": ""}, "no_text"),
                              ({"ts": posted["ts"], "text": "x" * 40001}, "msg_too_long")):
            with pytest.raises(SlackApiError) as raised:
                await client.chat_update(channel="C0GENERAL", **kwargs)
            assert raised.value.response["error"] == error

        fake.update_interval(60)
        with pytest.raises(SlackApiError) as raised:
            await client.chat_update(channel="C0GENERAL", ts=posted["ts"], text="Too soon")
        assert raised.value.response.status_code == 429 and fake.updates_limited == 1
        assert fake.shown("C0GENERAL") == ["The answer grows"]
