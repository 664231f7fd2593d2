"""Restore and fork from a transcript message (issue 22), over real HTTP on both engines:
`{"thread_id", "message_id"}` instead of `snapshot_id`, after an answer or before a person's
message, with the refusals, audit, metrics and undo of a restore by step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from kazma_core.settings import Settings
from tests.conftest import Person, make_settings
from tests.helpers import error_of, new_chat, say, steps_of, transcript

pytestmark = pytest.mark.engines()
KEPT = 6  # the newest steps kept per chat here, so a long chat's first turns lose theirs


@pytest.fixture
def settings(tmp_path: Path, engine: str, request: pytest.FixtureRequest) -> Settings:
    database = {"url": request.getfixturevalue("pg_url")} if engine == "postgresql" else {}
    return make_settings(tmp_path / "data", database=database, time_travel={"max_snapshots": KEPT})


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def rows(http: httpx.AsyncClient, chat: str) -> list[dict[str, Any]]:
    return ok(await http.get(f"/api/chats/{chat}/messages"))["messages"]  # type: ignore[no-any-return]


async def three_turns(http: httpx.AsyncClient) -> tuple[str, list[dict[str, Any]]]:
    chat = await new_chat(http, "tea")
    await say(http, chat, "remember: tea is good")
    await say(http, chat, "remember: coffee is better")
    await say(http, chat, "hello")
    return chat, await rows(http, chat)


async def last_step_of(http: httpx.AsyncClient, chat: str, turn: int) -> str:
    return [s["snapshot_id"] for s in await steps_of(http, chat) if s["turn_index"] == turn][-1]


async def test_restoring_to_an_answer_keeps_its_turn_and_to_a_question_goes_to_before_it(ann: Person) -> None:
    chat, messages = await three_turns(ann.http)
    answer_1, question_3 = messages[1], messages[4]
    assert (answer_1["role"], question_3["role"]) == ("assistant", "user")
    end_of_1 = await last_step_of(ann.http, chat, 1)

    # Before the third question is the end of turn 2.
    end_of_2 = await last_step_of(ann.http, chat, 2)
    restored = ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "message_id": question_3["id"]}))
    assert restored["snapshot"]["snapshot_id"] == end_of_2
    assert [t for t, _, _ in await transcript(ann.http, chat)] == [1, 1, 2, 2]
    assert restored["undo"] is not None

    # After the first answer: the end of turn 1, and the coffee is never said.
    restored = ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "message_id": answer_1["id"]}))
    assert (restored["snapshot"]["snapshot_id"], restored["turn_index"]) == (end_of_1, 1)
    assert await transcript(ann.http, chat) == [
        (1, "user", "remember: tea is good"), (1, "assistant", "Remembered: tea is good"),
    ]
    assert (await say(ann.http, chat, "hi"))["reply"] == 'You said: "hi". I know: tea is good.'


async def test_a_restore_by_message_is_undone_audited_and_counted_as_one_by_step(ann: Person) -> None:
    chat, messages = await three_turns(ann.http)
    before = await transcript(ann.http, chat)
    ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "message_id": messages[1]["id"]}))
    assert len(await transcript(ann.http, chat)) == 2
    ok(await ann.http.post("/api/replay/undo", json={"thread_id": chat}))
    assert await transcript(ann.http, chat) == before
    metrics = (await ann.http.get("/metrics")).text
    assert 'kazma_time_travel_rewind_total{action="restore",outcome="ok"}' in metrics


async def test_a_fork_from_a_message_copies_up_to_it_and_from_before_the_first_is_an_empty_chat(ann: Person) -> None:
    chat, messages = await three_turns(ann.http)
    forked = ok(await ann.http.post("/api/replay/fork", json={"thread_id": chat, "message_id": messages[2]["id"]}), 201)
    assert forked["forked_from"]["snapshot_id"] == await last_step_of(ann.http, chat, 1)
    assert [r for _, r, _ in await transcript(ann.http, forked["thread_id"])] == ["user", "assistant"]

    empty = ok(await ann.http.post("/api/replay/fork", json={"thread_id": chat, "message_id": messages[0]["id"]}), 201)
    assert empty["forked_from"] == {"thread_id": chat, "snapshot_id": None, "turn_index": 0, "iteration": None}
    assert empty["snapshot_id"] is None
    assert await transcript(ann.http, empty["thread_id"]) == []
    listed = {c["thread_id"]: c for c in ok(await ann.http.get("/api/chats"))["chats"]}
    assert listed[empty["thread_id"]]["forked_from"]["thread_id"] == chat
    assert (await say(ann.http, empty["thread_id"], "hi"))["reply"] == 'You said: "hi". I know no facts yet.'
    # The source is untouched.
    assert len(await transcript(ann.http, chat)) == 6


async def test_restoring_to_before_the_first_message_is_refused_with_what_to_do(ann: Person) -> None:
    chat, messages = await three_turns(ann.http)
    asked = {"thread_id": chat, "message_id": messages[0]["id"]}
    body = error_of(await ann.http.post("/api/replay/restore", json=asked), 409, "wrong_message")
    assert "Fork from it" in body["message"]
    assert len(await transcript(ann.http, chat)) == 6


async def test_a_message_of_another_chat_or_person_is_not_found_and_changes_nothing(ann: Person, bob: Person) -> None:
    chat, messages = await three_turns(ann.http)
    _other, other_rows = await three_turns(ann.http)
    for path in ("/api/replay/restore", "/api/replay/fork"):
        error_of(await ann.http.post(path, json={"thread_id": chat, "message_id": other_rows[1]["id"]}), 404, "not_found")
        error_of(await ann.http.post(path, json={"thread_id": chat, "message_id": 10**9}), 404, "not_found")
        error_of(await bob.http.post(path, json={"thread_id": chat, "message_id": messages[1]["id"]}), 404, "not_found")
    both = await ann.http.post("/api/replay/restore", json={"thread_id": chat, "message_id": 1, "snapshot_id": "abcdef01"})
    error_of(both, 422, "invalid_input")
    assert len(await transcript(ann.http, chat)) == 6
    assert len(ok(await ann.http.get("/api/chats"))["chats"]) == 2


async def test_where_the_points_step_is_no_longer_kept_it_is_not_found_saying_so(ann: Person) -> None:
    chat = await new_chat(ann.http)
    for n in range(KEPT + 2):
        await say(ann.http, chat, f"calc {n}+1")
    messages = await rows(ann.http, chat)
    assert min(s["turn_index"] for s in await steps_of(ann.http, chat)) > 1
    gone = error_of(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "message_id": messages[1]["id"]}), 404, "not_found")
    assert "no longer kept" in gone["message"]
    points = ok(await ann.http.get(f"/api/replay/messages/{chat}"))["messages"]
    assert [p["message_id"] for p in points] == [m["id"] for m in messages]
    assert points[0] == {"message_id": messages[0]["id"], "turn_index": None, "snapshot_id": None, "empty": True, "kept": True}
    assert points[1]["kept"] is False
    assert points[-1]["kept"] is True and points[-1]["snapshot_id"] == await last_step_of(ann.http, chat, KEPT + 2)
    one = ok(await ann.http.get(f"/api/replay/messages/{chat}/{messages[-1]['id']}"))
    assert one == points[-1]
