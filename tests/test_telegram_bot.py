"""The Telegram bot end to end: python-telegram-bot against a fake Bot API server, the real core.

Each test starts the adapter from settings (KAZMA_TELEGRAM__* pointing at the fake), sends
updates as Telegram would, and reads the bot's answers off the fake's recorded sendMessage
calls. Nothing of Kazma is mocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from bots import telegram_bot
from bots.gateway import Button, Gateway, Reply
from commands.registry import telegram_menu
from kazma_core.core import Core
from kazma_core.settings import Settings, load_settings
from kazma_core.stores.types import Chat, User
from kazma_core.users import UserAdmin
from kazma_ui.thread_rewind import RewindService
from tests.conftest import written
from tests.fakes.telegram_server import FakeTelegram, Sent, group_chat, person, private_chat, serve_fake_telegram
from tests.helpers import free_port
from tests.http_server import serve_kazma

TOKEN = "5550001111:AAH-fake-token-for-tests"
PUBLIC = "http://kazma.test"
ANN = person(5551234987, "Ann")
BOB = person(5552345678, "Bob")
CY = person(5553456789, "Cy")
LINA = person(5554567890, "Lina", "ar")
TEAM = group_chat(-1009876543210, "Team")
FORUM = group_chat(-1001112223334, "Forum", forum=True)
ARABIC = re.compile(r"[\u0600-\u06FF]")
YES, CANCEL, APPROVE = "Yes, do it", "Cancel", "Approve"


@dataclass
class Bot:
    """A running Telegram bot, its fake Bot API server, and the core behind it."""

    fake: FakeTelegram
    core: Core
    settings: Settings
    adapter: telegram_bot.TelegramAdapter
    task: asyncio.Task[None]

    async def say(self, user: dict[str, Any], chat: dict[str, Any], text: str, count: int = 1,
                  thread_id: int | None = None, reply_to: Sent | None = None, timeout: float = 10.0) -> list[Sent]:
        before = len(self.fake.to(chat["id"]))
        self.fake.message(user, chat, text, thread_id=thread_id, reply_to=reply_to)
        return await self.fake.replies(chat["id"], before, count, timeout)

    async def press(self, user: dict[str, Any], sent: Sent, label: str) -> list[Sent]:
        before = len(self.fake.to(sent.chat_id))
        self.fake.press(user, sent, label)
        return await self.fake.replies(sent.chat_id, before)

    async def kazma_user(self, user: dict[str, Any]) -> User:
        found = await self.core.store.users.user_for_identity(f"telegram:{user['id']}")
        assert found is not None
        return found

    async def chat(self, chat: dict[str, Any], thread_id: int | None = None) -> Chat:
        key = f"telegram:{chat['id']}" + (f":{thread_id}" if thread_id else "")
        found = await self.core.store.places.bound_chat(key)
        assert found is not None
        return found

    async def step_ids(self, chat: dict[str, Any], turn: int) -> list[str]:
        return [s.id for s in await self.core.snapshots.list_steps((await self.chat(chat)).id) if s.turn_index == turn]


def telegram_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeTelegram, **env: str) -> Settings:
    monkeypatch.setenv("KAZMA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KAZMA_SERVER__PUBLIC_URL", PUBLIC)
    monkeypatch.setenv("KAZMA_TELEGRAM__TOKEN", env.pop("token", TOKEN))
    monkeypatch.setenv("KAZMA_TELEGRAM__BASE_URL", fake.base_url)
    for name, value in env.items():
        monkeypatch.setenv(f"KAZMA_TELEGRAM__{name.upper()}", value)
    return load_settings()


@contextlib.asynccontextmanager
async def telegram_bot_running(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeTelegram | None = None, **env: str
) -> AsyncIterator[Bot]:
    async with contextlib.AsyncExitStack() as stack:
        if fake is None:
            fake = await stack.enter_async_context(serve_fake_telegram(TOKEN))
        settings = telegram_settings(monkeypatch, tmp_path, fake, **env)
        core = await Core.open(settings)
        try:
            adapter = telegram_bot.build(Gateway(core, RewindService(core)), settings)
            assert adapter is not None
            task = asyncio.create_task(adapter.run())
            await fake.wait_for(lambda: adapter.serving.is_set() or task.done(), 10)
            assert not task.done(), task.exception()
            try:
                yield Bot(fake, core, settings, adapter, task)
            finally:
                task.cancel()
                # A test that makes the bot fail reads the error itself; the others see it as silence.
                with contextlib.suppress(asyncio.CancelledError, telegram_bot.TelegramUnavailable):
                    await asyncio.wait_for(task, 15)
        finally:
            await core.close()


@pytest.fixture
async def bot(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[Bot]:
    async with telegram_bot_running(monkeypatch, tmp_path) as running:
        yield running


def link_target(text: str) -> str:
    found = re.search(re.escape(PUBLIC) + r"/\?thread=([\w-]+)", text)
    assert found, text
    return found[1]


# --- conversation --------------------------------------------------------------------------

async def test_a_message_gets_the_agents_answer_and_the_menu_is_set_in_english_and_arabic(bot: Bot) -> None:
    [answer] = await bot.say(ANN, private_chat(ANN), "hello there")
    assert answer.text == 'You said: "hello there". I know no facts yet.'
    assert answer.parse_mode == "HTML" and answer.reply_to is not None
    menus = {c.params.get("language_code"): c.params["commands"] for c in bot.fake.called("setMyCommands")}
    assert menus.keys() == {None, "ar"}
    assert [(c["command"], c["description"]) for c in menus["ar"]] == telegram_menu("ar")
    assert [c["command"] for c in menus[None]] == [name for name, _ in telegram_menu("en")]
    assert bot.adapter.gateway.bot_name == "KazmaBot"
    chats = await bot.core.chats.list(await bot.kazma_user(ANN))
    assert [c.title for c in chats] == ["Telegram: Ann"]


async def test_a_long_answer_is_split_into_pieces_telegram_accepts(bot: Bot) -> None:
    question = "a fairly long line of words\n" * 146  # 4088 characters, under Telegram's own limit
    pieces = await bot.say(ANN, private_chat(ANN), question, count=2)
    assert len(pieces) == 2 and all(len(p.text) <= 4096 for p in pieces)
    assert "".join(p.text for p in pieces).replace("\n", "") == f'You said: "{question.strip()}". I know no facts yet.'.replace("\n", "")


async def test_an_answer_with_emoji_is_split_by_telegrams_utf16_count(bot: Bot) -> None:
    question = "🙂" * 2040  # 4080 UTF-16 units: a message Telegram takes; the answer quoting it is longer
    pieces = await bot.say(ANN, private_chat(ANN), question, count=2)
    assert len(pieces) == 2 and "".join(p.text for p in pieces).count("🙂") == 2040


async def test_markup_in_an_answer_is_escaped_so_telegram_takes_it(bot: Bot) -> None:
    [answer] = await bot.say(ANN, private_chat(ANN), "is 1 < 2 & <b>bold</b> **yes** `x<y`?")
    assert answer.text == 'You said: "is 1 < 2 & <b>bold</b> yes x<y?". I know no facts yet.'
    assert "<b>yes</b>" in answer.raw and "<code>x&lt;y</code>" in answer.raw


async def test_arabic_speakers_get_arabic_replies_and_buttons(bot: Bot) -> None:
    lina = private_chat(LINA)
    [helped] = await bot.say(LINA, lina, "/help")
    assert helped.text.startswith("الأوامر:") and "/replay compare <a> <b> — ما يختلف بين خطوتين" in helped.text
    await bot.say(LINA, lina, "hello")
    [asked] = await bot.say(LINA, lina, "/replay clear")
    assert ARABIC.search(asked.text) and [label for label, _ in asked.buttons()] == ["نعم، نفّذ", "إلغاء"]


# --- commands ------------------------------------------------------------------------------

async def test_replay_list_show_compare_and_help_answer_in_the_chat(bot: Bot) -> None:
    ann = private_chat(ANN)
    [empty] = await bot.say(ANN, ann, "/replay list")
    assert empty.text == "No steps saved in this chat yet."
    await bot.say(ANN, ann, "hello")
    await bot.say(ANN, ann, "calc 2+3")
    first, second = (await bot.step_ids(ann, 1))[-1], (await bot.step_ids(ann, 2))[-1]
    [listed] = await bot.say(ANN, ann, "/replay")
    assert listed.text.startswith("This chat’s saved steps, turn by turn (")
    assert "Turn 1: hello" in listed.text and "Turn 2: calc 2+3" in listed.text
    assert f"turn 1, step 0 · {first[:8]}" in listed.text
    [shown] = await bot.say(ANN, ann, f"/replay show {second[:8]}")
    assert shown.text.startswith("turn 2, step ") and "calc 2+3" in shown.text
    [compared] = await bot.say(ANN, ann, f"/replay compare {first[:8]} {second[:8]}")
    assert compared.text.startswith("turn 1, step 0 → turn 2, step 1\nMessages: 4 added, 0 removed, 0 changed.")
    [helped] = await bot.say(ANN, ann, "/help")
    assert helped.text.startswith("Commands:") and "/fork <step>" in helped.text and "/replay clear" in helped.text
    [wrong] = await bot.say(ANN, ann, "/replay compare abc")
    assert wrong.text == "Missing <b>. Use: /replay compare <a> <b>."


async def test_restore_by_an_eight_character_prefix_asks_then_restores_when_confirmed(bot: Bot) -> None:
    ann = private_chat(ANN)
    for text in ("hello", "remember: tea is good", "calc 1+1"):
        await bot.say(ANN, ann, text)
    target = (await bot.step_ids(ann, 1))[-1]
    [asked] = await bot.say(ANN, ann, f"/replay {target[:8]}")
    assert asked.text.startswith(f"Restore this chat to turn 1, step 0 ({target[:8]})?")
    assert [label for label, _ in asked.buttons()] == [YES, CANCEL]
    assert [r.turn_index for r in await bot.core.store.transcript.transcript((await bot.chat(ann)).id)][-1] == 3  # not yet
    [done] = await bot.press(ANN, asked, YES)
    assert done.text.startswith("Restored this chat to turn 1, step 0.")
    await bot.fake.wait_for(lambda: "reply_markup" not in asked.message)  # the question's buttons are gone
    chat = await bot.chat(ann)
    assert [r.text for r in await bot.core.store.transcript.transcript(chat.id)] == ["hello", 'You said: "hello". I know no facts yet.']
    assert [f.text for f in await bot.core.store.memories.facts(chat.id)] == []
    [after] = await bot.say(ANN, ann, "what now?")
    assert after.text == 'You said: "what now?". I know no facts yet.'


async def test_clear_asks_then_deletes_the_steps_and_cancel_changes_nothing(bot: Bot) -> None:
    ann = private_chat(ANN)
    await bot.say(ANN, ann, "hello")
    chat = await bot.chat(ann)
    [asked] = await bot.say(ANN, ann, "/replay clear")
    [cancelled] = await bot.press(ANN, asked, CANCEL)
    assert cancelled.text == "Cancelled: nothing changed." and await bot.core.snapshots.list_steps(chat.id)
    [asked] = await bot.say(ANN, ann, "/replay clear")
    assert asked.text.startswith("Delete this chat’s saved steps (")
    [done] = await bot.press(ANN, asked, YES)
    assert done.text.startswith("Deleted this chat’s saved steps: ")
    assert await bot.core.snapshots.list_steps(chat.id) == []
    assert len(await bot.core.store.transcript.transcript(chat.id)) == 2  # the conversation itself stays


async def test_fork_makes_a_chat_owned_by_the_telegram_user_and_answers_with_its_link(bot: Bot) -> None:
    ann = private_chat(ANN)
    await bot.say(ANN, ann, "hello")
    await bot.say(ANN, ann, "calc 1+1")
    target = (await bot.step_ids(ann, 1))[-1]
    [asked] = await bot.say(ANN, ann, f"/fork {target[:8]}")
    assert asked.text.startswith(f"Fork turn 1, step 0 ({target[:8]}) into a new chat, owned by you?")
    [done] = await bot.press(ANN, asked, YES)
    fork_id = link_target(done.text)
    assert done.text.startswith("Forked turn 1, step 0 into a new chat")
    owner = await bot.kazma_user(ANN)
    assert fork_id in [c.id for c in await bot.core.chats.list(owner)]
    assert (await bot.core.chats.owned(owner, fork_id)).forked_from["thread_id"] == (await bot.chat(ann)).id


async def test_a_linked_telegram_user_acts_as_the_existing_kazma_user(bot: Bot) -> None:
    maya = await bot.core.store.users.add_user("maya")
    await UserAdmin(bot.core).link("maya", f"telegram:{BOB['id']}")
    await bot.say(BOB, private_chat(BOB), "hello")
    assert [c.title for c in await bot.core.chats.list(maya)] == ["Telegram: Bob"]
    assert await bot.core.store.users.user_by_name(f"telegram:{BOB['id']}") is None  # no second user was made


# --- forks in topics ----------------------------------------------------------------------

async def fork_step(bot: Bot, user: dict[str, Any], chat: dict[str, Any], words: str = "") -> tuple[Sent, str]:
    """Two turns in a chat, then /fork of the first one's step, confirmed: the answer and the step."""
    await bot.say(user, chat, "@KazmaBot hello" if chat["type"] != "private" else "hello")
    await bot.say(user, chat, "@KazmaBot calc 1+1" if chat["type"] != "private" else "calc 1+1")
    target = (await bot.step_ids(chat, 1))[-1]
    [asked] = await bot.say(user, chat, f"/fork {target[:8]} {words}".strip())
    before = len(bot.fake.to(chat["id"]))
    bot.fake.press(user, asked, YES)
    outside = lambda: [s for s in bot.fake.to(chat["id"])[before:] if s.thread_id is None]  # noqa: E731
    [done] = await bot.fake.wait_for(outside)
    return done, target


