"""Fixtures: real settings in a temporary data folder, a real core, real users and chats."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import pytest_asyncio
from playwright.async_api import Browser, async_playwright
from prometheus_client import REGISTRY

from kazma_core.core import Core
from kazma_core.settings import Settings, load_settings
from kazma_core.stores.types import Chat, User
from tests.http_server import RunningServer, serve_kazma
from tests.postgres import (
    ENV_URL,
    PostgresUnavailable,
    close_to_connections,
    fresh_database,
    postgres_for_tests,
    private_server,
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No KAZMA_* variable or user file of the machine leaks into a test."""
    for name in list(os.environ):
        if name.startswith("KAZMA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KAZMA_CONFIG", str(tmp_path / "no-user-file.toml"))
    # The offline model streams its words without a pause (a test of streaming sets its own).
    monkeypatch.setenv("KAZMA_MODEL__PIECE_SECONDS", "0")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    yield


def user_file(settings: Settings, name: str, relative: str) -> Path:
    """Where a user's file is kept: in their own folder of the workspace (read off the database by name)."""
    url = settings.database.url.get_secret_value()
    if url:
        with psycopg.connect(url) as pg:
            row = pg.execute("SELECT id FROM kazma.users WHERE name = %s", (name,)).fetchone()
    else:
        with sqlite3.connect(settings.kazma_db) as conn:
            row = conn.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchone()
    return settings.files_of(row[0] if row else "no-such-user") / relative


def written(settings: Settings, relative: str) -> Path:
    """The file of that name in whichever user's folder holds it (a path that does not exist when none)."""
    found = sorted(settings.workspace.glob(f"*/{relative}"))
    return found[0] if found else settings.workspace / "no-such-user" / relative


# Many tests need a state larger than a step's size limit (`big 3000`): the tool result
# cut is raised for them; the tests of the cut itself set it back.
SUITE_LIMITS = {"max_tool_result_chars": 8 << 20}


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    overrides["limits"] = {**SUITE_LIMITS, **overrides.get("limits", {})}
    # The offline model streams its words without a pause: the suite does not wait on it.
    overrides["model"] = {"piece_seconds": 0.0, **overrides.get("model", {})}
    return load_settings(data_dir=str(data_dir), **overrides)


ENGINES = ("sqlite", "postgresql")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "engines(*names): run the test on each store engine (both when none is named)"
    )
    # pytest-xdist's `load` hands each worker a run of consecutive tests to start with (a quarter of its
    # share): the first worker got every long test below, one after the other, and ran for ten minutes
    # after the others had finished. One test at a time instead (a worker holds the one it runs and
    # the next), so that the long ones start on different workers, in order.
    if config.pluginmanager.hasplugin("xdist") and config.getoption("maxschedchunk") is None:
        config.option.maxschedchunk = 1
    share_one_private_postgres(config)


