"""An answer reaches the person as it is made: `delta` events on the chat's event stream, in
order, each with an id, before the turn's `message`, which is the pieces joined; `tool`
events while a tool call runs and when it ends; the transcript's answer row with the tools.

Over real HTTP against the real server with the offline model (which streams word by word).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kazma_core.catalogue.errors import ERRORS
from kazma_core.settings import Settings
from tests.conftest import Person, make_settings
from tests.helpers import SseEvent, new_chat, open_events, say, transcript
from tests.http_server import RunningServer

STOPPED = ERRORS["turn_stopped"].en
LONG = " ".join(f"word{n}" for n in range(60))


def pieces(events: list[SseEvent], turn: int) -> list[str]:
    return [e.data["text"] for e in events if e.type == "delta" and e.data["turn_index"] == turn]


async def messages_of(person: Person, chat: str) -> list[dict[str, object]]:
    response = await person.http.get(f"/api/chats/{chat}/messages")
    assert response.status_code == 200, response.text
    return response.json()["messages"]  # type: ignore[no-any-return]


async def test_an_answer_streams_in_pieces_before_its_message_which_is_the_pieces_joined(
    server: RunningServer, ann: Person
) -> None:
    chat = await new_chat(ann.http)
    async with open_events(ann.http, chat) as events:
        reply = (await say(ann.http, chat, "hello there, how are you today"))["reply"]
        await events.until("turn", turn_index=1)
    kinds = [e.type for e in events.seen]
    assert kinds.index("delta") > kinds.index("message")  # the person's message first
    answer = next(e for e in events.seen if e.type == "message" and e.data["role"] == "assistant")
    last_delta = max(i for i, e in enumerate(events.seen) if e.type == "delta")
    assert last_delta < events.seen.index(answer)  # every piece before the answer's message
    said = pieces(events.seen, 1)
    assert len(said) >= 2  # the first word at once, then the rest
    assert "".join(said) == answer.data["text"] == reply
    ids = [e.id for e in events.seen]
    assert all(ids) and len(set(ids)) == len(ids)
    # The transcript holds the whole answer once.
    assert await transcript(ann.http, chat) == [(1, "user", "hello there, how are you today"), (1, "assistant", reply)]


async def test_a_reader_back_with_its_last_event_id_gets_the_pieces_it_missed(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with open_events(ann.http, chat) as first:
        reply = (await say(ann.http, chat, "tell me something"))["reply"]
        await first.until("delta", turn_index=1)  # it read the first piece, then lost the connection
    async with open_events(ann.http, chat, first.last_id) as second:
        await second.until("turn", turn_index=1)
    assert "".join(pieces(first.seen, 1) + pieces(second.seen, 1)) == reply
    assert [e.type for e in second.seen if e.type in ("message", "turn")] == ["message", "turn"]


async def test_tool_calls_show_while_they_run_and_stay_on_the_answers_row(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with open_events(ann.http, chat) as events:
        await say(ann.http, chat, "calc 6*7")
        await events.until("turn", turn_index=1)
    tools = [e for e in events.seen if e.type == "tool"]
    assert [t.data["state"] for t in tools] == ["running", "done"]
    running, done = (t.data for t in tools)
    assert running["call_id"] == done["call_id"] and running["turn_index"] == 1
    assert (done["name"], done["label"], done["label_id"]) == ("calculator", "Calculate", "tools.calculator")
    assert done["args"] == {"expression": "6*7"} and done["result"] == "6*7 = 42" and done["result_chars"] == 8
    kinds = [e.type for e in events.seen]
    assert kinds.index("tool") < kinds.index("delta")  # the answer after its tool
    assert "".join(pieces(events.seen, 1)) == "6*7 = 42"

    # A reload shows the same block on the answer's row, and none on the question's.
    rows = await messages_of(ann, chat)
    assert [r["role"] for r in rows] == ["user", "assistant"]
    assert rows[0].get("tools") in (None, [])
    assert rows[1]["tools"] == [done]


async def test_a_failed_tool_and_a_long_result_are_shown_as_such(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    await say(ann.http, chat, "write ../outside.txt: hi")  # refused before it could need an approval
    await say(ann.http, chat, "big 3")
    rows = await messages_of(ann, chat)
    failed = rows[1]["tools"][0]  # type: ignore[index]
    assert failed["state"] == "failed" and failed["label"] == "Write a file" and "go up" in failed["result"]
    long = rows[3]["tools"][0]  # type: ignore[index]
    assert long["state"] == "done" and long["result_chars"] > 3 * 1000 and len(long["result"]) == 2000


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # Words 0.1 s apart: a Stop pressed after the first lands while the answer is being said.
    return make_settings(tmp_path / "data", model={"piece_seconds": 0.1})


async def test_stop_while_the_answer_is_said_keeps_what_was_said_marked_stopped(server: RunningServer, ann: Person) -> None:
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as events:
        started = await ann.http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": LONG})
        assert started.status_code == 202, started.text
        await events.until("delta", turn_index=1)
        stopped = await ann.http.post(f"/api/chats/{chat}/stop")
        assert stopped.json()["stopped"] is True
        end = await events.until("message", role="stopped")
        await events.until("turn", turn_index=1)
    said = "".join(pieces(events.seen, 1))
    assert said and len(said) < len(f'You said: "{LONG}".')  # cut while it was said
    assert end.data["text"] == f"{said}\n\n({STOPPED})"
    assert await transcript(ann.http, chat) == [(1, "user", LONG), (1, "stopped", end.data["text"])]
    # The chat goes on at once, and the model saw what it had said.
    assert (await say(ann.http, chat, "calc 2+2"))["reply"] == "2+2 = 4"
    state = await server.core.turns.graph.aget_state(server.core.turns.config(chat))
    assert state.values["messages"][1].content == said


async def test_a_reader_who_opens_the_chat_mid_answer_gets_the_answer_from_its_first_word(
    server: RunningServer, ann: Person
) -> None:
    """Broke: a page opened while an answer was being said showed only the words after it
    connected (the transcript it read holds no answer until the turn ends)."""
    chat = await new_chat(ann.http)
    async with server.client(ann.token) as listener, open_events(listener, chat) as first:
        started = await ann.http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": LONG})
        assert started.status_code == 202, started.text
        await first.until("delta", turn_index=1)
        await first.until("delta", turn_index=1)  # a few words said already
        async with server.client(ann.token) as late_http, open_events(late_http, chat) as late:
            answer = await late.until("message", role="assistant")
            await late.until("turn", turn_index=1)
    assert "".join(pieces(late.seen, 1)) == answer.data["text"] == f'You said: "{LONG}". I know no facts yet.'
    # Opened once the turn ended, a reader is given none of its pieces again (they are in the transcript).
    async with open_events(ann.http, chat) as after:
        await say(ann.http, chat, "calc 1+1")
        await after.until("turn", turn_index=2)
    assert pieces(after.seen, 1) == []