async def test_a_fork_in_a_group_with_topics_opens_a_topic_that_continues_the_fork(bot: Bot) -> None:
    bot.fake.members[(FORUM["id"], CY["id"])] = "administrator"
    done, _target = await fork_step(bot, ANN, FORUM)
    [topic] = bot.fake.topics
    assert (topic.chat_id, topic.name) == (FORUM["id"], "Telegram: Forum (fork)")
    assert done.text.startswith("Forked turn 1, step 0 into a new chat, “Telegram: Forum (fork)”: it continues in the topic")
    fork_id = link_target(done.text)
    [intro] = bot.fake.in_topic(FORUM["id"], topic.message_thread_id)
    assert intro.text.startswith("Forked from “Telegram: Forum”, turn 1, step 0. This is a new chat of its own")
    assert (await bot.chat(FORUM, topic.message_thread_id)).id == fork_id
    # Everything said in the fork's topic is the fork's: no mention needed there (elsewhere in the group, it is).
    [answer] = await bot.say(BOB, FORUM, "and then?", thread_id=topic.message_thread_id)
    assert answer.thread_id == topic.message_thread_id
    assert answer.text == 'You said: "and then?". I know no facts yet.'
    fork = await bot.core.store.transcript.transcript(fork_id)
    assert [r.text for r in fork][-2:] == ["and then?", answer.text] and fork[0].text == "hello"
    source = await bot.chat(FORUM)
    assert "and then?" not in [r.text for r in await bot.core.store.transcript.transcript(source.id)]
    # /replay in the topic acts on the fork, with the group's rules: a member is refused, an admin restores.
    bot.fake.message(ANN, FORUM, "people talking in the group")
    bot.fake.message(ANN, FORUM, "/replay@OtherBot list", thread_id=topic.message_thread_id)
    [listed] = await bot.say(BOB, FORUM, "/replay list", thread_id=topic.message_thread_id)
    assert listed.thread_id == topic.message_thread_id and "Turn 2: and then?" in listed.text
    fork_first = [s.id for s in await bot.core.snapshots.list_steps(fork_id) if s.turn_index == 1][-1]
    [refused] = await bot.say(BOB, FORUM, f"/replay {fork_first[:8]}", thread_id=topic.message_thread_id)
    assert refused.text.startswith("Only this chat's owner or the group's admins can restore or clear it.")
    [asked] = await bot.say(CY, FORUM, f"/replay {fork_first[:8]}", thread_id=topic.message_thread_id)
    [restored] = await bot.press(CY, asked, YES)
    assert restored.thread_id == topic.message_thread_id and restored.text.startswith("Restored this chat to turn 1, step 0.")
    assert [r.text for r in await bot.core.store.transcript.transcript(fork_id)][-1] != answer.text
    assert len(await bot.core.store.transcript.transcript(source.id)) == 4  # the original is not touched


