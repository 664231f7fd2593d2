"""Kazma's OpenAI-compatible provider, end to end against a fake OpenAI server on 127.0.0.1.

Everything on Kazma's side is real: settings from the environment, the core, the
LangGraph graph, langchain-openai's ChatOpenAI and the openai SDK over real HTTP,
the tools and the SQLite stores. Only the remote model endpoint is faked.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kazma_core.core import Core
from kazma_core.errors import TurnFailed
from kazma_core.settings import load_settings
from tests.fakes.openai_server import FakeOpenAI, serve_fake_openai

KEY = "sk-test-kazma-0123456789"


def _configure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, base_url: str, api_key: str) -> None:
    """Point Kazma at the fake through the environment, isolated from the machine's own settings."""
    for name in list(os.environ):
        if name.startswith(("KAZMA_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("KAZMA_CONFIG", str(tmp_path / "no-user-config.toml"))  # not ~/.config/kazma
    monkeypatch.setenv("KAZMA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KAZMA_MODEL__PROVIDER", "openai")
    monkeypatch.setenv("KAZMA_MODEL__BASE_URL", base_url)
    monkeypatch.setenv("KAZMA_MODEL__API_KEY", api_key)
    monkeypatch.setenv("KAZMA_MODEL__NAME", "fake-model")
    monkeypatch.setenv("KAZMA_MODEL__TIMEOUT_SECONDS", "10")


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    async with serve_fake_openai(api_key=KEY) as server:
        yield server


async def _open_core(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeOpenAI, api_key: str) -> Core:
    _configure(monkeypatch, tmp_path, fake.base_url, api_key)
    settings = load_settings()
    assert settings.model.provider == "openai"
    assert settings.model.base_url == fake.base_url
    return await Core.open(settings)


@pytest.fixture
async def openai_core(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[Core]:
    opened = await _open_core(monkeypatch, tmp_path, fake, KEY)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def core_with_wrong_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeOpenAI) -> AsyncIterator[Core]:
    opened = await _open_core(monkeypatch, tmp_path, fake, "sk-wrong-key")
    try:
        yield opened
    finally:
        await opened.close()


async def _new_chat(core: Core) -> str:
    user = await core.store.users.add_user("ann")
    return (await core.chats.create(user)).id


async def test_plain_message_is_answered_by_the_openai_endpoint_with_the_configured_key_and_model(
    openai_core: Core, fake: FakeOpenAI
) -> None:
    core = openai_core
    chat_id = await _new_chat(core)

    result = await core.turns.send(chat_id, "hello")

    assert result.status == "done"
    assert result.reply == "Echo: hello"
    assert len(fake.requests) == 1
    request = fake.requests[0]
    assert request.authorization == f"Bearer {KEY}"
    assert request.body["model"] == "fake-model"
    # Streamed, so the person sees the answer as it is made; asked with the usage, so it is still counted.
    assert request.body.get("stream") is True and request.body.get("stream_options") == {"include_usage": True}
    roles = [m["role"] for m in request.body["messages"]]
    assert roles == ["system", "user"]
    assert request.body["messages"][-1]["content"] == "hello"
    assert "calculator" in [t["function"]["name"] for t in request.body["tools"]]
    transcript = await core.store.transcript.transcript(chat_id)
    assert [(r.role, r.text) for r in transcript] == [("user", "hello"), ("assistant", "Echo: hello")]


async def test_calc_runs_the_calculator_tool_the_model_asked_for_and_answers_with_its_result(
    openai_core: Core, fake: FakeOpenAI
) -> None:
    core = openai_core
    chat_id = await _new_chat(core)

    result = await core.turns.send(chat_id, "calc 2+3")

    assert result.reply == "The answer is 2+3 = 5"
    assert len(fake.requests) == 2
    first, second = (r.body for r in fake.requests)
    assert "calculator" in [t["function"]["name"] for t in first["tools"]]
    asked = fake.responses[0]["message"]["tool_calls"][0]
    assert asked["function"]["name"] == "calculator"
    # The second request replays the conversation: the assistant's tool call, then the tool's result.
    call_message, tool_message = second["messages"][-2:]
    assert call_message["role"] == "assistant"
    assert [c["id"] for c in call_message["tool_calls"]] == [asked["id"]]
    assert (tool_message["role"], tool_message["content"], tool_message["tool_call_id"]) == ("tool", "2+3 = 5", asked["id"])
    assert all(r.authorization == f"Bearer {KEY}" and r.body["model"] == "fake-model" for r in fake.requests)

    # Time travel captured the turn's steps, tagged with the configured model.
    steps = await core.snapshots.list_steps(chat_id)
    assert len(steps) >= 2
    assert {s.model for s in steps} == {"fake-model"}
    assert {s.turn_index for s in steps} == {result.turn_index}
    last = await core.snapshots.get(chat_id, steps[-1].id)
    assert last is not None
    assert last.state["messages"][-1]["data"]["content"] == "The answer is 2+3 = 5"
    # The usage blocks the endpoint sent are what the turn's cost adds up.
    cost = last.state["cost"]
    assert cost["model_calls"] == 2
    assert cost["input_tokens"] == sum(r["usage"]["prompt_tokens"] for r in fake.responses)
    assert cost["output_tokens"] == sum(r["usage"]["completion_tokens"] for r in fake.responses)


async def test_wrong_api_key_fails_the_turn_clearly_and_keeps_the_users_message(
    core_with_wrong_key: Core, fake: FakeOpenAI
) -> None:
    core = core_with_wrong_key
    chat_id = await _new_chat(core)

    with pytest.raises(TurnFailed) as failed:
        await core.turns.send(chat_id, "hello")

    assert failed.value.code == "turn_failed"
    assert failed.value.status == 502
    assert "AuthenticationError" in failed.value.message
    assert "Check the model settings" in failed.value.message
    assert "sk-wrong-key" not in failed.value.message
    assert fake.requests and all(r.authorization == "Bearer sk-wrong-key" for r in fake.requests)
    assert len(fake.requests) == 1, "a 401 must not be retried"
    transcript = await core.store.transcript.transcript(chat_id)
    assert [(r.role, r.text) for r in transcript] == [("user", "hello"), ("error", failed.value.message)]
    # The failed turn is closed in the history: the next request is not a replay of a broken one.
    history = (await core.turns.graph.aget_state(core.turns.config(chat_id))).values["messages"]
    assert [m.type for m in history] == ["human", "ai"]
    assert history[-1].content.startswith("(No answer:")


async def test_a_chat_longer_than_the_models_context_gives_it_the_newest_whole_turns_that_fit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake: FakeOpenAI
) -> None:
    """A chat kept for long outgrows any model's context window: each call is given the newest
    messages that fit `model.context_tokens`, from a person's message on (never a tool result
    without its call), and always the turn being answered; the chat itself keeps everything."""
    _configure(monkeypatch, tmp_path, fake.base_url, KEY)
    monkeypatch.setenv("KAZMA_MODEL__CONTEXT_TOKENS", "1000")
    core = await Core.open(load_settings())
    try:
        chat_id = await _new_chat(core)
        said = [f"note {n}: " + ("lorem ipsum " * 60).strip() for n in range(12)]  # ~730 characters: ~180 tokens each way
        for text in said[:6]:
            await core.turns.send(chat_id, text)
        result = await core.turns.send(chat_id, "calc 6*7")
        for text in said[6:]:
            await core.turns.send(chat_id, text)
        assert result.reply == "The answer is 6*7 = 42"

        for request in fake.requests:
            messages = request.body["messages"]
            assert messages[0]["role"] == "system" and messages[1]["role"] == "user"
            called = {c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []}
            assert {m["tool_call_id"] for m in messages if m["role"] == "tool"} <= called
            chars = sum(len(m.get("content") or "") for m in messages[1:])
            assert chars <= 4 * 1000, chars  # within the budget: the chat's start is not given
        last = fake.requests[-1].body["messages"]
        assert last[-1]["content"] == said[-1]
        assert said[0] not in [m["content"] for m in last]  # the oldest left the window
        assert said[-2] in [m["content"] for m in last]  # the turn before is still there
        # The call asked while the calculation ran had the turn whole: question, call, result.
        second = next(r.body["messages"] for r in fake.requests if r.body["messages"][-1]["role"] == "tool")
        assert [m["role"] for m in second[-3:]] == ["user", "assistant", "tool"]
        transcript = await core.store.transcript.transcript(chat_id)
        assert [r.text for r in transcript if r.role == "user"] == [*said[:6], "calc 6*7", *said[6:]]
    finally:
        await core.close()
