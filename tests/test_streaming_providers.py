"""Streaming with the remote providers: the real ChatOpenAI and ChatAnthropic against fake
servers on 127.0.0.1 that stream word by word, a few hundred ms apart, as the real APIs do.

The person's event stream carries each piece while the model server is still making the
rest, in order; joined they are the answer, the same words the server sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import langchain_anthropic  # noqa: F401  imported here, not while the server starts (a few seconds)
import langchain_openai  # noqa: F401
import pytest

from tests.conftest import make_settings, person
from tests.fakes.anthropic_server import serve_fake_anthropic
from tests.fakes.openai_server import SAID_FIRST, serve_fake_openai
from tests.helpers import SseEvent, new_chat, open_events, say
from tests.http_server import serve_kazma

KEY = "sk-test-0123456789"
QUESTION = "one two three four five"


def fake_of(provider: str) -> Callable[[], AbstractAsyncContextManager[Any]]:
    return {"openai": lambda: serve_fake_openai(KEY), "anthropic": lambda: serve_fake_anthropic(KEY)}[provider]


@pytest.fixture(params=["openai", "anthropic"])
async def remote(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Any, Any]]:
    provider = request.param
    async with fake_of(provider)() as fake:
        model = {"provider": provider, "name": "fake-model", "base_url": fake.base_url, "api_key": KEY, "timeout_seconds": 10}
        async with serve_kazma(make_settings(tmp_path / "data", model=model)) as server, person(server, "ann") as ann:
            yield fake, ann


async def first_turn(ann: Any, text: str) -> tuple[str, str, list[SseEvent]]:
    """A new chat's first turn: the chat, the reply, and every event of the chat until the turn ended."""
    chat = await new_chat(ann.http)
    async with open_events(ann.http, chat) as events:
        reply = (await say(ann.http, chat, text))["reply"]
        await events.until("turn", turn_index=1)
    return chat, reply, events.seen


async def test_the_answer_streams_while_the_model_server_still_makes_it(remote: tuple[Any, Any]) -> None:
    fake, ann = remote
    fake.piece_seconds = 0.3
    chat = await new_chat(ann.http)
    async with open_events(ann.http, chat) as events:
        started = await ann.http.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": QUESTION})
        assert started.status_code == 202, started.text
        await events.until("delta", turn_index=1)
        sent_so_far = len(fake.pieces[-1])
        answer = await events.until("message", role="assistant")
    words = fake.pieces[-1]
    assert sent_so_far < len(words)  # the first piece came while the server still had words to send
    deltas = [e.data["text"] for e in events.seen if e.type == "delta"]
    assert len(deltas) >= 2
    assert "".join(deltas) == "".join(words) == answer.data["text"] == f"Echo: {QUESTION}"


async def test_a_tool_call_streams_its_events_then_the_answer(remote: tuple[Any, Any]) -> None:
    _fake, ann = remote
    chat, reply, seen = await first_turn(ann, "calc 6*7")
    assert reply == "The answer is 6*7 = 42"
    tools = [e.data for e in seen if e.type == "tool"]
    assert [(t["name"], t["state"]) for t in tools] == [("calculator", "running"), ("calculator", "done")]
    assert tools[1]["result"] == "6*7 = 42"
    after_tool = max(i for i, e in enumerate(seen) if e.type == "tool")
    assert "".join(e.data["text"] for e in seen[after_tool:] if e.type == "delta") == reply
    rows = (await ann.http.get(f"/api/chats/{chat}/messages")).json()["messages"]
    assert rows[-1]["text"] == reply and [t["state"] for t in rows[-1]["tools"]] == ["done"]


async def test_words_said_before_a_tool_call_stay_above_its_block_and_are_not_the_answer(remote: tuple[Any, Any]) -> None:
    """Broke: the words a model said before asking for a tool were shown as they came, then gone once
    the tool ran, and never in the chat again."""
    _fake, ann = remote
    chat, reply, seen = await first_turn(ann, "think calc 6*7")
    assert reply == "The answer is 6*7 = 42"
    tools = [e.data for e in seen if e.type == "tool"]
    assert [(t["state"], t["said"]) for t in tools] == [("running", SAID_FIRST), ("done", SAID_FIRST)]
    first_tool = next(i for i, e in enumerate(seen) if e.type == "tool")
    assert "".join(e.data["text"] for e in seen[:first_tool] if e.type == "delta") == SAID_FIRST
    rows = (await ann.http.get(f"/api/chats/{chat}/messages")).json()["messages"]
    assert [(r["role"], r["text"]) for r in rows] == [("user", "think calc 6*7"), ("assistant", reply)]
    assert [(t["said"], t["result"]) for t in rows[-1]["tools"]] == [(SAID_FIRST, "6*7 = 42")]
