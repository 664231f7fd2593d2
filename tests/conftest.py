"""Fixtures: real settings in a temporary data folder, a real core, real users and chats."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from kazma_core.core import Core
from kazma_core.settings import Settings, load_settings
from kazma_core.stores.app_sqlite import Chat, User


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No KAZMA_* variable or user file of the machine leaks into a test."""
    for name in list(os.environ):
        if name.startswith("KAZMA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KAZMA_CONFIG", str(tmp_path / "no-user-file.toml"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    yield


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    return load_settings(data_dir=str(data_dir), **overrides)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "data")


@pytest.fixture
async def core(settings: Settings) -> AsyncIterator[Core]:
    opened = await Core.open(settings)
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
async def user(core: Core) -> User:
    return await core.store.add_user("ann")


@pytest.fixture
async def chat(core: Core, user: User) -> Chat:
    return await core.chats.create(user, "tests")


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0
