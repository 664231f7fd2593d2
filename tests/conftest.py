"""Fixtures: real settings in a temporary data folder, a real core, real users and chats."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from kazma_core.core import Core
from kazma_core.settings import Settings, load_settings
from kazma_core.stores.app_sqlite import Chat, User
from tests.http_server import RunningServer, serve_kazma


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


@dataclass
class Person:
    """A user of a running server, with an API client signed in as them."""

    user: User
    token: str
    http: httpx.AsyncClient


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[RunningServer]:
    """The real app, served by uvicorn on a free port of 127.0.0.1."""
    async with serve_kazma(settings) as running:
        yield running


@contextlib.asynccontextmanager
async def person(server: RunningServer, name: str) -> AsyncIterator[Person]:
    user, token = await server.add_user(name)
    async with server.client(token) as http:
        yield Person(user, token, http)


@pytest.fixture
async def ann(server: RunningServer) -> AsyncIterator[Person]:
    async with person(server, "ann") as p:
        yield p


@pytest.fixture
async def bob(server: RunningServer) -> AsyncIterator[Person]:
    async with person(server, "bob") as p:
        yield p


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0
