"""Every command the registry offers on a chat app reaches its handler there, through the app itself.

One server runs the three bots against the fake Telegram, Discord and Slack servers. The
test walks `commands.registry` and, for each platform, sends every command offered there as
a person on that platform sends it (a Telegram message, a Discord slash interaction over the
gateway, a Slack slash command to /slack/events), then reads the answer off the fake. A
command a platform does not register (Slack answering /help with 404, as it once did) or
routes wrongly gets no answer, or the wrong one, and the test names it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlencode

import discord
import httpx
import pytest

from commands import registry
from kazma_core.core import Core
from tests.conftest import make_settings
from tests.fakes.discord_server import ALICE, GENERAL, GUILD_ID, FakeDiscord, serve_fake_discord
from tests.fakes.slack_server import FakeSlack, serve_fake_slack
from tests.fakes.telegram_server import FakeTelegram, person, private_chat, serve_fake_telegram
from tests.helpers import eventually
from tests.http_server import RunningServer, serve_kazma

TG_TOKEN = "5550001111:AAH-everywhere-token"
DISCORD_TOKEN = "fake-discord-everywhere-token"
ANSWER_WAIT = 15.0  # a command answered through a bot and the server, on a busy machine
T = TypeVar("T")
SLACK_TOKEN, SLACK_SECRET = "xoxb-kazma-everywhere", "kazma-everywhere-secret"
ANN = person(5551234987, "Ann")
SLACK_ANN, SLACK_DM, SLACK_TEAM = "U0ANN00001", "D0ANNDM001", "T0KAZMA01"

# What each command's handler says first. A new command in the registry fails the test
# until it is listed here, so no command is left untried on any app.
ANSWERS = {
    "replay list": "This chat’s saved steps, turn by turn",
    "replay restore": "Restore this chat to turn 1, step 0",
    "replay undo": "This chat has no restore to undo.",
    "replay show": "turn 1, step 0 · ",
    "replay compare": "turn 1, step 0 → turn 2, step ",
    "replay clear": "Delete this chat’s saved steps (",
    "fork": "Fork turn 1, step 0",
    "reset": "Conversation reset",
    "memory off": "Turn memory off in this chat?",
    "help": "Commands:",
    "stop": "Nothing is running in this chat",
}

Send = Callable[[registry.Leaf, tuple[str, ...]], Awaitable[str]]


@pytest.fixture(autouse=True)
def restore_discord_globals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)


async def until(found: Callable[[], T | None], what: str) -> T:
    return await eventually(found, f"an answer to {what}", ANSWER_WAIT)


def telegram_sender(fake: FakeTelegram) -> Send:
    async def send(leaf: registry.Leaf, args: tuple[str, ...]) -> str:
        text = leaf.typed(args)
        before = len(fake.to(ANN["id"]))
        fake.message(ANN, private_chat(ANN), text)
        answers = await until(lambda: fake.to(ANN["id"])[before:], f"Telegram's {text}")
        return answers[0].text

    return send


def discord_sender(fake: FakeDiscord) -> Send:
    async def send(leaf: registry.Leaf, args: tuple[str, ...]) -> str:
        words = (leaf.cmd.name, *args) if leaf.parent else args
        iid = await fake.slash(ALICE, (leaf.parent or leaf.cmd).name, *words)
        answers = await until(lambda: fake.answers(iid), f"Discord's /{leaf.path}")
        return answers[0].content

    return send


async def to_slack(http: httpx.AsyncClient, body: str, content_type: str) -> httpx.Response:
    """A request to the server's /slack/events, signed as Slack signs it."""
    stamp = str(int(time.time()))
    signature = "v0=" + hmac.new(SLACK_SECRET.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return await http.post("/slack/events", content=body.encode(), headers={
        "Content-Type": content_type, "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature,
    })


def slack_sender(fake: FakeSlack, http: httpx.AsyncClient) -> Send:
    async def send(leaf: registry.Leaf, args: tuple[str, ...]) -> str:
        command, _, text = leaf.typed(args).partition(" ")
        url = fake.response_url()
        body = urlencode({
            "team_id": SLACK_TEAM, "channel_id": SLACK_DM, "channel_name": "directmessage", "user_id": SLACK_ANN,
            "user_name": "ann", "command": command, "text": text, "response_url": url, "trigger_id": uuid.uuid4().hex,
        })
        response = await to_slack(http, body, "application/x-www-form-urlencoded")
        assert response.status_code == 200, f"Slack {command}: {response.status_code} {response.text}"
        answers = await until(lambda: fake.answers(url), f"Slack's {command} {text}")
        return "\n".join(b["text"]["text"] for b in answers[0]["blocks"] if b["type"] == "section")

    return send


async def step_ids(core: Core, key: str) -> list[str]:
    chat = await core.store.places.bound_chat(key)
    assert chat is not None, key
    return [s.id[:8] for s in await core.snapshots.list_steps(chat.id)]


async def two_turns(send_text: Callable[[str], Awaitable[object]]) -> None:
    for text in ("hello", "calc 1+1"):
        await send_text(text)


@pytest.fixture
async def server(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> AsyncIterator[tuple[RunningServer, FakeTelegram, FakeDiscord, FakeSlack]]:
    async with (
        serve_fake_telegram(TG_TOKEN) as telegram,
        serve_fake_discord(DISCORD_TOKEN) as discord_fake,
        serve_fake_slack(SLACK_TOKEN) as slack,
    ):
        slack.add_user(SLACK_ANN, "ann")
        env = {
            "TELEGRAM__TOKEN": TG_TOKEN, "TELEGRAM__BASE_URL": telegram.base_url,
            "DISCORD__TOKEN": DISCORD_TOKEN, "DISCORD__API_BASE": discord_fake.api_base,
            "DISCORD__GATEWAY_URL": discord_fake.gateway_url,
            "SLACK__BOT_TOKEN": SLACK_TOKEN, "SLACK__SIGNING_SECRET": SLACK_SECRET, "SLACK__API_URL": slack.api_url,
        }
        for name, value in env.items():
            monkeypatch.setenv(f"KAZMA_{name}", value)
        async with serve_kazma(make_settings(tmp_path / "data")) as running:
            await until(lambda: telegram.called("getUpdates"), "Telegram's polling")
            await until(lambda: discord_fake.synced, "Discord's command sync")
            await until(lambda: slack.called("auth.test"), "Slack's token check")
            yield running, telegram, discord_fake, slack


async def test_every_command_each_chat_app_offers_reaches_its_handler_there(
    server: tuple[RunningServer, FakeTelegram, FakeDiscord, FakeSlack],
) -> None:
    running, telegram, discord_fake, slack = server
    assert set(ANSWERS) == {leaf.path for leaf in registry.leaves()}
    core = running.core
    async with running.client() as http:
        senders = {"telegram": telegram_sender(telegram), "discord": discord_sender(discord_fake), "slack": slack_sender(slack, http)}

        async def tg(text: str) -> object:
            before = len(telegram.to(ANN["id"]))
            telegram.message(ANN, private_chat(ANN), text)
            return await until(lambda: telegram.to(ANN["id"])[before:], text)

        async def dc(text: str) -> object:
            before = len(discord_fake.in_channel(GENERAL))
            await discord_fake.message(ALICE, text)
            return await until(lambda: discord_fake.in_channel(GENERAL)[before:], text)

        async def sl(text: str) -> object:
            before = len(slack.posts())
            event = {"type": "message", "channel_type": "im", "channel": SLACK_DM, "user": SLACK_ANN, "text": text,
                     "ts": f"{time.time():.6f}", "team": SLACK_TEAM}
            body = {"team_id": SLACK_TEAM, "api_app_id": "A0KAZMA01", "type": "event_callback",
                    "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()), "event": event}
            assert (await to_slack(http, json.dumps(body), "application/json")).status_code == 200
            return await until(lambda: slack.posts()[before:], text)

        keys = {"telegram": f"telegram:{ANN['id']}", "discord": f"discord:{GUILD_ID}:{GENERAL}", "slack": f"slack:{SLACK_DM}"}
        for platform, talk in (("telegram", tg), ("discord", dc), ("slack", sl)):
            await two_turns(talk)
            ids = await step_ids(core, keys[platform])
            values = {"step": ids[0], "a": ids[0], "b": ids[-1]}
            offered = registry.leaves(platform)
            assert offered, platform
            for leaf in offered:
                args = tuple(values[a.name] for a in leaf.cmd.args if a.required)
                answer = await senders[platform](leaf, args)
                assert answer.startswith(ANSWERS[leaf.path]), (platform, leaf.path, answer)
            for cmd in registry.COMMANDS:  # aliases, where the platform types them (Telegram's /start)
                for alias in cmd.aliases if platform == "telegram" else ():
                    alias_leaf = registry.Leaf(alias, registry.CommandDef(alias, cmd.description), None)
                    assert (await senders[platform](alias_leaf, ())).startswith(ANSWERS[cmd.name]), alias
    assert discord_fake.unknown_routes == []
