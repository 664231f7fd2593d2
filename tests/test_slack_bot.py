"""Slack end to end: the real Kazma server and its Slack adapter (slack-bolt) against a fake Slack.

Requests reach the server's own /slack/events route, signed as Slack signs them (or
come over the fake's Socket Mode websocket); answers are read off the fake, where the
adapter posts them through the real slack_sdk client or the response URL.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import orjson
import pytest

from bots.gateway import Gateway
from bots.slack_bot import SlackAdapter, SlackUnavailable
from kazma_core.core import Core
from kazma_core.settings import SlackSettings
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings, written
from tests.fakes.slack_server import FakeSlack, serve_fake_slack
from tests.http_server import RunningServer, serve_kazma

BOT_TOKEN, APP_TOKEN, SECRET = "xoxb-kazma-test", "xapp-kazma-test", "kazma-signing-secret"
TEAM = "T0KAZMA01"
ANN, BOB, CY, LAYLA = "U0ANN00001", "U0BOB00002", "U0CYADM003", "U0LAYLA004"
DM, CHANNEL = "D0ANNDM001", "C0GENERAL1"
THREAD = "1700000000.000100"
STEP_ID = re.compile(r"· ([0-9a-f]{8})")
VENV_BIN = Path(sys.executable).parent


@dataclass
class Slack:
    """A test's hands: the fake Slack, the Kazma server, and signed requests to its /slack/events."""

    fake: FakeSlack
    server: RunningServer
    http: httpx.AsyncClient

    async def post(self, body: str, content_type: str, secret: str = SECRET, ts: int | None = None) -> httpx.Response:
        stamp = str(int(time.time()) if ts is None else ts)
        signature = "v0=" + hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
        headers = {"Content-Type": content_type, "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}
        return await self.http.post("/slack/events", content=body.encode(), headers=headers)

    async def command(self, user: str, text: str, command: str = "/replay", channel: str = DM) -> str:
        """A slash command; the response URL its answers go to."""
        url = self.fake.response_url()
        form = {
            "token": "unused", "team_id": TEAM, "team_domain": "kazma", "channel_id": channel,
            "channel_name": "directmessage" if channel.startswith("D") else "general", "user_id": user,
            "user_name": self.fake.users[user].name, "command": command, "text": text, "api_app_id": "A0KAZMA01",
            "response_url": url, "trigger_id": uuid.uuid4().hex,
        }
        response = await self.post(urlencode(form), "application/x-www-form-urlencoded")
        assert response.status_code == 200, response.text
        return url

    async def event(self, event: dict[str, Any]) -> None:
        body = {
            "token": "unused", "team_id": TEAM, "api_app_id": "A0KAZMA01", "type": "event_callback",
            "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()),
            "event": {"ts": f"{time.time():.6f}", "team": TEAM, **event},
        }
        response = await self.post(json.dumps(body), "application/json")
        assert response.status_code == 200, response.text

    async def dm(self, user: str, text: str, channel: str = DM, thread_ts: str | None = None) -> None:
        event = {"type": "message", "channel_type": "im", "channel": channel, "user": user, "text": text}
        await self.event({**event, **({"thread_ts": thread_ts} if thread_ts else {})})

    async def mention(self, user: str, text: str, thread_ts: str | None = None) -> None:
        event = {"type": "app_mention", "channel": CHANNEL, "user": user, "text": f"<@{self.fake.bot_user_id}> {text}"}
        await self.event({**event, **({"thread_ts": thread_ts} if thread_ts else {})})

    async def press(self, user: str, value: str, channel: str = DM, ephemeral: bool = True, message: dict[str, Any] | None = None) -> str:
        """A button of a message; the response URL its answers go to."""
        ts = message["ts"] if message is not None else "1700000001.000001"
        url = self.fake.response_url(None if ephemeral else (channel, ts))
        payload: dict[str, Any] = {
            "type": "block_actions", "team": {"id": TEAM, "domain": "kazma"},
            "user": {"id": user, "username": self.fake.users[user].name, "team_id": TEAM},
            "api_app_id": "A0KAZMA01", "trigger_id": uuid.uuid4().hex, "response_url": url,
            "channel": {"id": channel, "name": "directmessage" if channel.startswith("D") else "general"},
            "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": ephemeral},
            "actions": [{"type": "button", "action_id": "kazma:0", "block_id": "b", "value": value, "action_ts": str(time.time())}],
        }
        if message is not None:
            payload["message"] = message
        response = await self.post(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
        assert response.status_code == 200, response.text
        return url

    async def answers(self, url: str, count: int = 1) -> list[dict[str, Any]]:
        return await self.fake.wait_for(lambda: (found := self.fake.answers(url)) and len(found) >= count and found)

    async def posts(self, count: int, *methods: str) -> list[dict[str, Any]]:
        return await self.fake.wait_for(lambda: (found := self.fake.posts(*methods)) and len(found) >= count and found)

    async def step_ids(self, user: str, channel: str = DM) -> list[str]:
        (listing,) = await self.answers(await self.command(user, "list", channel=channel))
        return STEP_ID.findall(text_of(listing))


def text_of(message: dict[str, Any]) -> str:
    blocks = message.get("blocks") or []
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    return "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")