async def test_a_fork_says_why_it_has_no_topic_and_offers_the_web_link(bot: Bot) -> None:
    done, _ = await fork_step(bot, ANN, private_chat(ANN))
    assert done.text.startswith("Forked turn 1, step 0 into a new chat, “Telegram: Ann (fork)”. This chat has no topics")
    assert link_target(done.text) and bot.fake.called("createForumTopic") == []
    done, _ = await fork_step(bot, ANN, TEAM)
    assert "This chat has no topics, so it has no topic here: turn topics on" in done.text and link_target(done.text)
    bot.fake.no_topic_rights.add(FORUM["id"])
    done, _ = await fork_step(bot, ANN, FORUM)
    assert "Kazma may not open threads or topics here: ask an admin" in done.text and link_target(done.text)
    assert [c.status for c in bot.fake.called("createForumTopic")] == [200] and bot.fake.topics == []


async def test_a_private_chat_with_topics_turned_on_gets_a_topic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async with serve_fake_telegram(TOKEN) as fake:
        fake.bot["has_topics_enabled"] = True
        async with telegram_bot_running(monkeypatch, tmp_path, fake=fake) as bot:
            done, _ = await fork_step(bot, ANN, private_chat(ANN))
            [topic] = bot.fake.topics
            assert "it continues in the topic “Telegram: Ann (fork)”" in done.text
            [answer] = await bot.say(ANN, private_chat(ANN), "go on", thread_id=topic.message_thread_id)
            fork = await bot.chat(private_chat(ANN), topic.message_thread_id)
            assert fork.id == link_target(done.text) and answer.thread_id == topic.message_thread_id


