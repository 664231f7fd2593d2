"""Undo a restore and compare across a fork over real HTTP (uvicorn on 127.0.0.1, real stores)."""

from __future__ import annotations

import asyncio

from tests.conftest import Person
from tests.helpers import error_of, new_chat, open_events, say, transcript
from tests.http_server import RunningServer
from tests.test_http_replay import counters, last_step_of_turn, ok, step_ids

UNDONE = ("kazma_time_travel_rewind_total", (("action", "undo"), ("outcome", "ok")))
UNDO_REFUSED = ("kazma_time_travel_rewind_total", (("action", "undo"), ("outcome", "turn_running")))


async def test_undo_brings_the_chat_back_and_reloads_every_open_tab(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "remember: tea is good")
    await say(ann.http, chat, "remember: coffee is better")
    await say(ann.http, chat, "hello")
    rows, steps = await transcript(ann.http, chat), await step_ids(ann.http, chat)
    target = await last_step_of_turn(ann.http, chat, 1)
    before = await counters(ann.http)

    restored = ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target}))
    assert restored["undo"]["snapshot_id"] == target
    assert ok(await ann.http.get(f"/api/replay/undo/{chat}"))["snapshot_id"] == target
    async with server.client(ann.token) as tab, open_events(tab, chat) as events:
        undone = ok(await ann.http.post("/api/replay/undo", json={"thread_id": chat}))
        reload = await events.until("reload")
    assert reload.data == {"reason": "undone"}
    assert undone == {
        "thread_id": chat, "undone_snapshot_id": target, "turn_index": 3,
        "back": {"messages": 4, "memories": 1, "forgotten_again": 0, "cards": 0, "steps": len(steps) - steps.index(target) - 1},
    }
    assert await transcript(ann.http, chat) == rows
    assert await step_ids(ann.http, chat) == steps
    assert ok(await ann.http.get(f"/api/replay/undo/{chat}")) is None
    again = await say(ann.http, chat, "what do I know?")
    assert (again["turn_index"], again["reply"]) == (4, 'You said: "what do I know?". I know: tea is good; coffee is better.')
    after = await counters(ann.http)
    assert after[UNDONE] - before.get(UNDONE, 0.0) == 1


async def test_nothing_to_undo_is_404_with_a_sentence_saying_why(server: RunningServer, ann: Person, bob: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "hello")
    await say(ann.http, chat, "hello again")
    never = error_of(await ann.http.post("/api/replay/undo", json={"thread_id": chat}), 404, "not_found")
    assert "no restore to undo" in never["message"]
    target = await last_step_of_turn(ann.http, chat, 1)
    ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target}))
    # Somebody else's chat: not found, and the restore stays undoable for its owner.
    error_of(await bob.http.post("/api/replay/undo", json={"thread_id": chat}), 404, "not_found")
    error_of(await bob.http.get(f"/api/replay/undo/{chat}"), 404, "not_found")
    await say(ann.http, chat, "a new turn")
    moved = error_of(await ann.http.post("/api/replay/undo", json={"thread_id": chat}), 404, "not_found")
    assert "moved on" in moved["message"] and moved["reason"] == "undo_turn"


async def test_undo_is_refused_while_a_turn_runs(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "hello")
    await say(ann.http, chat, "remember: tea")
    ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": await last_step_of_turn(ann.http, chat, 1)}))
    before = await counters(ann.http)
    # Another tab starts a slow turn: an undo now is refused, and the turn then ends the undo.
    started = await ann.http.post(f"/api/chats/{chat}/messages?wait=false", json={"text": "sleep 1"})
    assert started.status_code == 202, started.text
    error_of(await ann.http.post("/api/replay/undo", json={"thread_id": chat}), 409, "turn_running")
    after = await counters(ann.http)
    assert after[UNDO_REFUSED] - before.get(UNDO_REFUSED, 0.0) == 1
    while (await transcript(ann.http, chat))[-1][1] != "assistant":
        await asyncio.sleep(0.05)
    error_of(await ann.http.post("/api/replay/undo", json={"thread_id": chat}), 404, "not_found")


async def test_compare_takes_a_step_of_a_fork_and_one_of_its_source(server: RunningServer, ann: Person, bob: Person) -> None:
    chat = await new_chat(ann.http, "origin")
    await say(ann.http, chat, "hello")
    await say(ann.http, chat, "remember: tea")
    first = await last_step_of_turn(ann.http, chat, 1)
    fork = ok(await ann.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": first}), 201)["thread_id"]
    await say(ann.http, fork, "remember: coffee")
    a, b = await last_step_of_turn(ann.http, chat, 2), await last_step_of_turn(ann.http, fork, 2)
    diff = ok(await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": a[:8], "b": b[:8], "b_thread_id": fork}))
    assert (diff["a"]["thread_id"], diff["b"]["thread_id"]) == (chat, fork)
    assert (diff["a"]["snapshot_id"], diff["b"]["snapshot_id"]) == (a, b)
    assert diff["text"]
    # Without b_thread_id, b is a step of the same chat: the fork's step is not found there.
    error_of(await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": a, "b": b}), 404, "not_found")
    # Someone who may not read one of the two chats learns nothing.
    error_of(
        await bob.http.post("/api/replay/compare", json={"thread_id": chat, "a": a, "b": b, "b_thread_id": fork}), 404, "not_found"
    )
    bobs = await new_chat(bob.http)
    await say(bob.http, bobs, "hello")
    error_of(
        await bob.http.post("/api/replay/compare", json={"thread_id": bobs, "a": await last_step_of_turn(bob.http, bobs, 1),
                                                          "b": b, "b_thread_id": fork}), 404, "not_found",
    )
    unrelated = await new_chat(ann.http)
    await say(ann.http, unrelated, "hello")
    error_of(
        await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": a, "b": await last_step_of_turn(ann.http, unrelated, 1),
                                                          "b_thread_id": unrelated}), 400, "invalid_input",
    )
