"""The Discord bot end to end: discord.py against a fake Discord on 127.0.0.1, the real core.

Each test starts the fake (REST + gateway), opens Kazma from settings in a temporary data
folder (the Discord settings given through the environment), runs the adapter that
`kazma serve` would run, injects what people do on Discord and reads the answers off the
fake. Nothing of Kazma is mocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import discord
import pytest

from bots.base import supervise
from bots.discord_bot import MESSAGE_LIMIT, DiscordAdapter, DiscordUnavailable, GatewayUnstable, build
from bots.gateway import Gateway
from commands import registry
from kazma_core.core import Core
from kazma_core.settings import Settings, load_settings
from kazma_core.stores.types import Chat, User
from kazma_ui.thread_rewind import RewindService
from tests.conftest import written
from tests.fakes.discord_server import ALICE, BOB, CAROL, DM, GENERAL, GUILD_ID, FakeDiscord, Sent, serve_fake_discord

TOKEN = "fake-discord-bot-token"
ARABIC = re.compile(r"[\u0600-\u06FF]")
SHORT_ID = re.compile(r"turn (\d+), step (\d+) · ([0-9a-f]{8})")
MESSAGE_CONTENT_INTENT = 1 << 15


@pytest.fixture(autouse=True)
def restore_discord_globals(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter points discord.py's class-wide REST base and gateway at its settings."""
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with serve_fake_discord(TOKEN) as server:
        yield server


def discord_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeDiscord, token: str = TOKEN) -> Settings:
    monkeypatch.setenv("KAZMA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KAZMA_DISCORD__TOKEN", token)
    monkeypatch.setenv("KAZMA_DISCORD__API_BASE", fake.api_base)
    monkeypatch.setenv("KAZMA_DISCORD__GATEWAY_URL", fake.gateway_url)
    return load_settings()


@pytest.fixture
async def kazma(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeDiscord) -> AsyncIterator[Core]:
    core = await Core.open(discord_settings(monkeypatch, tmp_path, fake))
    try:
        yield core
    finally:
        await core.close()


def adapter_for(core: Core) -> DiscordAdapter:
    adapter = build(Gateway(core, RewindService(core)), core.settings)
    assert adapter is not None
    adapter.guild_ready_timeout = 0.05
    return adapter


@dataclass
class Bot:
    core: Core
    fake: FakeDiscord
    adapter: DiscordAdapter

    async def say(self, author: int, text: str, *, channel: int = GENERAL, pieces: int = 1) -> list[Sent]:
        """Post a message (mentioning the bot in the guild) and wait for the answer's pieces."""
        before = len(self.fake.in_channel(channel))
        await self.fake.message(author, text, channel=channel)
        return await self.fake.until(lambda: new if len(new := self.fake.in_channel(channel)[before:]) >= pieces else None)

    async def slash(self, user: int, command: str, *words: str, locale: str = "en-US", channel: int = GENERAL) -> Sent:
        iid = await self.fake.slash(user, command, *words, locale=locale, channel=channel)
        return (await self.fake.until(lambda: self.fake.answers(iid)))[0]

    async def click(self, user: int, message: Sent, label: str) -> list[Sent]:
        """Press a button; wait until the bot has answered (a response, plus its follow-ups)."""
        iid = await self.fake.click(user, message, label)

        def settled() -> list[Sent] | None:
            got = self.fake.answers(iid)
            if any(s.kind == "followup" for s in got) or (got and got[0].callback_type == 4):
                return got
            return None

        return await self.fake.until(settled)

    async def chat(self, channel: int = GENERAL) -> Chat:
        """The chat of a channel, a thread or the DM."""
        key = f"discord:{GUILD_ID}:{channel}" if channel != DM else f"discord:dm:{channel}"
        found = await self.core.store.places.bound_chat(key)
        assert found is not None, key
        return found

    async def user(self, discord_id: int) -> User:
        found = await self.core.store.users.user_for_identity(f"discord:{discord_id}")
        assert found is not None
        return found

    async def steps(self, channel: int = GENERAL) -> list[str]:
        return [s.id for s in await self.core.snapshots.list_steps((await self.chat(channel)).id)]


@pytest.fixture
async def bot(kazma: Core, fake: FakeDiscord, caplog: pytest.LogCaptureFixture) -> AsyncIterator[Bot]:
    caplog.set_level(logging.WARNING)
    adapter = adapter_for(kazma)
    task = asyncio.create_task(adapter.run())
    try:
        await fake.until(lambda: fake.synced or task.done(), timeout=10)
        if task.done():
            task.result()
        yield Bot(kazma, fake, adapter)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await adapter.close()
    assert list(adapter.failures) == []  # no handler raised (each is logged with its traceback)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert fake.unknown_routes == []