def buttons_of(message: dict[str, Any]) -> dict[str, str]:
    """Button label -> value."""
    return {e["text"]["text"]: e["value"] for b in message.get("blocks") or [] if b["type"] == "actions" for e in b["elements"]}


def add_people(fake: FakeSlack) -> None:
    fake.add_user(ANN, "ann")
    fake.add_user(BOB, "bob")
    fake.add_user(CY, "cy", is_admin=True)
    fake.add_user(LAYLA, "layla", locale="ar-SA")


@pytest.fixture
async def slack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AsyncIterator[Slack]:
    async with serve_fake_slack(BOT_TOKEN) as fake:
        add_people(fake)
        monkeypatch.setenv("KAZMA_SLACK__BOT_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("KAZMA_SLACK__SIGNING_SECRET", SECRET)
        monkeypatch.setenv("KAZMA_SLACK__API_URL", fake.api_url)
        async with serve_kazma(make_settings(tmp_path / "data")) as server, server.client() as http:
            await fake.wait_for(lambda: fake.called("auth.test"))  # the bot checked its token
            yield Slack(fake, server, http)


async def talk(slack: Slack, user: str, *texts: str, channel: str = DM) -> None:
    """DM messages, one at a time, each waited for until its answer is posted."""
    for text in texts:
        before = len(slack.fake.posts())
        await slack.dm(user, text, channel)
        await slack.posts(before + 1)


# -- conversation ----------------------------------------------------------------------------


async def test_a_dm_message_gets_the_agents_answer_as_block_kit(slack: Slack) -> None:
    await slack.dm(ANN, "hello there")
    (post,) = await slack.posts(1)
    assert post["channel"] == DM and "thread_ts" not in post
    assert text_of(post) == 'You said: "hello there". I know no facts yet.'
    assert post["blocks"][0]["type"] == "section" and post["blocks"][0]["text"]["type"] == "mrkdwn"
    chat = await slack.server.core.store.places.bound_chat(f"slack:{DM}")
    owner = await slack.server.core.store.users.user_for_identity(f"slack:{TEAM}:{ANN}")
    assert chat is not None and owner is not None and chat.owner_id == owner.id


async def test_an_app_mention_in_a_thread_answers_in_that_thread_which_is_its_own_chat(slack: Slack) -> None:
    await slack.mention(ANN, "remember: the launch is on Friday", thread_ts=THREAD)
    (in_thread,) = await slack.posts(1)
    assert (in_thread["channel"], in_thread["thread_ts"]) == (CHANNEL, THREAD)
    await slack.mention(ANN, "what do you know?")
    top_level = (await slack.posts(2))[1]
    assert top_level["channel"] == CHANNEL and "thread_ts" not in top_level
    assert text_of(top_level) == 'You said: "what do you know?". I know no facts yet.'  # another chat
    places = slack.server.core.store.places
    thread_chat, channel_chat = await places.bound_chat(f"slack:{CHANNEL}:{THREAD}"), await places.bound_chat(f"slack:{CHANNEL}")
    assert thread_chat is not None and channel_chat is not None and thread_chat.id != channel_chat.id


async def test_a_bad_signature_or_a_stale_timestamp_is_refused_with_401(slack: Slack) -> None:
    form = urlencode({"command": "/replay", "text": "list", "team_id": TEAM, "user_id": ANN, "channel_id": DM,
                      "response_url": slack.fake.response_url()})
    forged = await slack.post(form, "application/x-www-form-urlencoded", secret="not-the-secret")
    stale = await slack.post(form, "application/x-www-form-urlencoded", ts=int(time.time()) - 600)
    assert (forged.status_code, stale.status_code) == (401, 401)
    await slack.dm(ANN, "after the forgeries")
    await slack.posts(1)  # a signed request still goes through, and nothing else came before it
    assert slack.fake.responses == [] and len(slack.fake.posts()) == 1


# -- commands --------------------------------------------------------------------------------


async def test_replay_list_answers_only_the_asker_with_the_steps_turn_by_turn(slack: Slack) -> None:
    (empty,) = await slack.answers(await slack.command(ANN, "list"))
    assert (text_of(empty), empty["response_type"]) == ("No steps saved in this chat yet.", "ephemeral")
    await talk(slack, ANN, "hello", "calc 2+3")
    (listing,) = await slack.answers(await slack.command(ANN, "list"))
    text = text_of(listing)
    assert listing["response_type"] == "ephemeral"
    assert "Turn 1: hello" in text and "Turn 2: calc 2+3" in text and len(STEP_ID.findall(text)) >= 2


async def test_replay_with_an_eight_character_prefix_asks_then_the_confirm_button_restores(slack: Slack) -> None:
    await talk(slack, ANN, "hello", "calc 2+3")
    ids = await slack.step_ids(ANN)
    (question,) = await slack.answers(await slack.command(ANN, ids[0]))
    assert question["response_type"] == "ephemeral" and text_of(question).startswith("Restore this chat to turn 1, step 0")
    buttons = buttons_of(question)
    assert set(buttons) == {"Yes, do it", "Cancel"} and buttons["Yes, do it"].startswith(f"confirm:/replay {ids[0]}")
    gone, restored = await slack.answers(await slack.press(ANN, buttons["Yes, do it"]), 2)
    assert gone["delete_original"] is True  # the private question goes; the result is for the channel
    assert restored["response_type"] == "in_channel" and text_of(restored).startswith("Restored this chat to turn 1, step 0.")
    assert await slack.step_ids(ANN) == ids[:1]


async def test_replay_show_and_compare_answer_only_the_asker(slack: Slack) -> None:
    await talk(slack, ANN, "hello", "calc 2+3")
    ids = await slack.step_ids(ANN)
    (shown,) = await slack.answers(await slack.command(ANN, f"show {ids[-1]}"))
    assert shown["response_type"] == "ephemeral" and text_of(shown).startswith("turn 2, step ")
    assert "calc 2+3" in text_of(shown)
    (compared,) = await slack.answers(await slack.command(ANN, f"compare {ids[0]} {ids[-1]}"))
    assert compared["response_type"] == "ephemeral" and "added" in text_of(compared)


async def test_replay_clear_asks_cancel_keeps_the_steps_and_confirm_deletes_them(slack: Slack) -> None:
    await talk(slack, ANN, "hello")
    count = len(await slack.step_ids(ANN))
    (question,) = await slack.answers(await slack.command(ANN, "clear"))
    assert text_of(question).startswith(f"Delete this chat’s saved steps ({count})?")
    (cancelled,) = await slack.answers(await slack.press(ANN, buttons_of(question)["Cancel"]))
    assert (text_of(cancelled), cancelled["replace_original"]) == ("Cancelled: nothing changed.", True)
    assert len(await slack.step_ids(ANN)) == count
    (question,) = await slack.answers(await slack.command(ANN, "clear"))
    _, cleared = await slack.answers(await slack.press(ANN, buttons_of(question)["Yes, do it"]), 2)
    assert text_of(cleared) == f"Deleted this chat’s saved steps: {count}."
    assert await slack.step_ids(ANN) == []


async def test_fork_makes_a_chat_of_the_linked_kazma_user_shown_in_their_sidebar(slack: Slack, tmp_path: Path) -> None:
    _, token = await slack.server.add_user("ann")
    linked = await asyncio.create_subprocess_exec(
        str(VENV_BIN / "kazma"), "users", "link", "ann", f"slack:{TEAM}:{ANN}", "--data-dir", str(tmp_path / "data"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(linked.communicate(), 20)
    assert linked.returncode == 0, err.decode()
    await talk(slack, ANN, "hello")
    ids = await slack.step_ids(ANN)
    (question,) = await slack.answers(await slack.command(ANN, ids[0], command="/fork"))
    assert text_of(question).startswith("Fork turn 1, step 0")
    _, forked = await slack.answers(await slack.press(ANN, buttons_of(question)["Yes, do it"]), 2)
    text = text_of(forked)
    assert text.startswith("Forked turn 1, step 0 into a new chat")
    thread = re.search(r"\?thread=([\w-]+)", text)
    assert thread is not None
    async with slack.server.client(token) as http:
        chats = (await http.get("/api/chats")).json()["chats"]
    assert thread.group(1) in [c["thread_id"] for c in chats]
    (origin,) = [c for c in chats if c["thread_id"] != thread.group(1)]
    assert origin["thread_id"] == (await slack.server.core.store.places.bound_chat(f"slack:{DM}")).id  # type: ignore[union-attr]
    (fork,) = [c for c in chats if c["thread_id"] == thread.group(1)]
    assert fork["lives_in"] == {"platform": "slack", "place": "thread", "name": "Slack DM (fork)"}  # shown in the sidebar
    assert origin["lives_in"] == {"platform": "slack", "place": "chat", "name": ""}


async def fork_first_step(slack: Slack, user: str, channel: str = DM, words: str = "") -> dict[str, Any]:
    """/fork of the chat's first step, confirmed: the answer."""
    ids = await slack.step_ids(user, channel)
    (question,) = await slack.answers(await slack.command(user, f"{ids[0]} {words}".strip(), command="/fork", channel=channel))
    _, forked = await slack.answers(await slack.press(user, buttons_of(question)["Yes, do it"], channel), 2)
    return forked


async def test_fork_opens_a_thread_under_a_first_message_and_replies_in_it_continue_the_fork(slack: Slack) -> None:
    await talk(slack, ANN, "remember: tea is good", "calc 1+1")
    forked = await fork_first_step(slack, ANN)
    [opening] = [c for c in slack.fake.called("chat.postMessage") if text_of(c.args).startswith("Forked from")]
    assert opening.args["channel"] == DM and "thread_ts" not in opening.args
    assert text_of(opening.args).startswith("Forked from “Slack DM”, turn 1, step 0. This is a new chat of its own")
    assert text_of(forked).startswith("Forked turn 1, step 0 into a new chat, “Slack DM (fork)”: it continues in the thread")
    ts = opening.answer["ts"]
    fork = await slack.server.core.store.places.bound_chat(f"slack:{DM}:{ts}")
    assert fork is not None and fork.forked_from is not None and f"?thread={fork.id}" in text_of(forked)
    before = len(slack.fake.posts())
    await slack.dm(ANN, "what do you know?", thread_ts=ts)
    answer = (await slack.posts(before + 1))[-1]
    assert answer["thread_ts"] == ts and text_of(answer).startswith('You said: "what do you know?".')
    assert [r.text for r in await slack.server.core.store.transcript.transcript(fork.id)][-2] == "what do you know?"


async def test_in_a_channels_fork_thread_commands_sent_as_mentions_act_on_the_fork_with_the_channels_rules(slack: Slack) -> None:
    for n, text in enumerate(("hello", "calc 1+1"), start=1):
        await slack.mention(ANN, text)
        await slack.posts(n)
    source = await slack.server.core.store.places.bound_chat(f"slack:{CHANNEL}")
    assert source is not None
    forked = await fork_first_step(slack, ANN, CHANNEL)
    [opening] = [c for c in slack.fake.called("chat.postMessage") if text_of(c.args).startswith("Forked from")]
    assert opening.args["channel"] == CHANNEL and "“Slack channel (fork)”: it continues in the thread" in text_of(forked)
    assert "mention Kazma here to continue it" in text_of(opening.args)  # in channels, Slack sends Kazma mentions only
    ts = opening.answer["ts"]
    fork = await slack.server.core.store.places.bound_chat(f"slack:{CHANNEL}:{ts}")
    assert fork is not None
    await slack.mention(BOB, "and then?", thread_ts=ts)
    answer = await slack.fake.wait_for(lambda: [p for p in slack.fake.posts() if p.get("thread_ts") == ts])
    assert text_of(answer[0]) == 'You said: "and then?". I know no facts yet.'
    # Slack sends a slash command without its thread: in a thread, a command goes as a mention.
    await slack.mention(BOB, "/replay list", thread_ts=ts)
    listing = await slack.fake.wait_for(lambda: [p for p in slack.fake.posts("chat.postEphemeral") if p.get("thread_ts") == ts])
    assert "Turn 2: and then?" in text_of(listing[0]) and "calc 1+1" not in text_of(listing[0])
    fork_step = STEP_ID.findall(text_of(listing[0]))[0]
    await slack.mention(BOB, f"/replay {fork_step}", thread_ts=ts)
    refused = await slack.fake.wait_for(lambda: [p for p in slack.fake.posts("chat.postEphemeral")
                                                 if p.get("thread_ts") == ts and "Only this chat's owner" in text_of(p)])
    assert refused and len(await slack.server.core.store.transcript.transcript(fork.id)) == 4
    assert len(await slack.server.core.store.transcript.transcript(source.id)) == 4


async def test_fork_in_a_channel_kazma_may_not_post_in_says_so_and_fork_here_opens_no_thread(slack: Slack) -> None:
    await slack.mention(ANN, "hello")
    await slack.posts(1)
    slack.fake.fail_next("chat.postMessage", 200, '{"ok": false, "error": "not_in_channel"}', "application/json")
    forked = await fork_first_step(slack, ANN, CHANNEL)
    assert "Kazma may not open threads or topics here: ask an admin" in text_of(forked) and "?thread=" in text_of(forked)
    posts = len(slack.fake.called("chat.postMessage"))
    forked = await fork_first_step(slack, ANN, CHANNEL, "here")
    assert text_of(forked).startswith("Forked turn 1, step 0 into a new chat, “Slack channel (fork)”. Open it:")
    assert len(slack.fake.called("chat.postMessage")) == posts


async def test_the_slack_manifest_declares_every_command_the_app_answers(tmp_path: Path) -> None:
    printed = await asyncio.create_subprocess_exec(
        str(VENV_BIN / "kazma"), "slack-manifest", "--url", "https://kazma.example.org", "--data-dir", str(tmp_path / "data"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(printed.communicate(), 20)
    assert printed.returncode == 0, err.decode()
    manifest = json.loads(out)
    commands = {c["command"]: c for c in manifest["features"]["slash_commands"]}
    assert set(commands) == {"/replay", "/fork", "/reset", "/memory", "/help", "/stop"}
    assert commands["/fork"]["usage_hint"] == "<step> [here]" and "usage_hint" not in commands["/help"]
    assert {c["url"] for c in commands.values()} == {"https://kazma.example.org/slack/events"}
    assert manifest["settings"]["event_subscriptions"]["bot_events"] == ["app_mention", "message.im"]


# -- groups, approvals, language -------------------------------------------------------------


async def test_approval_buttons_answer_only_for_the_chats_owner(slack: Slack) -> None:
    await slack.mention(ANN, "write notes.txt: ship it")
    (card,) = await slack.posts(1)
    buttons = buttons_of(card)
    assert set(buttons) == {"Approve", "Deny"} and text_of(card).startswith("Kazma asks to write a file\nIt will write 7 B to notes.txt")
    message = {"type": "message", "ts": "1700000001.000001", "text": card["text"]}
    (refused,) = await slack.answers(await slack.press(BOB, buttons["Approve"], CHANNEL, ephemeral=False, message=message))
    assert refused["response_type"] == "ephemeral" and refused["replace_original"] is False
    assert text_of(refused) == "Only this chat's owner can answer its approvals."
    (done,) = await slack.answers(await slack.press(ANN, buttons["Approve"], CHANNEL, ephemeral=False, message=message))
    assert done["replace_original"] is True and done["response_type"] == "in_channel"
    assert "Wrote 7 bytes to notes.txt" in text_of(done) and buttons_of(done) == {}
    assert (written(slack.server.core.settings, "notes.txt")).read_text() == "ship it"


async def test_in_a_channel_a_members_restore_is_refused_and_audited_while_an_admins_works(slack: Slack) -> None:
    await slack.mention(ANN, "hello")
    await slack.posts(1)
    await slack.mention(ANN, "calc 1+1")
    await slack.posts(2)
    ids = await slack.step_ids(BOB, CHANNEL)  # members may read
    (refused,) = await slack.answers(await slack.command(BOB, ids[0], channel=CHANNEL))
    assert refused["response_type"] == "ephemeral"
    assert text_of(refused).startswith("Only this chat's owner or the group's admins can restore or clear it.")
    chat = await slack.server.core.store.places.bound_chat(f"slack:{CHANNEL}")
    assert chat is not None
    assert [(r.action, r.outcome) for r in await slack.server.core.audit.rows(chat.id)] == [("restore", "forbidden")]
    (question,) = await slack.answers(await slack.command(CY, ids[0], channel=CHANNEL))
    _, restored = await slack.answers(await slack.press(CY, buttons_of(question)["Yes, do it"], CHANNEL), 2)
    assert text_of(restored).startswith("Restored this chat to turn 1, step 0.")
    audit = await slack.server.core.audit.rows(chat.id)
    admin = await slack.server.core.store.users.user_for_identity(f"slack:{TEAM}:{CY}")
    assert admin is not None and admin.id != chat.owner_id  # restored as the channel's admin, not its owner
    assert [(r.action, r.outcome, r.user_id, r.surface) for r in audit][-1] == ("restore", "ok", admin.id, "slack")


async def test_a_slack_user_with_an_arabic_locale_gets_arabic_answers(slack: Slack) -> None:
    (empty,) = await slack.answers(await slack.command(LAYLA, "list", channel="D0LAYLADM1"))
    assert text_of(empty) == "لا خطوات محفوظة في هذه الدردشة بعد."
    await slack.mention(LAYLA, "write a.txt: x")
    (card,) = await slack.posts(1)
    assert set(buttons_of(card)) == {"موافقة", "رفض"}
    locale_calls = [c for c in slack.fake.called("users.info") if c.args.get("user") == LAYLA]
    assert len(locale_calls) == 1  # kept for a while, not asked again


async def test_a_long_answer_is_split_into_sections_of_at_most_3000_characters(slack: Slack) -> None:
    question = "\n".join(f"line {i:04d} " + "x" * 60 for i in range(110))  # about 7,700 characters
    await slack.dm(ANN, question)
    (post,) = await slack.posts(1)
    sections = [b["text"]["text"] for b in post["blocks"]]
    assert len(sections) >= 3 and all(len(s) <= 3000 for s in sections)
    assert "".join(sections).replace("\n", "") == f'You said: "{question}". I know no facts yet.'.replace("\n", "")


# -- robustness ------------------------------------------------------------------------------


async def test_a_ratelimited_post_is_waited_out_and_still_arrives(slack: Slack) -> None:
    slack.fake.rate_limit("chat.postMessage", 1)
    await slack.dm(ANN, "hello")
    (post,) = await slack.posts(1)
    assert text_of(post) == 'You said: "hello". I know no facts yet.'
    assert [c.ok for c in slack.fake.called("chat.postMessage")] == [False, True]


async def test_an_answer_slack_refuses_with_a_proxy_page_or_a_5xx_is_sent_again(slack: Slack) -> None:
    slack.fake.fail_next("chat.postMessage")  # a proxy's HTML 502
    slack.fake.fail_next("chat.postMessage", 500, '{"ok": false, "error": "internal_error"}', "application/json")
    await slack.dm(ANN, "hello")
    (post,) = await slack.posts(1)
    assert text_of(post) == 'You said: "hello". I know no facts yet.'
    assert [c.ok for c in slack.fake.called("chat.postMessage")] == [False, False, True]
    url = slack.fake.response_url()
    slack.fake.fail_next(url.rsplit("/", 1)[1], 503, "Service Unavailable", "text/plain")
    form = {"team_id": TEAM, "channel_id": DM, "channel_name": "directmessage", "user_id": ANN, "user_name": "ann",
            "command": "/replay", "text": "list", "response_url": url, "trigger_id": "t"}
    assert (await slack.post(urlencode(form), "application/x-www-form-urlencoded")).status_code == 200
    (listing,) = await slack.answers(url)
    assert text_of(listing).startswith("This chat’s saved steps") and slack.fake.failed[-1] == url.rsplit("/", 1)[1]


async def test_when_slack_will_not_say_who_someone_is_they_are_answered_without_it(slack: Slack) -> None:
    slack.fake.fail_next("users.info", 400, "<html>Bad Request</html>")
    (empty,) = await slack.answers(await slack.command(LAYLA, "list", channel="D0LAYLADM1"))
    assert text_of(empty) == "No steps saved in this chat yet."  # in English: her locale was not to be had


async def test_messages_of_one_chat_are_answered_in_the_order_they_came(slack: Slack) -> None:
    for text in ("sleep 0.3", "first", "second"):
        await slack.dm(ANN, text)
    posts = await slack.posts(3)
    assert [text_of(p) for p in posts[1:]] == [f'You said: "{t}". I know no facts yet.' for t in ("first", "second")]


async def test_a_rejected_token_or_an_unreachable_slack_makes_run_raise(core: Core) -> None:
    gateway = Gateway(core, RewindService(core))
    async with serve_fake_slack(BOT_TOKEN) as fake:
        wrong = SlackSettings(bot_token="xoxb-wrong", signing_secret=SECRET, app_token="", api_url=fake.api_url)
        with pytest.raises(SlackUnavailable, match=r"auth\.test \(invalid_auth\): check KAZMA_SLACK__BOT_TOKEN"):
            await asyncio.wait_for(SlackAdapter(gateway, wrong).run(), 10)
        socket_mode = SlackSettings(bot_token=BOT_TOKEN, signing_secret="", app_token="xapp-wrong", api_url=fake.api_url)
        with pytest.raises(SlackUnavailable, match=r"apps\.connections\.open \(invalid_auth\): check KAZMA_SLACK__APP_TOKEN"):
            adapter = SlackAdapter(gateway, socket_mode)
            try:
                await asyncio.wait_for(adapter.run(), 10)
            finally:
                await adapter.close()
        closed_port = fake.api_url
    away = SlackSettings(bot_token=BOT_TOKEN, signing_secret=SECRET, app_token="", api_url=closed_port)
    adapter = SlackAdapter(gateway, away)
    with pytest.raises(SlackUnavailable, match="cannot be reached"):
        await asyncio.wait_for(adapter.run(), 10)


async def test_a_rejected_token_leaves_the_web_app_serving(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async with serve_fake_slack(BOT_TOKEN) as fake:
        monkeypatch.setenv("KAZMA_SLACK__BOT_TOKEN", "xoxb-revoked")
        monkeypatch.setenv("KAZMA_SLACK__SIGNING_SECRET", SECRET)
        monkeypatch.setenv("KAZMA_SLACK__API_URL", fake.api_url)
        async with serve_kazma(make_settings(tmp_path / "data")) as server, server.client() as http:
            await fake.wait_for(lambda: fake.called("auth.test"))
            assert (await http.get("/healthz")).status_code == 200


async def test_socket_mode_answers_a_slash_command_sent_over_the_websocket(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    async with serve_fake_slack(BOT_TOKEN, app_token=APP_TOKEN) as fake:
        add_people(fake)
        monkeypatch.setenv("KAZMA_SLACK__BOT_TOKEN", BOT_TOKEN)
        monkeypatch.setenv("KAZMA_SLACK__APP_TOKEN", APP_TOKEN)
        monkeypatch.setenv("KAZMA_SLACK__API_URL", fake.api_url)
        async with serve_kazma(make_settings(tmp_path / "data")) as server, server.client() as http:
            url = fake.response_url()
            envelope = await fake.send_envelope("slash_commands", {
                "token": "unused", "team_id": TEAM, "channel_id": DM, "channel_name": "directmessage", "user_id": ANN,
                "user_name": "ann", "command": "/replay", "text": "list", "api_app_id": "A0KAZMA01",
                "response_url": url, "trigger_id": uuid.uuid4().hex,
            })
            await fake.wait_for(lambda: any(a.get("envelope_id") == envelope for a in fake.acks))
            (answer,) = await fake.wait_for(lambda: fake.answers(url))
            assert (text_of(answer), answer["response_type"]) == ("No steps saved in this chat yet.", "ephemeral")
            assert (await http.post("/slack/events", content=b"{}")).status_code == 404  # no HTTP mode meanwhile
            assert server.app.state.bots.for_path("/slack/events") is None


async def test_no_slack_id_reaches_the_saved_steps(slack: Slack) -> None:
    await slack.dm(ANN, f"ask <@{BOB}> about <#{CHANNEL}|general> &amp; <https://example.org|the site>")
    (post,) = await slack.posts(1)
    assert text_of(post) == 'You said: "ask @bob about #general &amp; the site". I know no facts yet.'
    await slack.mention(ANN, "hello from the thread", thread_ts=THREAD)
    await slack.posts(2)
    core = slack.server.core
    saved = []
    for key in (f"slack:{DM}", f"slack:{CHANNEL}:{THREAD}"):
        chat = await core.store.places.bound_chat(key)
        assert chat is not None
        for info in await core.snapshots.list_steps(chat.id):
            step = await core.snapshots.get(chat.id, info.id)
            assert step is not None
            saved.append(orjson.dumps(step.state).decode())
    assert saved
    for slack_id in (TEAM, ANN, BOB, DM, CHANNEL, THREAD, slack.fake.bot_user_id):
        assert not any(slack_id in state for state in saved), slack_id