async def test_fork_here_keeps_the_fork_out_of_a_topic(bot: Bot) -> None:
    done, _ = await fork_step(bot, ANN, FORUM, "here")
    assert done.text.startswith("Forked turn 1, step 0 into a new chat, “Telegram: Forum (fork)”. Open it:")
    assert bot.fake.called("createForumTopic") == [] and bot.fake.topics == []


# --- groups --------------------------------------------------------------------------------

async def test_only_the_chat_owner_can_press_an_approval_card(bot: Bot) -> None:
    [card] = await bot.say(ANN, TEAM, "@KazmaBot write a.txt: hi")
    assert card.text == "Kazma asks to write a file\nIt will write 2 B to a.txt in your files:\n\nhi"
    assert [label for label, _ in card.buttons()] == [APPROVE, "Deny"]
    assert all(len(data.encode()) <= 64 for _, data in card.buttons())
    [refused] = await bot.press(BOB, card, APPROVE)
    assert refused.text == "Only this chat's owner can answer its approvals."
    assert not written(bot.settings, "a.txt").exists() and card.buttons()
    toast = bot.fake.called("answerCallbackQuery")[-1].params
    assert toast["text"] == "Only this chat's owner can answer its approvals."
    [approved] = await bot.press(ANN, card, APPROVE)
    assert approved.text == "Wrote 2 bytes to a.txt."
    assert written(bot.settings, "a.txt").read_text() == "hi"
    await bot.fake.wait_for(lambda: not card.buttons())  # answered: its buttons are gone