def followups(answers: list[Sent]) -> list[Sent]:
    return [s for s in answers if s.kind == "followup"]


# --- connection and commands -----------------------------------------------------------------

async def test_ready_syncs_the_registrys_slash_commands_and_asks_no_privileged_intent(bot: Bot) -> None:
    synced = [c for c in bot.fake.synced[-1] if c.get("type", 1) == 1]  # message commands: tests/test_discord_message_commands.py
    assert [c["name"] for c in synced] == [spec["name"] for spec in registry.slash_definitions("discord")]
    replay = next(c for c in synced if c["name"] == "replay")
    assert [(o["name"], o["type"]) for o in replay["options"]] == [
        ("list", 1), ("restore", 1), ("undo", 1), ("show", 1), ("compare", 1), ("clear", 1)]
    restore = next(o for o in replay["options"] if o["name"] == "restore")
    assert [(o["name"], o["type"], o["required"]) for o in restore["options"]] == [
        ("step", 3, True), ("what", 3, False), ("force", 3, False)]  # what a restore takes back: a choice
    assert restore["options"][0]["max_length"] == 64
    assert [c["value"] for c in restore["options"][1]["choices"]] == ["files", "both"]
    fork = next(c for c in synced if c["name"] == "fork")
    assert fork["options"][0]["description"] == registry.STEP.description.en
    assert not bot.fake.identified[-1]["intents"] & MESSAGE_CONTENT_INTENT


async def test_build_returns_no_bot_without_a_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeDiscord) -> None:
    settings = discord_settings(monkeypatch, tmp_path, fake, token="")
    core = await Core.open(settings)
    try:
        assert build(Gateway(core, RewindService(core)), settings) is None
    finally:
        await core.close()


# --- conversation ----------------------------------------------------------------------------

async def test_a_mention_in_a_channel_and_a_dm_get_the_agents_answer(bot: Bot) -> None:
    await bot.fake.message(ALICE, "nobody asked the bot", mention=False)
    [answer] = await bot.say(ALICE, "hello")
    assert answer.content == 'You said: "hello". I know no facts yet.'
    [dm] = await bot.say(ALICE, "hi in private", channel=DM)
    assert dm.content == 'You said: "hi in private". I know no facts yet.'
    assert len(bot.fake.in_channel(GENERAL)) == 1  # the message without a mention was not answered
    alice = await bot.user(ALICE)
    owned = {c.id for c in await bot.core.chats.list(alice)}
    assert {(await bot.chat()).id, (await bot.chat(DM)).id} == owned
    listed = await bot.slash(ALICE, "replay", "list", channel=DM)  # the DM's own steps
    assert listed.ephemeral and "Turn 1: hi in private" in listed.content and "hello" not in listed.content


async def test_a_long_answer_is_split_into_messages_under_discords_limit(bot: Bot) -> None:
    text = "\n".join(f"line {i:03d} " + "x" * 40 for i in range(70))
    pieces = await bot.say(ALICE, text, pieces=2)
    assert all(len(p.content) <= MESSAGE_LIMIT for p in pieces)
    joined = "\n".join(p.content for p in pieces)
    assert joined == f'You said: "{text}". I know no facts yet.'


async def test_a_429_is_waited_out_and_the_answer_still_delivered_once(bot: Bot) -> None:
    bot.fake.rate_limit_next(f"/channels/{GENERAL}/messages", retry_after=0.3)
    [answer] = await bot.say(ALICE, "hello")
    assert answer.content.startswith('You said: "hello".')
    assert bot.fake.rate_limited == [f"/api/v10/channels/{GENERAL}/messages"]
    await asyncio.sleep(0.1)
    assert len(bot.fake.in_channel(GENERAL)) == 1


