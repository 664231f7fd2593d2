"""The seven replay routes (and the restore preview) over real HTTP: the real app under uvicorn
on 127.0.0.1, real stores, the offline model, httpx as a script or the TUI would use it.

Every route's success shape, every error code with its status and body, the ownership
matrix, the Prometheus counters at /metrics, and schemathesis against the OpenAPI
description (no answer may be a server error).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from langchain_core.messages import AIMessage, HumanMessage
from prometheus_client.parser import text_string_to_metric_families
from schemathesis.checks import CHECKS, is_check_class
from schemathesis.generation import GenerationMode

from kazma_core.messages import encode_message
from kazma_core.settings import Settings
from kazma_core.stores.snapshots import NewStep
from tests.conftest import Person, make_settings, user_file
from tests.helpers import chat_ids, error_of, new_chat, open_events, say, transcript, turn_over
from tests.http_server import RunningServer, serve_kazma

# The same behaviour on both store engines.
pytestmark = pytest.mark.engines()

BAD_ADDRESSES = ("%%%%%%%%", "________", "abc")


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def listing(http: httpx.AsyncClient, chat: str) -> dict[str, Any]:
    return ok(await http.get(f"/api/replay/snapshots/{chat}"))  # type: ignore[no-any-return]


async def step_ids(http: httpx.AsyncClient, chat: str) -> list[str]:
    return [s["snapshot_id"] for s in (await listing(http, chat))["snapshots"]]


async def last_step_of_turn(http: httpx.AsyncClient, chat: str, turn: int) -> str:
    return [s["snapshot_id"] for s in (await listing(http, chat))["snapshots"] if s["turn_index"] == turn][-1]


async def threads_of(http: httpx.AsyncClient) -> list[dict[str, Any]]:
    return ok(await http.get("/api/replay/threads"))["threads"]  # type: ignore[no-any-return]


async def put_step(server: RunningServer, chat: str, step_id: str, turn: int) -> None:
    """A step with an id of the test's choosing, written through the real snapshot store."""
    msgs = [HumanMessage("hi", id=f"h{turn}"), AIMessage("hello", id=f"a{turn}")]
    await server.core.snapshots.put(
        NewStep(step_id, chat, turn, 0, time.time(), "m", ["hi"], {"turn_index": turn, "iteration": 0},
                [m.id for m in msgs], lambda i: encode_message(msgs[i])),
        server.core.recorder.budgets,
    )


# -- the routes and their answers ------------------------------------------------------------------


async def test_the_thread_list_shows_only_the_callers_chats_that_have_steps(ann: Person, bob: Person) -> None:
    with_steps = await new_chat(ann.http, "with steps")
    await new_chat(ann.http, "empty")
    bobs = await new_chat(bob.http, "bob's")
    await say(ann.http, with_steps, "calc 1+2")
    await say(bob.http, bobs, "calc 2+2")

    listed = await threads_of(ann.http)
    assert [(t["thread_id"], t["title"]) for t in listed] == [(with_steps, "with steps")]
    assert listed[0]["steps"] == len(await step_ids(ann.http, with_steps)) >= 1
    assert listed[0]["bytes"] > 0
    assert listed[0]["last_at"] > 0
    assert [t["thread_id"] for t in await threads_of(bob.http)] == [bobs]


async def test_a_chats_steps_come_in_capture_order_and_each_turn_once_with_numbered_steps(
    server: RunningServer, ann: Person
) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "steps 2")
    await say(ann.http, chat, "calc 1+2")

    body = await listing(ann.http, chat)
    assert body["thread_id"] == chat
    snapshots = body["snapshots"]
    assert [s["snapshot_id"] for s in snapshots] == [s.id for s in await server.core.snapshots.list_steps(chat)]
    assert [(s["turn_index"], s["iteration"]) for s in snapshots[:3]] == [(1, 0), (1, 1), (1, 2)]
    assert {s["turn_index"] for s in snapshots[3:]} == {2}
    assert [s["created_at"] for s in snapshots] == sorted(s["created_at"] for s in snapshots)
    for s in snapshots:
        assert s["thread_id"] == chat
        assert s["label"] == f"turn {s['turn_index']}, step {s['iteration']}"
        assert s["truncated"] is False
        assert s["size"] > 0 and s["message_count"] >= 1

    turns = body["turns"]
    assert [t["turn_index"] for t in turns] == [1, 2]  # each turn once
    assert turns[0]["questions"] == ["steps 2"]
    assert turns[1]["questions"] == ["calc 1+2"]
    used_note = {"action": "took a note", "did": {"kind": "used", "tools": ["note"]}}
    answered = {"action": "answered", "did": {"kind": "answered"}}
    assert turns[0]["steps"] == [
        {"step": i, "snapshot_id": snapshots[i]["snapshot_id"], "label": f"turn 1, step {i}", "truncated": False,
         **(answered if i == 2 else used_note)}
        for i in range(3)
    ]
    # Each step says what it did, the list and the turns alike.
    assert [s["action"] for s in snapshots] == ["took a note", "took a note", "answered", "calculated", "answered"]
    assert [st["label"] for st in turns[1]["steps"]] == [f"turn 2, step {i}" for i in range(len(turns[1]["steps"]))]
    assert [st["snapshot_id"] for t in turns for st in t["steps"]] == [s["snapshot_id"] for s in snapshots]