async def test_in_a_group_a_member_is_refused_a_restore_and_audited_while_an_admin_restores(bot: Bot) -> None:
    bot.fake.members[(TEAM["id"], CY["id"])] = "administrator"
    await bot.say(ANN, TEAM, "@KazmaBot hello")
    await bot.say(ANN, TEAM, "@KazmaBot calc 1+1")
    assert bot.fake.called("getChatMember") == []  # a plain message does not ask who administers the chat
    target = (await bot.step_ids(TEAM, 1))[-1]
    chat = await bot.chat(TEAM)
    [refused] = await bot.say(BOB, TEAM, f"/replay {target[:8]}")
    assert refused.text.startswith("Only this chat's owner or the group's admins can restore or clear it.")
    [asked] = await bot.say(ANN, TEAM, f"/replay {target[:8]}")
    [pressed] = await bot.press(BOB, asked, YES)  # the owner's question, answered by a member
    assert pressed.text == refused.text and len(await bot.core.store.transcript.transcript(chat.id)) == 4
    bob = await bot.kazma_user(BOB)
    audit = [(r.user_id, r.action, r.outcome, r.surface) for r in await bot.core.audit.rows(chat.id)]
    assert audit.count((bob.id, "restore", "forbidden", "telegram")) == 2
    [forked] = await bot.press(BOB, (await bot.say(BOB, TEAM, f"/fork {target[:8]}"))[0], YES)
    assert link_target(forked.text) in [c.id for c in await bot.core.chats.list(bob)]  # anyone may fork
    [asked] = await bot.say(CY, TEAM, f"/replay@KazmaBot {target[:8]}")
    [done] = await bot.press(CY, asked, YES)
    assert done.text.startswith("Restored this chat to turn 1, step 0.")
    assert len(await bot.core.store.transcript.transcript(chat.id)) == 2
    assert {c.params["user_id"] for c in bot.fake.called("getChatMember")} == {BOB["id"], ANN["id"], CY["id"]}