async def test_approval_buttons_answer_only_for_the_chats_owner(bot: Bot) -> None:
    [card] = await bot.say(ALICE, "write a.txt: hi")
    assert set(card.buttons) == {"Approve", "Deny"}
    assert card.content == "Kazma asks to write a file\nIt will write 2 B to a.txt in your files:\n\nhi"
    refused = await bot.click(BOB, card, "Approve")
    assert [(s.callback_type, s.ephemeral, s.content) for s in refused] == [
        (4, True, "Only this chat's owner can answer its approvals.")]
    assert not (written(bot.core.settings, "a.txt")).exists()
    approved = await bot.fake.click(ALICE, card, "Approve")
    # The buttons went, and the turn's answer is a message of the channel (the bot may edit it later).
    [result] = await bot.fake.until(lambda: bot.fake.in_channel(GENERAL)[1:] or None)
    assert [(s.callback_type, s.components) for s in bot.fake.answers(approved)] == [(7, [])]
    assert (result.content, result.ephemeral) == ("Wrote 2 bytes to a.txt.", False)
    assert (written(bot.core.settings, "a.txt")).read_text() == "hi"


# --- slash commands --------------------------------------------------------------------------

async def test_replay_list_show_compare_and_help_answer_only_the_asker(bot: Bot) -> None:
    await bot.say(ALICE, "hello")
    await bot.say(ALICE, "steps 2")
    listing = await bot.slash(ALICE, "replay", "list")
    assert listing.ephemeral and listing.callback_type == 4
    assert "Turn 1: hello" in listing.content and "Turn 2: steps 2" in listing.content
    steps = await bot.steps()
    labels = {(int(t), int(s)): short for t, s, short in SHORT_ID.findall(listing.content)}
    assert labels[(1, 0)] == steps[0][:8]
    shown = await bot.slash(ALICE, "replay", "show", steps[0][:8])
    assert shown.ephemeral and shown.content.startswith(f"turn 1, step 0 · {steps[0][:8]} · model kazma-offline")
    compared = await bot.slash(ALICE, "replay", "compare", steps[0][:8], steps[-1][:8])
    assert compared.ephemeral and "Messages:" in compared.content
    helped = await bot.slash(ALICE, "help")
    assert helped.ephemeral and "/replay compare <a> <b>" in helped.content


async def test_restore_asks_with_a_button_then_restores_the_chat(bot: Bot) -> None:
    await bot.say(ALICE, "remember: tea is good")
    await bot.say(ALICE, "remember: coffee is better")
    chat = await bot.chat()
    target = [s for s in await bot.core.snapshots.list_steps(chat.id) if s.turn_index == 1][-1].id
    asked = await bot.slash(ALICE, "replay", "restore", target[:8])
    assert asked.ephemeral and asked.content.startswith(f"Restore this chat to turn 1, step 1 ({target[:8]})?")
    assert asked.buttons == {"Yes, do it": f"kazma:confirm:/replay {target}", "Cancel": "kazma:cancel:"}
    assert [f.text for f in await bot.core.store.memories.facts(chat.id)] == ["tea is good", "coffee is better"]
    done = await bot.click(ALICE, asked, "Yes, do it")
    assert done[0].callback_type == 7 and done[0].components == []
    [restored] = followups(done)
    assert not restored.ephemeral and restored.content.startswith("Restored this chat to turn 1, step 1.")
    assert [f.text for f in await bot.core.store.memories.facts(chat.id)] == ["tea is good"]
    [answer] = await bot.say(ALICE, "and now?")
    assert answer.content == 'You said: "and now?". I know: tea is good.'


async def test_clear_asks_and_cancel_keeps_the_steps_then_confirm_deletes_them(bot: Bot) -> None:
    await bot.say(ALICE, "hello")
    count = len(await bot.steps())
    asked = await bot.slash(ALICE, "replay", "clear")
    assert asked.ephemeral and f"({count})" in asked.content
    [cancelled] = followups(await bot.click(ALICE, asked, "Cancel"))
    assert cancelled.ephemeral and cancelled.content == "Cancelled: nothing changed."
    assert len(await bot.steps()) == count
    asked = await bot.slash(ALICE, "replay", "clear")
    bot.fake.rate_limit_next("/webhooks/", retry_after=0.2)  # the follow-up waits it out too
    [cleared] = followups(await bot.click(ALICE, asked, "Yes, do it"))
    assert cleared.content == f"Deleted this chat’s saved steps: {count}."
    assert len(bot.fake.rate_limited) == 1
    assert await bot.steps() == []