async def test_a_step_read_by_an_eight_character_prefix_shows_its_messages(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+2")
    last = (await step_ids(ann.http, chat))[-1]

    for address in (last[:8], last[:8].upper(), last):
        body = ok(await ann.http.get(f"/api/replay/snapshots/{chat}/{address}"))
        assert body["snapshot"]["snapshot_id"] == last
        assert body["snapshot"]["label"] == f"turn 1, step {body['snapshot']['iteration']}"
    messages = body["messages"]
    said = [(m["role"], m["text"]) for m in messages if m["role"] in ("user", "assistant") and m["text"]]
    assert ("user", "calc 1+2") in said
    assert said[-1] == ("assistant", "1+2 = 3")
    calls = [{"name": "calculator", "args": {"expression": "1+2"}, "text": "calculator (expression: 1+2)"}]
    assert any(m.get("tool_calls") == calls and m["said"] == "→ calculator (expression: 1+2)" for m in messages)
    assert {"plan", "routing", "cost", "scratchpad", "model", "gates"} <= body.keys()


async def test_a_steps_messages_page_as_the_transcript_does_and_mark_what_the_step_added(ann: Person) -> None:
    chat = await new_chat(ann.http)
    for n in range(1, 6):
        await say(ann.http, chat, f"note {n}")
    last = (await step_ids(ann.http, chat))[-1]
    path = f"/api/replay/snapshots/{chat}/{last}"
    whole = ok(await ann.http.get(path))
    assert [m["text"] for m in whole["messages"] if m["role"] == "user"] == [f"note {n}" for n in range(1, 6)]
    assert whole["first"] == 0 and whole["more"] is False
    count = whole["snapshot"]["message_count"]
    assert count == len(whole["messages"]) == 10

    # The newest page, then the pages before it, oldest first within each: together the whole step.
    page = ok(await ann.http.get(path, params={"limit": 4}))
    assert (page["first"], page["more"]) == (6, True)
    assert page["messages"] == whole["messages"][6:]
    assert page["snapshot"]["message_count"] == count  # the step is counted whole, not the page
    read = page["messages"]
    while page["more"]:
        page = ok(await ann.http.get(path, params={"before": page["first"], "limit": 4}))
        read = page["messages"] + read
    assert read == whole["messages"] and page["first"] == 0
    assert ok(await ann.http.get(path, params={"before": 3}))["messages"] == whole["messages"][:3]  # a page of 100
    assert ok(await ann.http.get(path, params={"before": 0}))["messages"] == []

    # What the step added: its turn's question and answer, new since the chat's step before.
    assert whole["added_from"] == 8
    assert whole["messages"][whole["added_from"]]["text"] == "note 5"
    assert ok(await ann.http.get(path, params={"limit": 1}))["added_from"] == 8
    first = (await step_ids(ann.http, chat))[0]
    assert ok(await ann.http.get(f"/api/replay/snapshots/{chat}/{first}"))["added_from"] == 0  # all of it is new

    for bad in ({"limit": 0}, {"limit": 1001}, {"before": -1}, {"before": "x"}):
        error_of(await ann.http.get(path, params=bad), 422, "invalid_input")


async def test_the_restore_preview_names_the_file_written_after_the_step(ann: Person, settings: Settings) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    card = (await say(ann.http, chat, "write a.txt: hi"))["gates"][0]["card_id"]
    ok(await ann.http.post(f"/api/chats/{chat}/approvals/{card}", json={"decision": "approve"}))
    assert (user_file(settings, "ann", "a.txt")).read_text() == "hi"
    before = await step_ids(ann.http, chat)
    target = await last_step_of_turn(ann.http, chat, 1)

    preview = ok(await ann.http.get(f"/api/replay/snapshots/{chat}/{target[:8]}/preview"))
    assert preview["snapshot"]["snapshot_id"] == target
    assert preview["restorable"] is True
    assert preview["later_turns"] == 1
    assert preview["later_steps"] == len(before) - before.index(target) - 1 > 0
    assert preview["side_effects"] == [
        {"kind": "file_written", "tool": "write_file", "args": {"path": "a.txt", "text": "hi"}}
    ]
    # Looking changes nothing.
    assert await step_ids(ann.http, chat) == before
    assert len(await transcript(ann.http, chat)) == 4


async def test_restore_shortens_the_transcript_forgets_later_facts_and_reloads_an_open_tab(
    server: RunningServer, ann: Person
) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "remember: tea is good")
    await say(ann.http, chat, "remember: coffee is better")
    assert (await say(ann.http, chat, "hello"))["reply"] == 'You said: "hello". I know: tea is good; coffee is better.'
    before = await step_ids(ann.http, chat)
    target = await last_step_of_turn(ann.http, chat, 1)

    async with server.client(ann.token) as tab, open_events(tab, chat) as events:
        restored = ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target[:8]}))
        reload = await events.until("reload")
    assert reload.data == {"reason": "restored", "snapshot_id": target}
    assert restored["thread_id"] == chat
    assert restored["turn_index"] == 1
    assert restored["snapshot"]["snapshot_id"] == target
    assert restored["removed_steps"] == len(before) - before.index(target) - 1

    assert await transcript(ann.http, chat) == [
        (1, "user", "remember: tea is good"), (1, "assistant", "Remembered: tea is good"),
    ]
    assert await step_ids(ann.http, chat) == before[: before.index(target) + 1]
    # The next message continues from the step: turn 2 again, and coffee was never said.
    again = await say(ann.http, chat, "what do I know?")
    assert again["turn_index"] == 2
    assert again["reply"] == 'You said: "what do I know?". I know: tea is good.'