async def test_in_a_group_an_admin_undoes_a_restore_and_a_member_is_refused(bot: Bot) -> None:
    """A group's admin may undo a restore as they may restore: Telegram was asked who administers
    the group for /replay <step> and /replay clear only, so an admin's /replay undo was refused."""
    bot.fake.members[(TEAM["id"], CY["id"])] = "administrator"
    await bot.say(ANN, TEAM, "@KazmaBot hello")
    await bot.say(ANN, TEAM, "@KazmaBot calc 1+1")
    chat = await bot.chat(TEAM)
    target = (await bot.step_ids(TEAM, 1))[-1]
    [asked] = await bot.say(CY, TEAM, f"/replay {target[:8]}")
    await bot.press(CY, asked, YES)
    assert len(await bot.core.store.transcript.transcript(chat.id)) == 2
    [refused] = await bot.say(BOB, TEAM, "/replay undo")
    assert refused.text.startswith("Only this chat's owner or the group's admins can restore or clear it.")
    [undone] = await bot.say(CY, TEAM, "/replay undo")
    assert undone.text.startswith("Undid the last restore")
    assert len(await bot.core.store.transcript.transcript(chat.id)) == 4


async def test_a_fork_of_a_group_chat_writes_only_into_the_forkers_own_files(bot: Bot) -> None:
    """Issue 14: a fork starts with no access to another user's files (there was one workspace for all)."""
    [card] = await bot.say(ANN, TEAM, "@KazmaBot write ok.txt: mine")
    assert "to ok.txt in your files" in card.text
    [approved] = await bot.press(ANN, card, APPROVE)
    assert approved.text == "Wrote 4 bytes to ok.txt."
    target = (await bot.step_ids(TEAM, 1))[-1]
    [forked] = await bot.press(BOB, (await bot.say(BOB, TEAM, f"/fork {target[:8]}"))[0], YES)
    fork_id = link_target(forked.text)
    ann, bob = await bot.kazma_user(ANN), await bot.kazma_user(BOB)
    # Bob goes on in his fork (in the web chat, which runs the same turn runner).
    waiting = await bot.core.turns.send(fork_id, "write ok.txt: BOB")
    assert waiting.gates[0]["args"]["path"] == "ok.txt"
    done = await bot.core.turns.decide(fork_id, waiting.gates[0]["card_id"], "approve", bob.id)
    assert done.reply == "Wrote 3 bytes to ok.txt."
    assert (bot.settings.files_of(ann.id) / "ok.txt").read_text() == "mine"
    assert (bot.settings.files_of(bob.id) / "ok.txt").read_text() == "BOB"


async def test_in_a_group_only_messages_for_this_bot_are_answered(bot: Bot) -> None:
    bot.fake.message(ANN, TEAM, "just chatting with people")
    bot.fake.message(ANN, TEAM, "/replay@OtherBot list")
    [answer] = await bot.say(ANN, TEAM, "@KazmaBot hello")
    assert answer.text == 'You said: "hello". I know no facts yet.'
    assert len(bot.fake.to(TEAM["id"])) == 1
    [again] = await bot.say(BOB, TEAM, "and a reply", reply_to=answer)
    assert again.text == 'You said: "and a reply". I know no facts yet.'
    [topic] = await bot.say(BOB, TEAM, "@KazmaBot in the topic", thread_id=77)
    assert topic.thread_id == 77 and (await bot.chat(TEAM, 77)).id != (await bot.chat(TEAM)).id


# --- robustness ----------------------------------------------------------------------------

async def test_an_answer_telegram_refuses_with_a_proxy_page_or_a_5xx_is_sent_again(bot: Bot) -> None:
    bot.fake.hiccup("sendMessage")  # a proxy's HTML 502
    bot.fake.hiccup("sendMessage", 500, '{"ok": false, "error_code": 500, "description": "Internal Server Error"}',
                    "application/json")
    [answer] = await bot.say(ANN, private_chat(ANN), "hello")
    assert answer.text == 'You said: "hello". I know no facts yet.'
    assert [c.status for c in bot.fake.called("sendMessage")] == [502, 500, 200] and len(bot.fake.sent) == 1


async def test_an_answer_telegram_does_not_take_in_time_is_sent_again(bot: Bot) -> None:
    bot.fake.stall("sendMessage", 6)  # past python-telegram-bot's 5 s read timeout
    [answer] = await bot.say(ANN, private_chat(ANN), "hello", timeout=20)
    assert answer.text == 'You said: "hello". I know no facts yet.' and len(bot.fake.sent) == 1
    assert [c.status for c in bot.fake.called("sendMessage")] == [504, 200]