async def test_fork_gives_the_discord_user_a_chat_of_their_own_with_a_link(bot: Bot) -> None:
    await bot.say(ALICE, "remember: tea is good")
    step = (await bot.steps())[-1]
    asked = await bot.slash(BOB, "fork", step[:8])  # bob is a member of the guild, not the chat's owner
    assert asked.ephemeral and asked.buttons["Yes, do it"] == f"kazma:confirm:/fork {step}"
    [forked] = followups(await bot.click(BOB, asked, "Yes, do it"))
    bob = await bot.user(BOB)
    [fork] = await bot.core.chats.list(bob)
    assert fork.forked_from is not None and fork.forked_from["snapshot_id"] == step
    assert f"{bot.core.settings.base_url}/?thread={fork.id}" in forked.content
    assert [f.text for f in await bot.core.store.memories.facts(fork.id)] == ["tea is good"]


async def test_fork_opens_a_thread_from_the_bots_message_and_the_thread_continues_the_fork(bot: Bot) -> None:
    await bot.say(ALICE, "remember: tea is good")
    await bot.say(ALICE, "calc 1+1")
    source = await bot.chat()
    step = (await bot.steps())[0]
    asked = await bot.slash(ALICE, "fork", step[:8])
    [forked] = followups(await bot.click(ALICE, asked, "Yes, do it"))
    [(thread_id, thread)] = bot.fake.threads.items()
    assert thread["name"] == "Kazma Lab #general (fork)" and int(thread["parent_id"]) == GENERAL
    starter = next(s for s in bot.fake.in_channel(GENERAL) if s.message_id == thread_id)
    assert starter.content.startswith("Forked from “Kazma Lab #general”, turn 1, step ")
    assert "mention Kazma here to continue it" in starter.content  # Discord sends the bot mentions only
    assert "it continues in the thread “Kazma Lab #general (fork)”" in forked.content and not forked.ephemeral
    fork = await bot.chat(thread_id)
    assert fork.forked_from is not None and fork.forked_from["thread_id"] == source.id
    # A message in the thread continues the fork, with what it remembers; the channel's chat is not touched.
    [answer] = await bot.say(BOB, "what do you know?", channel=thread_id)
    assert answer.content == 'You said: "what do you know?". I know: tea is good.'
    assert [r.text for r in await bot.core.store.transcript.transcript(fork.id)][-2] == "what do you know?"
    assert "what do you know?" not in [r.text for r in await bot.core.store.transcript.transcript(source.id)]
    # Slash commands in the thread act on the fork, with the guild's rules.
    listing = await bot.slash(BOB, "replay", "list", channel=thread_id)
    assert "Turn 2: what do you know?" in listing.content and "calc 1+1" not in listing.content
    fork_step = [s.id for s in await bot.core.snapshots.list_steps(fork.id) if s.turn_index == 1][-1]
    refused = await bot.slash(BOB, "replay", "restore", fork_step[:8], channel=thread_id)
    assert refused.content.startswith("Only this chat's owner or the group's admins can restore")
    asked = await bot.slash(CAROL, "replay", "restore", fork_step[:8], channel=thread_id)
    [restored] = followups(await bot.click(CAROL, asked, "Yes, do it"))
    assert restored.channel_id == thread_id and restored.content.startswith("Restored this chat to turn 1")
    assert len(await bot.core.store.transcript.transcript(source.id)) == 4


async def test_fork_in_a_dm_or_without_the_permission_says_why_there_is_no_thread(bot: Bot) -> None:
    await bot.say(ALICE, "hello", channel=DM)
    asked = await bot.slash(ALICE, "fork", (await bot.steps(DM))[0][:8], channel=DM)
    [forked] = followups(await bot.click(ALICE, asked, "Yes, do it"))
    assert forked.content.startswith("Forked turn 1, step 0 into a new chat, “Discord: Alice (fork)”. Discord has no threads in")
    assert f"{bot.core.settings.base_url}/?thread=" in forked.content
    await bot.say(ALICE, "hello")
    bot.fake.threads_allowed = False
    asked = await bot.slash(ALICE, "fork", (await bot.steps())[0][:8])
    [forked] = followups(await bot.click(ALICE, asked, "Yes, do it"))
    assert "Kazma may not open threads or topics here: ask an admin" in forked.content
    assert bot.fake.threads == {} and f"{bot.core.settings.base_url}/?thread=" in forked.content


async def test_a_thread_discord_refuses_leaves_no_message_saying_talk_here(bot: Bot) -> None:
    """The channel's settings may forbid threads where the bot's own permissions allow them."""
    await bot.say(ALICE, "hello")
    bot.fake.fail_next("/threads", 403, '{"message": "Missing Permissions", "code": 50013}', "application/json")
    asked = await bot.slash(ALICE, "fork", (await bot.steps())[0][:8])
    [forked] = followups(await bot.click(ALICE, asked, "Yes, do it"))
    assert "Kazma may not open threads or topics here: ask an admin" in forked.content
    assert not [s for s in bot.fake.in_channel(GENERAL) if s.content.startswith("Forked from")]
    assert len(bot.fake.deleted) == 1 and bot.fake.threads == {}


