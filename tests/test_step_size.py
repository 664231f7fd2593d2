"""A step's size is what it adds: its new messages and its own fields, never the messages it
shares with earlier steps. So a long chat of small messages stays restorable and forkable at
any length, and only a step that itself adds more than max_snapshot_bytes is stored cut.
Over real HTTP, on both engines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kazma_core.settings import Settings
from tests.conftest import Person, make_settings
from tests.helpers import error_of, new_chat, say, steps_of, transcript

pytestmark = pytest.mark.engines()

LIMIT = 64 * 1024
TURNS = 120  # about 2 KB a turn (a message of 1 KB, an answer that quotes it): the chat ends near 4x LIMIT
NOTE = "The beans climb the fence and the soil by the shed stays wet after rain; what to plant by them? " * 10


@pytest.fixture
def settings(tmp_path: Path, engine: str, request: pytest.FixtureRequest) -> Settings:
    database = {"database": {"url": request.getfixturevalue("pg_url")}} if engine == "postgresql" else {}
    # Every step of the long chat kept, so its first turns can be gone back to.
    return make_settings(tmp_path / "data", time_travel={"max_snapshot_bytes": LIMIT, "max_snapshots": 1000}, **database)


def ok(response: Any, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def last_step_of_turn(person: Person, chat: str, turn: int) -> str:
    return [s["snapshot_id"] for s in await steps_of(person.http, chat) if s["turn_index"] == turn][-1]


def up_to(messages: list[tuple[int, str, str]], turn: int) -> list[tuple[int, str, str]]:
    return [m for m in messages if m[0] <= turn]


async def test_a_chat_far_past_the_step_size_limit_restores_and_forks_to_an_early_and_a_late_step(ann: Person) -> None:
    """Broke: a step's size was the whole conversation's, so past max_snapshot_bytes of chat every
    later step was stored cut, and restore and fork of each answered 409 snapshot_truncated."""
    chat = await new_chat(ann.http, "long")
    for i in range(TURNS):
        await say(ann.http, chat, f"{i}: {NOTE}")
    whole = await transcript(ann.http, chat)
    assert len(whole) == 2 * TURNS and sum(len(text) for _, _, text in whole) > 3 * LIMIT

    steps = await steps_of(ann.http, chat)
    assert not any(s["truncated"] for s in steps)
    # Each step's size is what it added (about its turn's two messages), not the conversation's.
    assert max(s["size"] for s in steps) < 8 * 1024
    threads = {t["thread_id"]: t for t in ok(await ann.http.get("/api/replay/threads"))["threads"]}
    assert sum(s["size"] for s in steps) == threads[chat]["bytes"]

    early, late = 2, TURNS - 1
    for turn in (early, late):
        step = await last_step_of_turn(ann, chat, turn)
        read = ok(await ann.http.get(f"/api/replay/snapshots/{chat}/{step}"))
        # The whole conversation up to the step, every message whole.
        assert [m["text"] for m in read["messages"]] == [text for _, _, text in up_to(whole, turn)]
        forked = ok(await ann.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": step}), 201)
        assert await transcript(ann.http, forked["thread_id"]) == up_to(whole, turn)

    for turn in (late, early):
        step = await last_step_of_turn(ann, chat, turn)
        restored = ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": step}))
        assert restored["turn_index"] == turn
        assert await transcript(ann.http, chat) == up_to(whole, turn)
    again = await say(ann.http, chat, "hello")
    assert again["turn_index"] == early + 1
    assert (await steps_of(ann.http, chat))[-1]["truncated"] is False


async def test_a_step_that_adds_more_than_the_limit_is_stored_cut_and_refused_but_the_chat_goes_back_before_it(
    ann: Person,
) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    assert (await say(ann.http, chat, "big 100"))["reply"] == "Received 100 KB of text."
    steps = await steps_of(ann.http, chat)
    cut = [s for s in steps if s["truncated"]]
    # The big result's step and the answer after it, which holds the cut result too.
    assert [s["turn_index"] for s in cut] == [2, 2]
    assert all(s["size"] <= LIMIT for s in steps)
    for route in ("/api/replay/restore", "/api/replay/fork"):
        refused = await ann.http.post(route, json={"thread_id": chat, "snapshot_id": cut[0]["snapshot_id"]})
        error_of(refused, 409, "snapshot_truncated")
    read = ok(await ann.http.get(f"/api/replay/snapshots/{chat}/{cut[0]['snapshot_id']}"))
    assert read["snapshot"]["truncated"] is True and "[cut by Kazma:" in read["messages"][-1]["text"]

    first = await last_step_of_turn(ann, chat, 1)
    ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": first}))
    assert [role for _, role, _ in await transcript(ann.http, chat)] == ["user", "assistant"]
    await say(ann.http, chat, "hello")
    assert (await steps_of(ann.http, chat))[-1]["truncated"] is False