async def test_when_telegram_will_not_say_who_administers_a_group_the_person_is_answered_as_a_member(bot: Bot) -> None:
    await bot.say(ANN, TEAM, "@KazmaBot hello")
    target = (await bot.step_ids(TEAM, 1))[-1]
    bot.fake.members[(TEAM["id"], CY["id"])] = "administrator"
    bot.fake.hiccup("getChatMember", 400, "<html>Bad Request</html>")
    [refused] = await bot.say(CY, TEAM, f"/replay {target[:8]}")
    assert refused.text.startswith("Only this chat's owner or the group's admins can restore or clear it.")


async def test_messages_of_one_chat_are_answered_in_the_order_they_were_sent(bot: Bot) -> None:
    ann = private_chat(ANN)
    sent = [bot.fake.message(ANN, ann, text) for text in ("sleep 0.3", "first", "second")]
    answers = await bot.fake.replies(ANN["id"], 0, 3)
    assert [a.reply_to for a in answers] == [m["message_id"] for m in sent]


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")  # PTB's own RetryAfter
async def test_flood_control_is_waited_out_and_the_message_still_delivered(bot: Bot) -> None:
    bot.fake.flood("sendMessage", 1)
    [answer] = await bot.say(ANN, private_chat(ANN), "hello")
    assert answer.text == 'You said: "hello". I know no facts yet.'
    assert [c.status for c in bot.fake.called("sendMessage")] == [429, 200]
    assert len(bot.fake.sent) == 1


async def test_an_action_too_long_for_a_button_travels_by_a_key_and_an_unknown_key_changes_nothing(bot: Bot) -> None:
    ann = private_chat(ANN)
    await bot.say(ANN, ann, "hello")
    action = "confirm:/replay clear" + " " * 60  # over Telegram's 64 bytes of callback data
    app = bot.adapter._app
    assert app is not None
    await bot.adapter._post(app.bot, ANN["id"], None, [Reply("Sure?", "confirm", buttons=[Button(YES, action)])], None)
    [asked] = await bot.fake.replies(ANN["id"], 1)
    [(_, key)] = asked.buttons()
    assert len(key.encode()) <= 64
    [done] = await bot.press(ANN, asked, YES)
    assert done.text.startswith("Deleted this chat’s saved steps: ")
    bot.fake.press(ANN, Sent(asked.chat_id, "", "", None, None, None, {**asked.message, "reply_markup": {
        "inline_keyboard": [[{"text": YES, "callback_data": "#not-a-key-we-made"}]]}}), YES)
    [cancelled] = await bot.fake.replies(ANN["id"], 3)
    assert cancelled.text == "Cancelled: nothing changed."


async def test_no_telegram_id_reaches_a_saved_step(bot: Bot) -> None:
    await bot.say(ANN, private_chat(ANN), "hello")
    await bot.say(ANN, TEAM, "@KazmaBot remember: the team meets on monday")
    await bot.say(BOB, TEAM, "@KazmaBot calc 6*7")
    target = (await bot.step_ids(TEAM, 1))[-1]
    await bot.press(ANN, (await bot.say(ANN, TEAM, f"/fork {target[:8]}"))[0], YES)
    ids = {str(u["id"]) for u in (ANN, BOB)} | {str(TEAM["id"]), str(TEAM["id"])[4:]}
    threads = await bot.core.snapshots.threads()
    assert len(threads) == 3
    for thread in threads:
        for info in await bot.core.snapshots.list_steps(thread.chat_id):
            step = await bot.core.snapshots.get(thread.chat_id, info.id)
            assert step is not None
            saved = orjson.dumps(step.state).decode()
            assert not [i for i in ids if i in saved], saved


async def test_webhook_mode_takes_updates_with_the_secret_and_refuses_a_wrong_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram/hook"
    async with telegram_bot_running(monkeypatch, tmp_path, mode="webhook", webhook_secret="s3cret-Token",
                                    webhook_url=url, webhook_port=str(port)) as bot:
        [registered] = bot.fake.called("setWebhook")
        assert (registered.params["url"], registered.params["secret_token"]) == (url, "s3cret-Token")
        update = {"update_id": 1, "message": {"message_id": 10, "date": 0, "chat": private_chat(ANN), "from": ANN,
                                              "text": "hello"}}
        async with httpx.AsyncClient(trust_env=False, timeout=10) as http:
            wrong = await http.post(url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "guess"})
            missing = await http.post(url, json=update)
            assert (wrong.status_code, missing.status_code) == (403, 403)
            right = await http.post(url, json=update, headers={"X-Telegram-Bot-Api-Secret-Token": "s3cret-Token"})
            assert right.status_code == 200
        [answer] = await bot.fake.replies(ANN["id"], 0)
        assert answer.text == 'You said: "hello". I know no facts yet.' and len(bot.fake.sent) == 1
        assert bot.fake.called("getUpdates") == []


