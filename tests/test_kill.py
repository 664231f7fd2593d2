"""`kazma serve` SIGKILLed at random moments during concurrent messages, approvals and restores:
after each restart every chat's transcript matches its agent state, no answered message
is lost, nothing is marked twice, and every answer shown has its turn's last step listed.

The transcript and the agent's state live in one store and commit together, so this
holds at any instant; the test proves it the way it would break, by killing the real
server, over and over, at moments nobody chose.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from kazma_core.core import Core
from kazma_core.stores.types import NOTE_KEY, TranscriptRow
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings
from tests.crash import start_serve
from tests.helpers import eventually

KILLS = {"sqlite": 30, "postgresql": 10}  # each PostgreSQL start costs more: fewer, at moments as random
CHATS_PER_USER = 2
USERS = ("ann", "bob", "cem")


def shown(messages: list[BaseMessage]) -> list[tuple[int, tuple[str, str]]]:
    """What the transcript must show of an agent state (each user message, each answer, each
    note), with where each one is in the state."""
    out = []
    for at, m in enumerate(messages):
        if isinstance(m, HumanMessage):
            out.append((at, ("user", m.text)))
        elif isinstance(m, AIMessage) and not m.tool_calls:
            note = m.additional_kwargs.get(NOTE_KEY)
            out.append((at, (note.get("role", "error"), note["text"]) if note else ("assistant", m.text)))
    return out


@dataclass
class ChatLog:
    """What the client knows for sure of one chat: the exchanges it saw answered."""

    thread_id: str
    token: str
    answered: list[tuple[str, str]] = field(default_factory=list)
    restore_in_doubt: bool = False


async def act(http: httpx.AsyncClient, chat: ChatLog, rng: random.Random, label: str) -> None:
    """One thing a person does in a chat; what was confirmed is written down."""
    roll = rng.random()
    url = f"/api/chats/{chat.thread_id}"
    if roll < 0.45:
        text = f"{label} hello {rng.randrange(10**6)}"
        r = await http.post(f"{url}/messages", json={"text": text})
        if r.status_code == 200 and r.json()["status"] == "done":
            chat.answered.append((text, r.json()["reply"]))
    elif roll < 0.6:
        await http.post(f"{url}/messages", json={"text": rng.choice(["remember: tea", "steps 3", "calc 6*7", "forget: tea"])})
    elif roll < 0.75:
        r = await http.post(f"{url}/messages", json={"text": f"write {label}.txt: hi"})
        if r.status_code == 200 and r.json()["status"] == "awaiting_approval":
            for gate in r.json()["gates"]:
                await http.post(f"{url}/approvals/{gate['card_id']}", json={"decision": rng.choice(["approve", "deny"])})
        elif r.status_code == 409 and r.json().get("gates"):
            await http.post(f"{url}/approvals/{r.json()['gates'][0]['card_id']}", json={"decision": "deny"})
    else:
        steps = (await http.get(f"/api/replay/snapshots/{chat.thread_id}")).json().get("snapshots") or []
        if steps:
            target = rng.choice(steps)["snapshot_id"]
            chat.restore_in_doubt = True  # from here on, until the answer, a restore may or may not happen
            r = await http.post("/api/replay/restore", json={"thread_id": chat.thread_id, "snapshot_id": target})
            if r.status_code == 200:
                chat.answered.clear()  # what it took back is not lost: it was asked for
            chat.restore_in_doubt = r.status_code != 200 and r.status_code != 409


async def keep_busy(url: str, chat: ChatLog, rng: random.Random, cycle: int) -> None:
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {chat.token}"}, trust_env=False,
                                 timeout=httpx.Timeout(60.0)) as http:
        n = 0
        while True:
            n += 1
            with contextlib.suppress(httpx.TransportError):
                await act(http, chat, rng, f"c{cycle}n{n}")


async def check(
    data: Path, chats: list[ChatLog], cycle: int, database: dict[str, str], *, steps: bool = True
) -> dict[str, Any]:
    """Open the folder as the next start does (recovery included), and compare every chat;
    with `steps`, every answer also has its turn's last step listed."""
    core = await Core.open(make_settings(data, database=database))
    try:
        await core.recover()
        await RewindService(core).recover()
        seen: dict[str, Any] = {"rows": 0}
        for chat in chats:
            state = await core.turns.graph.aget_state(core.turns.config(chat.thread_id))
            transcript = await core.store.transcript.transcript(chat.thread_id)
            rows = [(r.role, r.text) for r in transcript]
            expected = shown(list(state.values.get("messages", [])))
            assert rows == [row for _, row in expected], (
                f"kill {cycle}: chat {chat.thread_id} transcript {rows} != state {expected}"
            )
            if steps:
                await check_steps(core, chat.thread_id, cycle, transcript, [at for at, _ in expected])
            turns = [r.turn_index for r in await core.store.transcript.transcript(chat.thread_id) if r.role == "user"]
            assert turns == sorted(set(turns)), f"kill {cycle}: a turn numbered twice: {turns}"
            errors = [r.turn_index for r in await core.store.transcript.transcript(chat.thread_id) if r.role in ("error", "stopped")]
            assert len(errors) == len(set(errors)), (
                f"kill {cycle}: a turn marked failed twice: {errors}: "
                f"{[(r.turn_index, r.role, r.text[:40]) for r in await core.store.transcript.transcript(chat.thread_id)]}"
            )
            if not chat.restore_in_doubt:
                for text, reply in chat.answered:
                    assert ("user", text) in rows and ("assistant", reply) in rows, f"kill {cycle}: lost {text!r}"
            if state.next:
                # Only a turn waiting at an approval may be left open.
                assert await core.store.cards.cards(chat.thread_id, "pending"), f"kill {cycle}: {state.next} left open"
            seen["rows"] += len(rows)
        return seen
    finally:
        await core.close()