async def test_fork_here_makes_no_thread(bot: Bot) -> None:
    await bot.say(ALICE, "hello")
    step = (await bot.steps())[0]
    asked = await bot.slash(ALICE, "fork", step[:8], "here")
    assert asked.buttons["Yes, do it"] == f"kazma:confirm:/fork {step} here"
    [forked] = followups(await bot.click(ALICE, asked, "Yes, do it"))
    assert forked.content.startswith("Forked turn 1, step 0 into a new chat, “Kazma Lab #general (fork)”. Open it:")
    assert bot.fake.threads == {}


async def test_a_5xx_with_a_page_for_a_body_is_tried_again_and_the_answer_delivered(bot: Bot) -> None:
    bot.fake.fail_next(f"/channels/{GENERAL}/messages")
    [answer] = await bot.say(ALICE, "hello")
    assert answer.content == 'You said: "hello". I know no facts yet.' and len(bot.fake.in_channel(GENERAL)) == 1


async def test_a_503_discord_py_does_not_retry_itself_is_tried_again(bot: Bot) -> None:
    bot.fake.fail_next(f"/channels/{GENERAL}/messages", 503, "upstream connect error", "text/plain")
    [answer] = await bot.say(ALICE, "hello")
    assert answer.content == 'You said: "hello". I know no facts yet.' and len(bot.fake.in_channel(GENERAL)) == 1


async def test_messages_of_one_channel_are_answered_in_the_order_they_came(bot: Bot) -> None:
    for text in ("sleep 0.3", "first", "second"):
        await bot.fake.message(ALICE, text)
    answers = await bot.fake.until(lambda: got if len(got := bot.fake.in_channel(GENERAL)) >= 3 else None)
    assert [a.content for a in answers[1:]] == [f'You said: "{t}". I know no facts yet.' for t in ("first", "second")]
    assert "first" not in answers[0].content


async def test_a_member_without_admin_rights_is_refused_a_restore_and_an_admin_may(bot: Bot) -> None:
    await bot.say(ALICE, "hello")
    await bot.say(ALICE, "steps 2")
    chat = await bot.chat()
    target = (await bot.steps())[0]
    refused = await bot.slash(BOB, "replay", "restore", target[:8])
    assert refused.ephemeral and refused.content.startswith("Only this chat's owner or the group's admins can restore")
    bob = await bot.user(BOB)
    audit = [(r.user_id, r.action, r.outcome) for r in await bot.core.audit.rows(chat.id)]
    assert (bob.id, "restore", "forbidden") in audit
    asked = await bot.slash(CAROL, "replay", "restore", target[:8])  # carol holds the admin role
    [restored] = followups(await bot.click(CAROL, asked, "Yes, do it"))
    assert restored.content.startswith("Restored this chat to turn 1, step 0.")
    carol = await bot.user(CAROL)
    assert (carol.id, "restore", "ok") in [(r.user_id, r.action, r.outcome) for r in await bot.core.audit.rows(chat.id)]
    # The same rule for a command typed in a message: the role is read off the guild.
    [refused] = await bot.say(BOB, f"/replay {target[:8]}")
    assert refused.content.startswith("Only this chat's owner or the group's admins can restore")
    [asked] = await bot.say(CAROL, f"/replay {target[:8]}")
    assert asked.content.startswith("Restore this chat to turn 1, step 0") and "Yes, do it" in asked.buttons


async def test_a_slow_answer_is_deferred_then_followed_up(bot: Bot) -> None:
    """Discord drops an interaction not answered within 3 s: a slow one is deferred first."""
    await bot.say(ALICE, "hello")
    step = (await bot.steps())[0]
    bot.adapter.answer_within = 0.0
    iid = await bot.fake.slash(ALICE, "replay", "restore", step[:8])
    deferred, asked = await bot.fake.until(lambda: a if len(a := bot.fake.answers(iid)) >= 2 else None)
    assert (deferred.kind, deferred.callback_type, deferred.ephemeral) == ("callback", 5, True)
    assert asked.kind == "followup" and asked.content.startswith("Restore this chat to turn 1, step 0")
    done = await bot.click(ALICE, asked, "Yes, do it")
    assert [(s.kind, s.callback_type) for s in done] == [("callback", 6), ("edit", None), ("followup", None)]
    assert done[1].components == [] and done[2].content.startswith("Restored this chat to turn 1, step 0.")


