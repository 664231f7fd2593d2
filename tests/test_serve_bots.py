"""`kazma serve` as an operator runs it, with all three chat apps pointed at fakes through the environment.

The server is the real `kazma` command in a process of its own (a free port, a temporary
data folder, no user file); the Telegram, Discord and Slack bots in it are configured only
by the KAZMA_TELEGRAM__*, KAZMA_DISCORD__* and KAZMA_SLACK__* variables, and talk to the
fake platforms these tests start on 127.0.0.1. Users are made and linked with the real
`kazma users` commands. Answers are read off the fakes; the web API is used over HTTP.
Nothing of Kazma is mocked, and every wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import re
import signal
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx

from tests.fakes.discord_server import ALICE, DM, GENERAL, FakeDiscord, serve_fake_discord
from tests.fakes.slack_server import FakeSlack, serve_fake_slack
from tests.fakes.telegram_server import FakeTelegram, person, private_chat, serve_fake_telegram
from tests.forked import Forked
from tests.helpers import KAZMA, free_port

T = TypeVar("T")

TG_TOKEN = "5550001111:AAH-serve-test-token"
DISCORD_TOKEN = "fake-discord-serve-token"
SLACK_TOKEN, SLACK_SECRET = "xoxb-kazma-serve-test", "kazma-serve-signing-secret"
ANN = person(5551234987, "Ann")  # on Telegram
SLACK_ANN, SLACK_DM = "U0ANN00001", "D0ANNDM001"
STEP = re.compile(r"turn 1, step 0 · ([0-9a-f]{8})")
START_SECONDS = 30.0  # the server printing its login link and answering /healthz
WAIT_SECONDS = 15.0  # one answer, one bot getting ready, one CLI command
STOP_SECONDS = 15.0


def answer_to(text: str) -> str:
    """What the offline model answers to a plain message."""
    return f'You said: "{text}". I know no facts yet.'


@dataclass
class Serve:
    """A running `kazma serve` process, its address and its output files."""

    url: str
    data_dir: Path
    env: dict[str, str]
    process: asyncio.subprocess.Process | Forked  # a process of its own either way (tests/forked.py)
    out: Path  # stdout: the login link, uvicorn's access lines
    err: Path  # stderr: uvicorn's and Kazma's log lines

    def log(self) -> str:
        return self.err.read_text(errors="replace")

    async def until(self, probe: Callable[[], T | None], what: str, timeout: float = WAIT_SECONDS) -> T:
        """The first truthy `probe()`, checked every 20 ms; on timeout, fail with the server's log."""
        deadline = time.monotonic() + timeout
        while not (value := probe()):
            if self.process.returncode is not None:
                raise AssertionError(f"kazma serve exited ({self.process.returncode}) waiting for {what}:\n{self.log()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; server log:\n{self.log()[-3000:]}")
            await asyncio.sleep(0.02)
        return value

    async def cli(self, *args: str) -> str:
        """Run `kazma <args> --data-dir <the server's folder>` next to the running server; its stdout."""
        process = await asyncio.create_subprocess_exec(
            KAZMA, *args, "--data-dir", str(self.data_dir), env=self.env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), WAIT_SECONDS)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        assert process.returncode == 0, f"kazma {' '.join(args)}: {err.decode()}"
        return out.decode()

    async def stop(self) -> None:
        """SIGTERM, as a service manager stops it; a clean stop within STOP_SECONDS, or the test fails.

        uvicorn (0.29 and later) shuts down gracefully, then raises the signal it caught again,
        so a clean stop ends by SIGTERM (-15), not with `return 0`; the log says it was clean."""
        if self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), STOP_SECONDS)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
                raise AssertionError(f"kazma serve did not stop within {STOP_SECONDS:.0f} s:\n{self.log()[-3000:]}") from None
        assert self.process.returncode in (0, -signal.SIGTERM), (self.process.returncode, self.log()[-3000:])
        assert "Application shutdown complete." in self.log(), self.log()[-3000:]


