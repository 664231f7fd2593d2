"""Stopping a running turn over HTTP and with /stop: the real server, the offline model's slow turns."""

from __future__ import annotations

import httpx
from langchain_core.messages import AIMessage, ToolMessage

from tests.conftest import Person
from tests.helpers import error_of, new_chat, open_events, say, transcript
from tests.http_server import RunningServer

STOPPED = "Stopped before Kazma answered, as you asked. Send a message to go on."


async def start(http: httpx.AsyncClient, chat: str, text: str) -> None:
    accepted = await http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": text})
    assert accepted.status_code == 202, accepted.text


async def stop(http: httpx.AsyncClient, chat: str) -> dict[str, object]:
    response = await http.post(f"/api/chats/{chat}/stop")
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


async def test_a_slow_tool_is_stopped_and_the_chat_takes_the_next_message(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as events:
        await start(ann.http, chat, "sleep 600")
        await events.until("message", role="user")
        assert await stop(ann.http, chat) == {"stopped": True, "thread_id": chat}
        said = await events.until("message", role="stopped")
    assert said.data["text"] == STOPPED
    assert await transcript(ann.http, chat) == [(1, "user", "sleep 600"), (1, "stopped", STOPPED)]
    # The chat goes on at once: nothing holds it, and the agent's history is a finished turn.
    assert (await say(ann.http, chat, "calc 2+2"))["reply"] == "2+2 = 4"
    state = await server.core.turns.graph.aget_state(server.core.turns.config(chat))
    assert not state.next
    called = {c["id"] for m in state.values["messages"] if isinstance(m, AIMessage) for c in m.tool_calls}
    answered = {m.tool_call_id for m in state.values["messages"] if isinstance(m, ToolMessage)}
    assert called <= answered  # no tool call is left without its result


async def test_a_long_turn_stops_at_a_step_boundary_and_keeps_the_steps_it_saved(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as events:
        await start(ann.http, chat, "steps 5000")
        await events.until("snapshot")
        await events.until("snapshot")
        assert (await stop(ann.http, chat))["stopped"] is True
        await events.until("message", role="stopped")
    steps = await server.core.snapshots.list_steps(chat)
    assert 2 <= len(steps) < 5000
    # Every saved step can be read, and the newest is a state the agent really was in.
    newest = (await ann.http.get(f"/api/replay/snapshots/{chat}/{steps[-1].id}")).json()
    assert newest["messages"][0]["text"] == "steps 5000"
    listing = (await ann.http.get(f"/api/replay/snapshots/{chat}")).json()
    restored = await ann.http.post("/api/replay/restore", json={"thread_id": chat, "snapshot_id": listing["snapshots"][-1]["snapshot_id"]})
    assert restored.status_code == 200, restored.text
    assert (await say(ann.http, chat, "calc 1+1"))["reply"] == "1+1 = 2"


async def test_stop_with_nothing_running_answers_200_and_changes_nothing(ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "calc 1+2")
    assert await stop(ann.http, chat) == {"stopped": False, "thread_id": chat}
    assert await transcript(ann.http, chat) == [(1, "user", "calc 1+2"), (1, "assistant", "1+2 = 3")]


async def test_another_persons_chat_cannot_be_stopped(ann: Person, bob: Person) -> None:
    chat = await new_chat(ann.http)
    error_of(await bob.http.post(f"/api/chats/{chat}/stop"), 404, "not_found")


async def test_the_stop_command_stops_the_turn_and_says_so(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as events:
        await start(ann.http, chat, "sleep 600")
        await events.until("message", role="user")
        answer = (await ann.http.post(f"/api/chats/{chat}/commands", json={"text": "/stop"})).json()
        assert answer["kind"] == "answer" and answer["data"]["stopped"] is True
        assert answer["text"] == "Stopped the running turn. What it saved so far stays; send a message to go on."
    again = (await ann.http.post(f"/api/chats/{chat}/commands", json={"text": "/stop"})).json()
    assert again["text"] == "Nothing is running in this chat: there was nothing to stop."
