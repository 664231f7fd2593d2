"""Kazma on Anthropic's Messages API, end to end against a fake on 127.0.0.1 (real ChatAnthropic, real graph)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kazma_core.core import Core
from kazma_core.errors import TurnFailed
from tests.conftest import make_settings
from tests.fakes.anthropic_server import serve_fake_anthropic

KEY = "sk-ant-test-0123456789"


async def open_core(tmp_path: Path, base_url: str, key: str) -> Core:
    model = {"provider": "anthropic", "name": "claude-fake", "base_url": base_url, "api_key": key, "timeout_seconds": 10}
    return await Core.open(make_settings(tmp_path / "data", model=model))


async def test_a_turn_with_a_tool_call_runs_on_anthropic(tmp_path: Path) -> None:
    async with serve_fake_anthropic(KEY) as fake:
        core = await open_core(tmp_path, fake.base_url, KEY)
        try:
            user = await core.store.users.add_user("ann")
            chat = await core.chats.create(user)
            assert (await core.turns.send(chat.id, "hello")).reply == "Echo: hello"
            result = await core.turns.send(chat.id, "calc 6*7")
            assert result.reply == "The answer is 6*7 = 42"
            assert {t["name"] for t in fake.requests[-2]["tools"]} >= {"calculator", "remember", "write_file"}
            assert all(r["model"] == "claude-fake" and r["max_tokens"] == 1024 for r in fake.requests)
            steps = await core.snapshots.list_steps(chat.id)
            assert {s.model for s in steps} == {"claude-fake"} and steps[-1].turn_index == 2
        finally:
            await core.close()


async def test_a_rejected_key_fails_the_turn_with_a_sentence(tmp_path: Path) -> None:
    async with serve_fake_anthropic(KEY) as fake:
        core = await open_core(tmp_path, fake.base_url, "sk-ant-wrong")
        try:
            user = await core.store.users.add_user("ann")
            chat = await core.chats.create(user)
            with pytest.raises(TurnFailed) as failed:
                await core.turns.send(chat.id, "hello")
            assert "AuthenticationError" in failed.value.message and "sk-ant-wrong" not in failed.value.message
            assert [r.role for r in await core.store.transcript.transcript(chat.id)] == ["user", "error"]
        finally:
            await core.close()