async def check_steps(core: Core, chat_id: str, cycle: int, transcript: list[TranscriptRow], at: list[int]) -> None:
    """Every answer the transcript shows (those answered over HTTP among them) has its turn's
    last step listed: the step of that turn holding the state up to the answer. Only the
    newest `max_snapshots` steps are kept: a turn older than every listed step is left out."""
    steps = await core.snapshots.list_steps(chat_id)
    listed = {(s.turn_index, s.message_count) for s in steps}
    oldest = min((s.turn_index for s in steps), default=0) if len(steps) >= core.settings.time_travel.max_snapshots else 0
    for row, position in zip(transcript, at, strict=True):
        if row.role == "assistant" and row.turn_index >= oldest:
            assert (row.turn_index, position + 1) in listed, (
                f"kill {cycle}: chat {chat_id} turn {row.turn_index} answered {row.text!r} without its last step;"
                f" listed (turn, messages): {sorted(listed)[-6:]}"
            )


async def people_with_chats(
    data: Path, database: dict[str, str], names: tuple[str, ...], per_person: int
) -> list[ChatLog]:
    """Users with an API token each and their chats, written beforehand as the servers will find them."""
    core = await Core.open(make_settings(data, database=database))
    chats: list[ChatLog] = []
    try:
        for name in names:
            user = await core.store.users.add_user(name)
            token = await core.store.users.issue_token(user.id, "api")
            for n in range(per_person):
                chats.append(ChatLog((await core.chats.create(user, f"{name}'s {n + 1}")).id, token))
    finally:
        await core.close()
    return chats


@pytest.mark.engines()
async def test_sigkill_at_random_moments_leaves_every_chat_whole(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    database = {"url": request.getfixturevalue("pg_url") if engine == "postgresql" else ""}
    seed = int(os.environ.get("KILL_SEED") or random.randrange(10**6))  # not KAZMA_*: the fixtures clear those
    rng = random.Random(seed)
    print(f"kill test seed {seed} (KILL_SEED={seed} repeats it)", file=sys.stderr)
    data = tmp_path / "data"
    chats = await people_with_chats(data, database, USERS, CHATS_PER_USER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAZMA_")}
    env.update(PYTHONUNBUFFERED="1", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
               KAZMA_CONFIG=str(tmp_path / "no-user-file.toml"), KAZMA_AGENT__APPROVAL_TTL_SECONDS="5",
               KAZMA_DATABASE__URL=database["url"])
    log = tmp_path / "serve.log"
    rows = 0
    for cycle in range(KILLS[engine]):
        process, url = await start_serve(data, env, log)
        workers = [asyncio.create_task(keep_busy(url, chat, random.Random(rng.random()), cycle)) for chat in chats]
        if cycle == KILLS[engine] - 1 and rows == 0:
            # Nothing answered yet in any cycle (a machine so busy that no turn ended in 1.5 s): the last
            # kill comes at its random moment after a first answer, so the check has something to compare.
            await eventually(lambda: any(chat.answered for chat in chats) or None, "a first answer", timeout=120)
        await asyncio.sleep(rng.uniform(0.05, 1.5))
        process.send_signal(signal.SIGKILL)
        await process.wait()
        for worker in workers:
            worker.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        rows = (await check(data, chats, cycle, database))["rows"]
        for chat in chats:
            if chat.restore_in_doubt:  # it may have taken back what was answered before it
                chat.answered.clear()
                chat.restore_in_doubt = False
    assert rows > 0