def share_one_private_postgres(config: pytest.Config) -> None:
    """With xdist and no server named, the controller starts the run's private PostgreSQL before the
    workers start, and names it to them as KAZMA_TEST_DATABASE_URL: one initdb and one server for the
    run instead of one per worker, the first four of them made at once on two cores. It stops when
    the run ends (or dies: `private_server` sees to that)."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return  # a worker, or a run without workers: `postgres_admin_url` starts one when a test needs it
    if not config.getoption("numprocesses", None) or os.environ.get(ENV_URL):
        return
    stack = contextlib.ExitStack()
    try:
        os.environ[ENV_URL] = stack.enter_context(private_server()).url
    except PostgresUnavailable:
        return  # each worker then fails the tests that need it, saying why
    config.add_cleanup(stack.close)
    config.add_cleanup(lambda: os.environ.pop(ENV_URL, None))


# The longest tests (half a minute to several minutes each under `make test`, most of it waiting on
# `kazma serve` processes, a browser, schemathesis or PostgreSQL) start first: the workers then share
# out the short ones and end together, instead of one worker starting the kill test when the others
# have nothing left. Node id prefixes under tests/, longest first (`--durations=40` tells);
# the order within a group and of all the other tests is kept. Each long test is followed by a
# short one: a worker is given two tests to start with, and two long ones would run on it in turn.
LONG_FIRST = (
    "test_kill.py", "test_http_replay.py::test_schemathesis", "test_store_health.py::test_kazma_serve",
    "test_rewind.py::test_restore_and_new_messages_racing", "test_postgres_fixture.py::test_a_test_needing",
    "test_chaos.py", "test_replicas.py", "test_serve_lock.py", "test_step_size.py", "test_serve_bots.py",
    "test_restore_crash.py", "test_sessions.py", "test_settings.py::test_serve", "test_undo_crash.py",
    "test_database_errors.py::test_serve", "test_postgres_data.py", "test_browser",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.nodeid.removeprefix("tests/")
        return next((at for at, prefix in enumerate(LONG_FIRST) if name.startswith(prefix)), len(LONG_FIRST))

    items.sort(key=rank)
    long = [item for item in items if rank(item) < len(LONG_FIRST)]
    short = items[len(long):]
    paired = [item for pair in zip(long, short, strict=False) for item in pair]
    items[:] = paired + long[len(paired) // 2:] + short[len(paired) // 2:]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test or module marked `engines` runs once per engine: the same contract on SQLite and PostgreSQL."""
    marker = metafunc.definition.get_closest_marker("engines")
    if marker is not None and "engine" in metafunc.fixturenames:
        metafunc.parametrize("engine", marker.args or ENGINES, indirect=True)


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    """The store engine of this test's settings: sqlite unless the test is marked `engines`."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def settings(tmp_path: Path, engine: str, request: pytest.FixtureRequest) -> Settings:
    if engine == "postgresql":
        return make_settings(tmp_path / "data", database={"url": request.getfixturevalue("pg_kazma_url")})
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
    return await core.store.users.add_user("ann")


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


@pytest.fixture(scope="session")
def postgres_admin_url() -> Iterator[str]:
    """A superuser's URL of this run's PostgreSQL: KAZMA_TEST_DATABASE_URL's server, or a private one.

    Session-scoped, so it is set up before `clean_environment` hides the variable from the test.
    """
    try:
        with postgres_for_tests(os.environ.get(ENV_URL)) as url:
            yield url
            return
    except PostgresUnavailable as error:
        unavailable = str(error)
    # An error, never a skip: these tests must run. Failed outside the `except`, so the message
    # is the whole report rather than the end of a chain of tracebacks.
    pytest.fail(unavailable, pytrace=False)


@pytest.fixture
def pg_url(postgres_admin_url: str) -> Iterator[str]:
    """A fresh, empty database of this test's own (`postgresql://...`), dropped after it."""
    with fresh_database(postgres_admin_url) as url:
        yield url


@pytest.fixture(scope="session")
def kazma_template(postgres_admin_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The name of a database holding what Kazma's first open of an empty one leaves (its schema),
    made once per run (per worker): `pg_kazma_url` copies it rather than make the schema again."""
    with fresh_database(postgres_admin_url) as url, pytest.MonkeyPatch.context() as env:
        folder = tmp_path_factory.mktemp("kazma-template")
        for name in [name for name in os.environ if name.startswith("KAZMA_")]:  # as `clean_environment` does
            env.delenv(name)
        env.setenv("KAZMA_CONFIG", str(folder / "no-user-file.toml"))
        asyncio.run(_open_and_close(make_settings(folder / "data", database={"url": url})))
        name = url.rsplit("/", 1)[1]
        close_to_connections(postgres_admin_url, name)
        yield name


async def _open_and_close(settings: Settings) -> None:
    await (await Core.open(settings)).close()


@pytest.fixture
def pg_kazma_url(postgres_admin_url: str, kazma_template: str) -> Iterator[str]:
    """A fresh database of this test's own as Kazma's first open leaves it, dropped after it: the
    `settings` of a test on PostgreSQL name it."""
    with fresh_database(postgres_admin_url, template=kazma_template) as url:
        yield url


CHROMIUM = Path("/usr/bin/chromium-headless-shell")  # Debian's package of that name (the Makefile says why)
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def chromium() -> AsyncIterator[Browser]:
    """The worker's one browser (Playwright's driver and chromium, started once: about 1.5 s of CPU a
    start); each test has contexts of its own in it, as a person's separate browser profiles."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs it (apt-get install -y chromium-headless-shell).")
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=20_000)
        try:
            yield browser
        finally:
            await browser.close()