@contextlib.asynccontextmanager
async def kazma_serve(tmp_path: Path, platforms: dict[str, str]) -> AsyncIterator[Serve]:
    """Start `kazma serve` with these KAZMA_* settings; wait until it answers; stop it on exit."""
    port = free_port()
    env = {name: value for name, value in os.environ.items() if not name.startswith("KAZMA_")}
    env.update(
        PYTHONUNBUFFERED="1", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
        KAZMA_CONFIG=str(tmp_path / "no-user-file.toml"), **platforms,
    )
    data_dir, out, err = tmp_path / "data", tmp_path / "serve.out", tmp_path / "serve.err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        # Files, not pipes: nobody reads uvicorn's access lines, and a full pipe would stall the server.
        process = await asyncio.create_subprocess_exec(
            KAZMA, "serve", "--data-dir", str(data_dir), "--port", str(port), stdout=stdout, stderr=stderr, env=env,
        )
    serve = Serve(f"http://127.0.0.1:{port}", data_dir, env, process, out, err)
    try:
        await serve.until(lambda: "/login?token=" in out.read_text(errors="replace"), "the login link", START_SECONDS)
        async with httpx.AsyncClient(base_url=serve.url, trust_env=False) as http:

            async def healthy() -> None:
                while True:
                    with contextlib.suppress(httpx.TransportError):
                        if (await http.get("/healthz")).status_code == 200:
                            return
                    await asyncio.sleep(0.05)

            await asyncio.wait_for(healthy(), START_SECONDS)
        yield serve
    finally:
        if process.returncode is None:  # the test failed before its own `stop`
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), STOP_SECONDS)
            except TimeoutError:
                process.kill()
                await process.wait()