async def test_a_fork_answers_201_and_the_new_chat_is_listed_with_its_lineage(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http, "origin")
    await say(ann.http, chat, "remember: tea is good")
    await say(ann.http, chat, "remember: coffee is better")
    before = (await transcript(ann.http, chat), await step_ids(ann.http, chat))
    target = await last_step_of_turn(ann.http, chat, 1)
    iteration = next(s["iteration"] for s in (await listing(ann.http, chat))["snapshots"] if s["snapshot_id"] == target)

    forked = ok(await ann.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": target[:8]}), 201)
    fork = forked["thread_id"]
    assert fork != chat
    assert forked["title"] == "origin (fork)"
    lineage = {"thread_id": chat, "snapshot_id": target, "turn_index": 1, "iteration": iteration}
    assert forked["forked_from"] == lineage
    assert await step_ids(ann.http, fork) == [forked["snapshot_id"]]

    chats = {c["thread_id"]: c for c in ok(await ann.http.get("/api/chats"))["chats"]}
    assert chats.keys() == {chat, fork}
    assert chats[fork]["forked_from"] == lineage
    assert chats[fork]["title"] == "origin (fork)"
    assert chats[chat]["forked_from"] is None
    assert await transcript(ann.http, fork) == [
        (1, "user", "remember: tea is good"), (1, "assistant", "Remembered: tea is good"),
    ]
    assert (await say(ann.http, fork, "hi"))["reply"] == 'You said: "hi". I know: tea is good.'
    # The original is not touched.
    assert (await transcript(ann.http, chat), await step_ids(ann.http, chat)) == before
    assert (await say(ann.http, chat, "hi"))["reply"] == 'You said: "hi". I know: tea is good; coffee is better.'


async def test_compare_answers_a_text_and_a_structured_difference(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+2")
    ids = await step_ids(ann.http, chat)
    first, last = ids[0], ids[-1]

    body = ok(await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": first[:8], "b": last}))
    assert body["a"]["label"] == "turn 1, step 0"
    assert body["b"]["label"] == f"turn 1, step {len(ids) - 1}"
    added = body["messages"]["added"]
    assert added and added[-1]["role"] == "assistant" and added[-1]["text"] == "1+2 = 3"
    assert body["messages"]["removed"] == []
    assert {"a", "b"} <= body["plan"].keys() and {"a", "b"} <= body["model"].keys()
    assert isinstance(body["cost"], dict) and isinstance(body["routing"], dict)
    text = body["text"]
    assert text.startswith(f"turn 1, step 0 → turn 1, step {len(ids) - 1}")
    assert f"Messages: {len(added)} added, 0 removed" in text
    assert "Kazma: 1+2 = 3" in text  # roles are named as on every other surface

    same = ok(await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": last, "b": last}))
    assert same["messages"] == {"added": [], "removed": [], "changed": [], "same": same["b"]["message_count"]}


async def test_clearing_a_chats_steps_answers_how_many_and_leaves_none(ann: Person) -> None:
    chat = await new_chat(ann.http)
    kept = await new_chat(ann.http)
    await say(ann.http, chat, "steps 2")
    await say(ann.http, kept, "calc 1+1")
    count = len(await step_ids(ann.http, chat))
    kept_steps = await step_ids(ann.http, kept)

    assert ok(await ann.http.delete(f"/api/replay/threads/{chat}")) == {"thread_id": chat, "deleted": count}
    assert await listing(ann.http, chat) == {"thread_id": chat, "snapshots": [], "turns": []}
    assert [t["thread_id"] for t in await threads_of(ann.http)] == [kept]
    assert await step_ids(ann.http, kept) == kept_steps
    assert len(await transcript(ann.http, chat)) == 2  # the chat itself stays
    assert ok(await ann.http.delete(f"/api/replay/threads/{chat}")) == {"thread_id": chat, "deleted": 0}


async def test_the_chat_stream_announces_steps_whose_ids_the_list_then_shows(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as tab, open_events(tab, chat) as events:
        sent = asyncio.create_task(say(ann.http, chat, "steps 2"))
        try:
            await events.until("message", role="assistant")
            await asyncio.wait_for(sent, 10)
        finally:
            sent.cancel()
        announced = [e.data["snapshot_id"] for e in events.seen if e.type == "snapshot"]
    assert len(announced) == 3
    assert await step_ids(ann.http, chat) == announced


# -- refusals and their codes -------------------------------------------------------------------------


async def test_restore_while_a_turn_runs_is_turn_running(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    target = (await step_ids(ann.http, chat))[-1]
    async with server.client(ann.token) as tab, open_events(tab, chat) as events:
        accepted = await ann.http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": "sleep 2"})
        assert accepted.status_code == 202, accepted.text
        await events.until("message", role="user", text="sleep 2")  # the turn holds the chat now

        refused = error_of(
            await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target}), 409, "turn_running"
        )
        assert "gates" not in refused
        error_of(await ann.http.get(f"/api/replay/snapshots/{chat}/{target}/preview"), 409, "turn_running")

        answer = await events.until("message", role="assistant")
    assert answer.data["text"] == "Slept 2 seconds."
    await turn_over(server, chat)
    assert [row[0] for row in await transcript(ann.http, chat)] == [1, 1, 2, 2]  # nothing was taken back


async def test_restore_while_an_approval_waits_is_approval_pending_naming_the_card(
    ann: Person, settings: Settings
) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    target = await last_step_of_turn(ann.http, chat, 1)
    card = (await say(ann.http, chat, "write a.txt: hi"))["gates"][0]
    before = (await transcript(ann.http, chat), await step_ids(ann.http, chat))

    for response in (
        await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target}),
        await ann.http.get(f"/api/replay/snapshots/{chat}/{target}/preview"),
    ):
        body = error_of(response, 409, "approval_pending")
        assert [(g["card_id"], g["tool"], g["status"]) for g in body["gates"]] == [(card["card_id"], "write_file", "pending")]
        assert body["gates"][0]["args"] == {"path": "a.txt", "text": "hi"}

    assert (await transcript(ann.http, chat), await step_ids(ann.http, chat)) == before
    listed = ok(await ann.http.get(f"/api/chats/{chat}/approvals"))["approvals"]
    assert [(a["card_id"], a["status"]) for a in listed] == [(card["card_id"], "pending")]
    assert not (user_file(settings, "ann", "a.txt")).exists()


async def test_a_step_saved_cut_can_be_read_but_restore_and_fork_are_snapshot_truncated(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    assert (await say(ann.http, chat, "big 3000"))["reply"] == "Received 3000 KB of text."
    body = await listing(ann.http, chat)
    cut = [s["snapshot_id"] for s in body["snapshots"] if s["truncated"]]
    assert cut, body["snapshots"]
    assert any(st["truncated"] for t in body["turns"] for st in t["steps"] if st["snapshot_id"] in cut)
    before = (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http))

    assert ok(await ann.http.get(f"/api/replay/snapshots/{chat}/{cut[0]}"))["snapshot"]["truncated"] is True
    preview = ok(await ann.http.get(f"/api/replay/snapshots/{chat}/{cut[0]}/preview"))
    assert preview["restorable"] is False
    for route in ("/api/replay/restore", "/api/replay/fork"):
        refused = error_of(await ann.http.post(route, json={"thread_id": chat, "snapshot_id": cut[0]}), 409, "snapshot_truncated")
        assert "turn 2" in refused["message"]
    assert (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http)) == before


async def test_an_unknown_step_or_chat_is_not_found_on_every_route(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    real = (await step_ids(ann.http, chat))[-1]
    unknown_step = uuid.uuid4().hex
    unknown_chat = uuid.uuid4().hex

    for step in (unknown_step, unknown_step[:8]):
        error_of(await ann.http.get(f"/api/replay/snapshots/{chat}/{step}"), 404, "not_found")
        error_of(await ann.http.get(f"/api/replay/snapshots/{chat}/{step}/preview"), 404, "not_found")
        error_of(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": step}), 404, "not_found")
        error_of(await ann.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": step}), 404, "not_found")
        error_of(await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": real, "b": step}), 404, "not_found")
        error_of(await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": step, "b": real}), 404, "not_found")

    for response in (
        await ann.http.get(f"/api/replay/snapshots/{unknown_chat}"),
        await ann.http.get(f"/api/replay/snapshots/{unknown_chat}/{real}"),
        await ann.http.get(f"/api/replay/snapshots/{unknown_chat}/{real}/preview"),
        await ann.http.post("/api/replay/restore", json={"thread_id": unknown_chat, "snapshot_id": real}),
        await ann.http.post("/api/replay/fork", json={"thread_id": unknown_chat, "snapshot_id": real}),
        await ann.http.post("/api/replay/compare", json={"thread_id": unknown_chat, "a": real, "b": real}),
        await ann.http.delete(f"/api/replay/threads/{unknown_chat}"),
    ):
        error_of(response, 404, "not_found")
    assert await chat_ids(ann.http) == [chat]
    assert len(await transcript(ann.http, chat)) == 2


async def test_a_prefix_shared_by_two_steps_is_ambiguous_step_naming_both(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    first, second = "abcdef01" + "0" * 24, "abcdef01" + "f" * 24
    await put_step(server, chat, first, 1)
    await put_step(server, chat, second, 2)
    before = (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http))

    for response in (
        await ann.http.get(f"/api/replay/snapshots/{chat}/abcdef01"),
        await ann.http.get(f"/api/replay/snapshots/{chat}/ABCDEF01/preview"),
        await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": "abcdef01"}),
        await ann.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": "abcdef01"}),
        await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": first, "b": "abcdef01"}),
    ):
        body = error_of(response, 400, "ambiguous_step")
        assert body["candidates"] == [f"turn 1, step 0 ({first})", f"turn 2, step 0 ({second})"]
    assert (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http)) == before
    # One more character tells them apart.
    assert ok(await ann.http.get(f"/api/replay/snapshots/{chat}/abcdef010"))["snapshot"]["snapshot_id"] == first
    assert ok(await ann.http.get(f"/api/replay/snapshots/{chat}/abcdef01f"))["snapshot"]["snapshot_id"] == second


@pytest.mark.engines("sqlite")  # refused before any store is asked: the same on either engine
async def test_an_address_that_is_not_a_hex_prefix_of_eight_is_invalid_step(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    real = (await step_ids(ann.http, chat))[-1]
    before = (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http))

    for bad in BAD_ADDRESSES:
        in_path = quote(bad, safe="")
        for response in (
            await ann.http.get(f"/api/replay/snapshots/{chat}/{in_path}"),
            await ann.http.get(f"/api/replay/snapshots/{chat}/{in_path}/preview"),
            await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": bad}),
            await ann.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": bad}),
            await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": real, "b": bad}),
        ):
            body = error_of(response, 400, "invalid_step")
            assert body["address"] == bad, body
            assert body["reason"] == ("too_short" if bad == "abc" else "not_hex")
    assert (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http)) == before


async def test_an_unreadable_step_store_is_store_unavailable_never_an_empty_list(tmp_path: Path) -> None:
    data = tmp_path / "broken"
    data.mkdir()
    (data / "snapshots.db").write_bytes(b"garbage" * 1000)
    async with serve_kazma(make_settings(data)) as broken:
        _, token = await broken.add_user("ann")
        async with broken.client(token) as http:
            chat = await new_chat(http)
            error_of(await http.get("/api/replay/threads"), 503, "store_unavailable")
            error_of(await http.get(f"/api/replay/snapshots/{chat}"), 503, "store_unavailable")
            step = uuid.uuid4().hex
            error_of(await http.get(f"/api/replay/snapshots/{chat}/{step}"), 503, "store_unavailable")
            error_of(await http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": step}), 503, "store_unavailable")
            error_of(await http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": step}), 503, "store_unavailable")
            error_of(await http.delete(f"/api/replay/threads/{chat}"), 503, "store_unavailable")
            assert await chat_ids(http) == [chat]  # the rest of the API still answers


INVALID_BODIES: list[tuple[str, Any]] = [
    ("/api/replay/restore", {}),
    ("/api/replay/restore", {"thread_id": "x"}),
    ("/api/replay/restore", {"snapshot_id": "abcdef01"}),
    ("/api/replay/restore", {"thread_id": "x", "snapshot_id": "abcdef01", "overwrite": True}),
    ("/api/replay/restore", {"thread_id": "x", "snapshot_id": "abcdef01", "what": "everything"}),
    ("/api/replay/restore", {"thread_id": 5, "snapshot_id": "abcdef01"}),
    ("/api/replay/restore", {"thread_id": "", "snapshot_id": "abcdef01"}),
    ("/api/replay/restore", {"thread_id": "x" * 65, "snapshot_id": "abcdef01"}),
    ("/api/replay/restore", ["x", "abcdef01"]),
    ("/api/replay/fork", {}),
    ("/api/replay/fork", {"thread_id": "x", "snapshot_id": ""}),
    ("/api/replay/fork", {"thread_id": "x", "snapshot_id": "a" * 65}),
    ("/api/replay/fork", {"thread_id": "x", "snapshot_id": None}),
    ("/api/replay/compare", {}),
    ("/api/replay/compare", {"thread_id": "x", "a": "abcdef01"}),
    ("/api/replay/compare", {"thread_id": "x", "a": "abcdef01", "b": "abcdef02", "c": "abcdef03"}),
    ("/api/replay/compare", {"thread_id": "x", "snapshot_id": "abcdef01"}),
]


@pytest.mark.engines("sqlite")  # refused before any store is asked: the same on either engine
async def test_a_body_that_is_missing_fields_or_malformed_is_invalid_input(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    before = (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http))

    for path, listed in INVALID_BODIES:
        body = {**listed, "thread_id": chat} if isinstance(listed, dict) and listed.get("thread_id") == "x" else listed
        error_of(await ann.http.post(path, json=body), 422, "invalid_input")
    for path in ("/api/replay/restore", "/api/replay/fork", "/api/replay/compare"):
        error_of(await ann.http.post(path, content=b"{not json", headers={"Content-Type": "application/json"}), 422, "invalid_input")
        error_of(await ann.http.post(path), 422, "invalid_input")
    missing = error_of(await ann.http.post("/api/replay/restore", json={"thread_id": chat}), 422, "invalid_input")
    assert "snapshot_id" in missing["message"]  # it names the field to fix
    assert (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http)) == before


@pytest.mark.engines("sqlite")  # refused at the token, whose lookup every other test runs on both engines
async def test_every_replay_route_without_a_valid_token_is_unauthorized(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    step = (await step_ids(ann.http, chat))[-1]
    before = (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http))
    async with server.client() as anonymous, server.client("not-a-token") as forged:
        for http in (anonymous, forged):
            for response in (
                await http.get("/api/replay/threads"),
                await http.get(f"/api/replay/snapshots/{chat}"),
                await http.get(f"/api/replay/snapshots/{chat}/{step}"),
                await http.get(f"/api/replay/snapshots/{chat}/{step}/preview"),
                await http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": step}),
                await http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": step}),
                await http.post("/api/replay/compare", json={"thread_id": chat, "a": step, "b": step}),
                await http.delete(f"/api/replay/threads/{chat}"),
            ):
                error_of(response, 401, "unauthorized")
    assert (await transcript(ann.http, chat), await step_ids(ann.http, chat), await chat_ids(ann.http)) == before


# -- ownership ------------------------------------------------------------------------------------------


async def test_another_users_chat_and_step_are_not_found_on_every_replay_route_and_stay_unchanged(
    server: RunningServer, ann: Person, bob: Person
) -> None:
    chat = await new_chat(ann.http, "ann's")
    await say(ann.http, chat, "remember: ann likes tea")
    await say(ann.http, chat, "remember: ann hates rain")
    await say(ann.http, chat, "calc 2+2")
    first, last = (await step_ids(ann.http, chat))[0], (await step_ids(ann.http, chat))[-1]
    target = await last_step_of_turn(ann.http, chat, 1)
    bobs_own = await new_chat(bob.http, "bob's")
    facts = await server.core.store.memories.facts(chat)
    assert [f.text for f in facts] == ["ann likes tea", "ann hates rain"]

    async def state() -> tuple[Any, ...]:
        return (
            ok(await ann.http.get(f"/api/chats/{chat}/messages")),
            await listing(ann.http, chat),
            await server.core.store.memories.facts(chat),
            await chat_ids(ann.http),
        )

    before = await state()
    nowhere = uuid.uuid4().hex
    answers: dict[str, list[dict[str, Any]]] = {}
    for target_chat in (chat, nowhere):
        attempts = [
            await bob.http.get(f"/api/replay/snapshots/{target_chat}"),
            await bob.http.get(f"/api/replay/snapshots/{target_chat}/{target}"),
            await bob.http.get(f"/api/replay/snapshots/{target_chat}/{target[:8]}"),
            await bob.http.get(f"/api/replay/snapshots/{target_chat}/{target}/preview"),
            await bob.http.post("/api/replay/restore", json={"thread_id": target_chat, "snapshot_id": target}),
            await bob.http.post("/api/replay/fork", json={"thread_id": target_chat, "snapshot_id": target}),
            await bob.http.post("/api/replay/compare", json={"thread_id": target_chat, "a": first, "b": last}),
            await bob.http.delete(f"/api/replay/threads/{target_chat}"),
        ]
        answers[target_chat] = [error_of(r, 404, "not_found") for r in attempts]
    # A stranger learns nothing, not even that the chat exists.
    assert answers[chat] == answers[nowhere]
    # Nor can Bob reach Ann's step through a chat of his own.
    error_of(await bob.http.get(f"/api/replay/snapshots/{bobs_own}/{target}"), 404, "not_found")
    error_of(await bob.http.post("/api/replay/fork", json={"thread_id": bobs_own, "snapshot_id": target}), 404, "not_found")

    assert await threads_of(bob.http) == []
    assert await chat_ids(bob.http) == [bobs_own]
    assert await state() == before
    assert await server.core.store.memories.facts(chat) == facts
    assert (await say(ann.http, chat, "hi"))["reply"] == 'You said: "hi". I know: ann likes tea; ann hates rain.'


# -- metrics ----------------------------------------------------------------------------------------------


async def counters(http: httpx.AsyncClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = await http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


STORED = ("kazma_time_travel_capture_total", (("result", "stored"),))
RESTORED = ("kazma_time_travel_rewind_total", (("action", "restore"), ("outcome", "ok")))
FORKED = ("kazma_time_travel_rewind_total", (("action", "fork"), ("outcome", "ok")))
REFUSED = ("kazma_time_travel_rewind_total", (("action", "restore"), ("outcome", "invalid_step")))


async def test_metrics_count_stored_steps_restores_and_forks_in_the_prometheus_format(ann: Person) -> None:
    before = await counters(ann.http)
    assert STORED in before  # each capture result is exported from the start

    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+1")
    await say(ann.http, chat, "calc 2+2")
    captured = len(await step_ids(ann.http, chat))
    target = await last_step_of_turn(ann.http, chat, 1)
    ok(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": target}))
    ok(await ann.http.post("/api/replay/fork", json={"thread_id": chat, "snapshot_id": target}), 201)
    error_of(await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": "abc"}), 400, "invalid_step")

    after = await counters(ann.http)
    assert after[STORED] - before[STORED] >= captured > 0
    assert after[RESTORED] - before.get(RESTORED, 0.0) == 1
    assert after[FORKED] - before.get(FORKED, 0.0) == 1
    assert after[REFUSED] - before.get(REFUSED, 0.0) == 1
    families = {f.name: f for f in text_string_to_metric_families((await ann.http.get("/metrics")).text)}
    assert families["kazma_time_travel_capture"].type == "counter"
    assert families["kazma_time_travel_rewind"].type == "counter"


# -- schemathesis against the OpenAPI description ------------------------------------------------------

FUZZ_EXAMPLES = 25  # per operation and generation mode
# The operations are fuzzed in three tests, each a third of them against a server of its own: one test
# fuzzing all of them ran on one core (the server and Hypothesis share a process) for longer than any
# other test of the suite but the kill test, and xdist runs the thirds side by side.
FUZZ_SHARDS = 3
EVERY_CHECK = {
    "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_headers_conformance",
    "response_schema_conformance", "negative_data_rejection", "positive_data_acceptance", "missing_required_header",
    "unsupported_method", "allow_header_conformance", "use_after_free", "ensure_resource_availability",
    "ignored_auth", "object_level_authorization",
}
NOT_FUZZED = r"/events$"  # the chat's event stream never ends by itself (/slack/events is not in the description)


def run_late(operation: schemathesis.APIOperation) -> int:
    """Run what drops the chat's steps, and then the chat itself, after everything else."""
    if operation.method.upper() == "DELETE" and operation.path == "/api/chats/{thread_id}":
        return 2
    return int(operation.method.upper() == "DELETE" or operation.path.endswith("/forget"))


def fuzz_the_api(url: str, token: str, chat: str, steps: list[str], settings: list[str], shard: int) -> list[str]:
    """Every `FUZZ_SHARDS`th operation of /openapi.json from the `shard`th on, in positive and negative mode, checked with every check
    schemathesis has (status codes, content types, bodies, headers, valid data accepted, invalid
    data refused, auth enforced ...). Blocking (requests, Hypothesis): run in a thread while the
    server serves."""
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json", timeout=10).exclude(path_regex=NOT_FUZZED)
    operations = sorted((result.ok() for result in schema.get_all_operations()), key=lambda op: (run_late(op), op.label))
    assert len(operations) >= 20, [op.label for op in operations]
    config = schema.config.checks_config_for(operation=operations[0], phase=None)
    enabled = {c.__name__ for c in CHECKS.get_all() if not is_check_class(c) and config.get_by_name(name=c.__name__).enabled}
    assert enabled >= EVERY_CHECK, EVERY_CHECK - enabled
    assert not any(op.path.endswith("/events") for op in operations)
    headers = {"Authorization": f"Bearer {token}"}
    chats = st.sampled_from([None, chat])  # None: keep what schemathesis generated
    addresses = st.sampled_from([None, *steps, *(s[:8] for s in steps)])
    names = st.sampled_from([None, *settings])
    failures: list[str] = []

    for operation in operations[shard::FUZZ_SHARDS]:  # those run late still last
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @hypothesis_settings(
                max_examples=FUZZ_EXAMPLES, derandomize=True, database=None, deadline=None,
                phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck), print_blob=False,
            )
            @given(case=operation.as_strategy(generation_mode=mode), data=st.data())
            def check(case: Any, data: st.DataObject) -> None:
                # Aim many valid cases at the user's real chat, steps and settings, so they get past the
                # first check (an invalid case is left as generated: its invalid part must stay so).
                for where in (case.path_parameters, case.body) if mode is GenerationMode.POSITIVE else ():  # noqa: B023  (run below, in this iteration)
                    if not isinstance(where, dict):
                        continue
                    for key, real_ones in (("thread_id", chats), ("snapshot_id", addresses), ("a", addresses),
                                           ("b", addresses), ("name", names)):
                        if key in where and (real := data.draw(real_ones)) is not None:
                            where[key] = real
                response = case.call(base_url=url, headers=headers, timeout=15)
                case.validate_response(response, headers=headers)  # every check schemathesis has

            try:
                check()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE, operation.label  # nothing of it can be made invalid
            except (Exception, BaseExceptionGroup) as err:  # noqa: BLE001  collect them all, then report every operation that failed
                failures.append(f"{operation.label} [{mode.value}]: {err}")
    return failures


@pytest.mark.engines("sqlite")  # the routes and their schema are the same on either engine
@pytest.mark.parametrize("shard", range(FUZZ_SHARDS))
async def test_schemathesis_with_every_check_passes_on_every_documented_route(server: RunningServer, shard: int) -> None:
    _, token = await server.add_user("olga", role="owner")  # the owner reaches the settings and alerts too
    async with server.client(token) as http:
        chat = await new_chat(http, "fuzzed")
        await say(http, chat, "remember: tea is good")
        await say(http, chat, "steps 2")
        steps = await step_ids(http, chat)
        assert len(steps) >= 4
        settings = [s["name"] for s in ok(await http.get("/api/settings"))["settings"]]
        assert settings

    failures = await asyncio.wait_for(asyncio.to_thread(fuzz_the_api, server.url, token, chat, steps, settings, shard), 400)
    assert failures == [], "\n\n".join(failures)


async def test_acknowledging_an_alert_id_beyond_sqlites_range_is_invalid_input_not_a_server_error(
    server: RunningServer,
) -> None:
    """Found by schemathesis: POST /api/alerts/54176295105264582656/ack answered 500 (OverflowError in SQLite)."""
    _, token = await server.add_user("olga", role="owner")
    async with server.client(token) as http:
        for alert_id in (2**63, 54176295105264582656, 0, -1):
            error_of(await http.post(f"/api/alerts/{alert_id}/ack"), 422, "invalid_input")
        error_of(await http.post(f"/api/alerts/{2**63 - 1}/ack"), 404, "not_found")


@pytest.mark.engines("sqlite")  # the wording of a comparison: the engine has no part in it
async def test_the_comparison_summary_is_in_the_readers_language(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "hello")
    await say(ann.http, chat, "calc 1+1")
    listing = (await ann.http.get(f"/api/replay/snapshots/{chat}")).json()
    a, b = listing["snapshots"][0]["snapshot_id"], listing["snapshots"][-1]["snapshot_id"]
    english = (await ann.http.post("/api/replay/compare", json={"thread_id": chat, "a": a, "b": b})).json()
    arabic = (await ann.http.post(
        "/api/replay/compare", json={"thread_id": chat, "a": a, "b": b}, headers={"Accept-Language": "ar"}
    )).json()
    from commands.i18n import step_label

    assert english["text"].startswith("turn 1, step 0 → turn 2, step 1")
    a_label, b_label = (step_label(english[x]["turn_index"], english[x]["iteration"], "ar") for x in "ab")
    assert arabic["text"].splitlines()[0] == f"{a_label} ← {b_label}"
    assert arabic["messages"] == english["messages"]