async def test_an_arabic_locale_gets_arabic_answers_and_buttons(bot: Bot) -> None:
    empty = await bot.slash(ALICE, "replay", "list", locale="ar")
    assert empty.content == "لا خطوات محفوظة في هذه الدردشة بعد."
    await bot.say(ALICE, "hello")
    step = (await bot.steps())[0]
    asked = await bot.slash(ALICE, "replay", "restore", step[:8], locale="ar")
    assert ARABIC.search(asked.content) and set(asked.buttons) == {"نعم، نفّذ", "إلغاء"}
    helped = await bot.slash(ALICE, "help", locale="ar")
    assert helped.content.startswith("الأوامر:")


async def test_no_discord_id_reaches_the_saved_steps(bot: Bot) -> None:
    await bot.fake.message(ALICE, f"ask <@{BOB}> in <#{GENERAL}>", mentions=(BOB,))
    [answer] = await bot.fake.until(lambda: bot.fake.in_channel(GENERAL))
    assert answer.content == 'You said: "ask @Bob in #general". I know no facts yet.'
    await bot.say(ALICE, "remember: tea is good")
    await bot.say(ALICE, "hello", channel=DM)
    await bot.say(BOB, "steps 2")
    step = (await bot.steps())[0]
    asked = await bot.slash(ALICE, "replay", "restore", step[:8])
    await bot.click(ALICE, asked, "Yes, do it")
    await bot.say(ALICE, "and now?")
    ids = bot.fake.snowflakes()
    for channel in (GENERAL, DM):
        chat = await bot.chat(channel)
        infos = await bot.core.snapshots.list_steps(chat.id)
        assert infos
        for info in infos:
            step_data = await bot.core.snapshots.get(chat.id, info.id)
            assert step_data is not None
            state = json.dumps(step_data.state, default=str)
            assert not [i for i in ids if i in state], info.id


# --- failures --------------------------------------------------------------------------------

async def test_a_rejected_token_makes_run_raise(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeDiscord) -> None:
    settings = discord_settings(monkeypatch, tmp_path, fake, token="not-the-token")
    core = await Core.open(settings)
    try:
        adapter = adapter_for(core)
        with pytest.raises(DiscordUnavailable, match=r"Discord refused the token .*Check KAZMA_DISCORD__TOKEN"):
            await asyncio.wait_for(adapter.run(), 10)
        await adapter.close()
    finally:
        await core.close()


async def test_the_supervisor_logs_one_line_per_failed_start_and_retries(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    settings = discord_settings(monkeypatch, tmp_path, fake, token="not-the-token")
    core = await Core.open(settings)
    try:
        def stopped() -> list[logging.LogRecord]:
            return [r for r in caplog.records if r.name == "bots.base"]

        adapter = adapter_for(core)
        caplog.set_level(logging.ERROR)
        task = asyncio.create_task(supervise(adapter, first_retry=0.05))
        await fake.until(lambda: len(stopped()) >= 2)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        assert all(
            "discord bot stopped (DiscordUnavailable: Discord refused the token" in r.getMessage() and r.exc_info is None
            for r in stopped()
        )
        assert [r for r in caplog.records if r.levelno >= logging.ERROR and r.name != "bots.base"] == []
    finally:
        await core.close()


async def test_an_unreachable_or_dropping_platform_makes_run_raise(fake: FakeDiscord, kazma: Core) -> None:
    adapter = adapter_for(kazma)
    adapter.api_base = "http://127.0.0.1:9/api/v10"  # nothing listens there
    with pytest.raises(DiscordUnavailable, match="Check the network, KAZMA_DISCORD__API_BASE"):
        await asyncio.wait_for(adapter.run(), 10)
    await adapter.close()
    adapter = adapter_for(kazma)
    adapter.gateway_url = "ws://127.0.0.1:9/gateway"  # nothing listens there
    with pytest.raises(OSError):
        await asyncio.wait_for(adapter.run(), 10)
    await adapter.close()
    fake.drop_gateway = True
    adapter = adapter_for(kazma)
    with pytest.raises(GatewayUnstable):
        await asyncio.wait_for(adapter.run(), 10)
    await adapter.close()