async def signed_slack_event(http: httpx.AsyncClient, event: dict[str, Any]) -> None:
    """An Events API callback to the server's /slack/events, signed with the signing secret as Slack signs it."""
    body = json.dumps({
        "token": "unused", "team_id": "T0KAZMA01", "api_app_id": "A0KAZMA01", "type": "event_callback",
        "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()),
        "event": {"ts": f"{time.time():.6f}", "team": "T0KAZMA01", **event},
    })
    stamp = str(int(time.time()))
    signature = "v0=" + hmac.new(SLACK_SECRET.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    response = await http.post("/slack/events", content=body.encode(), headers={
        "Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature,
    })
    assert response.status_code == 200, response.text


async def slack_dm(serve: Serve, fake: FakeSlack, http: httpx.AsyncClient, text: str) -> str:
    """Ann's DM to the Slack app; the text of the answer the app posted with chat.postMessage."""
    before = len(fake.posts())
    await signed_slack_event(http, {"type": "message", "channel_type": "im", "channel": SLACK_DM, "user": SLACK_ANN, "text": text})
    posted = await serve.until(lambda: fake.posts()[before:], "Slack's chat.postMessage")
    return str(posted[0]["text"])


async def telegram_says(serve: Serve, fake: FakeTelegram, text: str) -> str:
    before = len(fake.to(ANN["id"]))
    fake.message(ANN, private_chat(ANN), text)
    return (await serve.until(lambda: fake.to(ANN["id"])[before:], f"Telegram's answer to {text!r}"))[0].text


async def discord_says(serve: Serve, fake: FakeDiscord, text: str, channel: int) -> str:
    before = len(fake.in_channel(channel))
    await fake.message(ALICE, text, channel=channel)
    return (await serve.until(lambda: fake.in_channel(channel)[before:], f"Discord's answer to {text!r}"))[0].content


async def web_turn(http: httpx.AsyncClient, chat: str, text: str) -> str:
    response = await http.post(f"/api/chats/{chat}/messages", json={"text": text})
    assert response.status_code == 200, response.text
    return str(response.json()["reply"])


def env_for(telegram_base: str, discord: FakeDiscord, slack: FakeSlack) -> dict[str, str]:
    return {
        "KAZMA_TELEGRAM__TOKEN": TG_TOKEN, "KAZMA_TELEGRAM__BASE_URL": telegram_base, "KAZMA_TELEGRAM__MODE": "polling",
        "KAZMA_DISCORD__TOKEN": DISCORD_TOKEN, "KAZMA_DISCORD__API_BASE": discord.api_base,
        "KAZMA_DISCORD__GATEWAY_URL": discord.gateway_url,
        "KAZMA_SLACK__BOT_TOKEN": SLACK_TOKEN, "KAZMA_SLACK__SIGNING_SECRET": SLACK_SECRET,
        "KAZMA_SLACK__API_URL": slack.api_url,
    }


def assert_no_secret_or_traceback(log: str) -> None:
    assert "Traceback" not in log, log[-3000:]
    for secret in (TG_TOKEN, DISCORD_TOKEN, SLACK_TOKEN, SLACK_SECRET):
        assert secret not in log


async def test_kazma_serve_runs_the_three_bots_from_the_environment_beside_the_web_api(tmp_path: Path) -> None:
    async with (
        serve_fake_telegram(TG_TOKEN) as telegram,
        serve_fake_discord(DISCORD_TOKEN) as discord,
        serve_fake_slack(SLACK_TOKEN) as slack,
    ):
        slack.add_user(SLACK_ANN, "ann")
        async with kazma_serve(tmp_path, env_for(telegram.base_url, discord, slack)) as serve:
            # The real CLI, beside the running server: Ann gets an API token, and her Telegram account is hers.
            token = (await serve.cli("users", "add", "ann")).splitlines()[-1].strip()
            linked = await serve.cli("users", "link", "ann", f"telegram:{ANN['id']}")
            assert linked.strip() == f"Linked telegram:{ANN['id']} to ann."
            await serve.until(lambda: telegram.called("getUpdates"), "the Telegram bot to poll")
            await serve.until(lambda: discord.synced, "the Discord bot to sync its slash commands")
            await serve.until(lambda: slack.called("auth.test"), "the Slack bot to check its token")

            async with httpx.AsyncClient(
                base_url=serve.url, headers={"Authorization": f"Bearer {token}"}, trust_env=False, timeout=WAIT_SECONDS
            ) as web:
                created = await web.post("/api/chats", json={"title": "on the web"})
                assert created.status_code == 201, created.text
                web_chat = created.json()["thread_id"]
                assert await web_turn(web, web_chat, "calc 1+2") == "1+2 = 3"

                # All at once: a person on each platform and one on the web.
                tg, dc, sl, wb = await asyncio.gather(
                    telegram_says(serve, telegram, "hello from telegram"),
                    discord_says(serve, discord, "hello from discord", DM),
                    slack_dm(serve, slack, web, "hello from slack"),
                    web_turn(web, web_chat, "calc 2*3"),
                )
                assert (tg, dc, sl, wb) == (
                    answer_to("hello from telegram"), answer_to("hello from discord"), answer_to("hello from slack"), "2*3 = 6",
                )

                # A slash command over the Discord gateway, answered through the interaction callback.
                interaction = await discord.slash(ALICE, "replay", "list", channel=DM)
                [listed] = await serve.until(lambda: discord.answers(interaction), "Discord's /replay list")
                assert listed.ephemeral and "Turn 1: hello from discord" in listed.content

                # /fork by an 8-character prefix from Telegram: the new chat is Ann's, in her GET /api/chats.
                listing = await telegram_says(serve, telegram, "/replay list")
                step = STEP.search(listing)
                assert step is not None, listing
                before = len(telegram.to(ANN["id"]))
                telegram.message(ANN, private_chat(ANN), f"/fork {step[1]}")
                [asked] = await serve.until(lambda: telegram.to(ANN["id"])[before:], "the fork's question")
                assert asked.text.startswith(f"Fork turn 1, step 0 ({step[1]}) into a new chat, owned by you?"), asked.text
                telegram.press(ANN, asked, "Yes, do it")
                [done] = await serve.until(lambda: telegram.to(ANN["id"])[before + 1:], "the fork's answer")
                assert done.text.startswith("Forked turn 1, step 0 into a new chat"), done.text
                link = re.search(re.escape(serve.url) + r"/\?thread=([\w-]+)", done.text)
                assert link is not None, done.text

                listed_chats = await web.get("/api/chats")
                assert listed_chats.status_code == 200, listed_chats.text
                chats = {c["thread_id"]: c for c in listed_chats.json()["chats"]}
                assert link[1] in chats
                [origin] = [c for c in chats.values() if c["title"] == "Telegram: Ann"]
                assert chats[link[1]]["forked_from"]["thread_id"] == origin["thread_id"]
                assert set(chats) == {web_chat, origin["thread_id"], link[1]}  # Discord's and Slack's people are others

                # The web still answers after all of it, and the forked chat takes a turn of its own.
                assert (await web.get("/healthz")).json()["status"] == "ok"
                assert await web_turn(web, link[1], "calc 5+5") == "5+5 = 10"
                assert await web_turn(web, web_chat, "bye") == answer_to("bye")

            await serve.stop()
            log = serve.log()
            assert_no_secret_or_traceback(log)
            assert "bot stopped" not in log, log[-3000:]
    assert len(discord.identified) == 1 and discord.unknown_routes == []
    assert {c.status for c in telegram.calls} == {200}


async def test_an_unreachable_telegram_leaves_the_web_and_the_other_two_bots_working(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}/bot"  # nothing listens there
    async with serve_fake_discord(DISCORD_TOKEN) as discord, serve_fake_slack(SLACK_TOKEN) as slack:
        slack.add_user(SLACK_ANN, "ann")
        async with kazma_serve(tmp_path, env_for(closed, discord, slack)) as serve:
            token = (await serve.cli("users", "add", "ann")).splitlines()[-1].strip()
            await serve.until(lambda: discord.synced, "the Discord bot to sync its slash commands")
            await serve.until(lambda: slack.called("auth.test"), "the Slack bot to check its token")
            async with httpx.AsyncClient(
                base_url=serve.url, headers={"Authorization": f"Bearer {token}"}, trust_env=False, timeout=WAIT_SECONDS
            ) as web:
                created = await web.post("/api/chats")
                assert created.status_code == 201, created.text
                dc, sl, wb = await asyncio.gather(
                    discord_says(serve, discord, "anyone there?", GENERAL),  # a mention in the guild's channel
                    slack_dm(serve, slack, web, "hello from slack"),
                    web_turn(web, created.json()["thread_id"], "calc 3*3"),
                )
                assert (dc, sl, wb) == (answer_to("anyone there?"), answer_to("hello from slack"), "3*3 = 9")

                # One line per failed attempt, retried with a growing pause.
                def telegram_lines() -> list[str]:
                    return [line.split(": ", 1)[1] for line in serve.log().splitlines() if "ERROR bots.base: telegram" in line]

                await serve.until(lambda: len(telegram_lines()) >= 2, "the Telegram bot's second attempt")
                assert (await web.get("/healthz")).json()["status"] == "ok"

            await serve.stop()
            lines = telegram_lines()
            first = (
                f"telegram bot stopped (TelegramUnavailable: Telegram at {closed} could not be used: "
            )
            assert all(line.startswith(first) for line in lines), lines
            assert lines[0].endswith(". Check the network and KAZMA_TELEGRAM__BASE_URL.); retrying in 1 s"), lines[0]
            delays = [int(re.search(r"retrying in (\d+) s$", line)[1]) for line in lines]  # type: ignore[index]
            assert delays == [1, 2, 4, 8, 16][: len(delays)], lines
            log = serve.log()
            assert_no_secret_or_traceback(log)
            assert "discord bot stopped" not in log and "slack bot stopped" not in log, log[-3000:]