async def test_webhook_mode_without_a_secret_refuses_to_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async with serve_fake_telegram(TOKEN) as fake:
        settings = telegram_settings(monkeypatch, tmp_path, fake, mode="webhook", webhook_url="https://x.test/hook")
        core = await Core.open(settings)
        try:
            adapter = telegram_bot.build(Gateway(core, RewindService(core)), settings)
            assert adapter is not None
            with pytest.raises(telegram_bot.TelegramMisconfigured, match="KAZMA_TELEGRAM__WEBHOOK_SECRET"):
                await asyncio.wait_for(adapter.run(), 10)
            assert fake.calls == []
        finally:
            await core.close()


async def test_a_rejected_token_makes_run_raise_and_the_web_keeps_serving(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bad = "5550001111:AAH-revoked"
    async with serve_fake_telegram(TOKEN) as fake:
        settings = telegram_settings(monkeypatch, tmp_path, fake, token=bad)
        core = await Core.open(settings)
        try:
            adapter = telegram_bot.build(Gateway(core, RewindService(core)), settings)
            assert adapter is not None
            with pytest.raises(telegram_bot.TelegramUnavailable, match="rejected the bot token") as raised:
                await asyncio.wait_for(adapter.run(), 10)
            assert bad not in str(raised.value)
        finally:
            await core.close()
        caplog.set_level(logging.INFO)
        async with serve_kazma(settings) as server:
            await fake.wait_for(lambda: len(fake.called("getMe")) >= 2)  # the supervisor ran the bot
            async with server.client() as http:
                assert (await http.get("/healthz")).json()["status"] == "ok"
            await fake.wait_for(lambda: [r for r in caplog.records if r.name == "bots.base"])
            lines = [r.getMessage() for r in caplog.records if r.name == "bots.base"]
            assert lines[0].startswith("telegram bot stopped (TelegramUnavailable: Telegram rejected the bot token")
        assert {c.status for c in fake.calls} == {401}
        assert not [r for r in caplog.records if bad in r.getMessage()]


async def test_a_token_revoked_while_running_makes_run_raise(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(telegram_bot, "WATCH_SECONDS", 0.1)
    async with telegram_bot_running(monkeypatch, tmp_path) as bot:
        bot.fake.token = "5550001111:AAH-another-token"  # revoked with @BotFather
        with pytest.raises(telegram_bot.TelegramUnavailable, match="rejected the bot token"):
            await asyncio.wait_for(asyncio.shield(bot.task), 10)
        assert not bot.adapter.serving.is_set()


async def test_an_unreachable_bot_api_makes_run_raise(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KAZMA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KAZMA_TELEGRAM__TOKEN", TOKEN)
    monkeypatch.setenv("KAZMA_TELEGRAM__BASE_URL", f"http://127.0.0.1:{free_port()}/bot")
    settings = load_settings()
    core = await Core.open(settings)
    try:
        adapter = telegram_bot.build(Gateway(core, RewindService(core)), settings)
        assert adapter is not None
        with pytest.raises(telegram_bot.TelegramUnavailable, match="could not be used"):
            await asyncio.wait_for(adapter.run(), 20)
    finally:
        await core.close()


async def test_no_token_means_no_telegram_bot(settings: Settings, core: Core) -> None:
    assert telegram_bot.build(Gateway(core, RewindService(core)), settings) is None


async def test_stop_ends_a_running_turn_from_the_chat_and_the_chat_goes_on(bot: Bot) -> None:
    ann = private_chat(ANN)
    before = len(bot.fake.to(ann["id"]))
    bot.fake.message(ANN, ann, "sleep 600")  # its answer comes only once it is stopped
    chat_key = f"telegram:{ann['id']}"

    async def running() -> bool:
        chat = await bot.core.store.places.bound_chat(chat_key)
        return chat is not None and bot.core.turns.stops.is_running(chat.id)

    for _ in range(500):
        if await running():
            break
        await asyncio.sleep(0.02)
    await bot.say(ANN, ann, "/stop", count=2)  # /stop is answered at once, and so is the stopped turn
    texts = {r.text for r in bot.fake.to(ann["id"])[before:]}
    assert texts == {
        "Stopped the running turn. What it saved so far stays; send a message to go on.",
        "Stopped before Kazma answered, as you asked. Send a message to go on.",
    }
    [after] = await bot.say(ANN, ann, "calc 4+4")
    assert after.text == "4+4 = 8"
