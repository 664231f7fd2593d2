"""A database Kazma cannot use stops every command with one line naming KAZMA_DATABASE__URL, never a
traceback; one that goes away while the server runs answers 503 at once, and Kazma goes on when it is back."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest

from kazma_core.catalogue import sentence
from kazma_core.core import Core
from kazma_core.errors import LeaseLost, StoreUnavailable, TurnRunning
from kazma_core.stores.app_schema import MIGRATIONS
from kazma_core.stores.types import Chat, User
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings
from tests.helpers import error_of, eventually, new_chat, say
from tests.http_server import RunningServer, serve_kazma
from tests.postgres import free_port
from tests.tcp_proxy import TcpProxy, tcp_proxy
from tests.test_kill import shown

KAZMA = str(Path(sys.executable).with_name("kazma"))
SETTING = "KAZMA_DATABASE__URL (database.url)"


def kazma(url: str, tmp_path: Path, *argv: str, locale: str = "C.UTF-8") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    env.update({"KAZMA_DATABASE__URL": url, "KAZMA_CONFIG": str(tmp_path / "none.toml"), "LANG": locale})
    return subprocess.run([KAZMA, *argv, "--data-dir", str(tmp_path / "data")], env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def assert_one_line(done: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kazma: ") and SETTING in lines[0], done.stderr
    assert all(part in lines[0] for part in expected), lines[0]
    assert "Traceback" not in done.stderr + done.stdout and "Kazma is starting" not in done.stdout


@pytest.mark.parametrize(("url", "expected"), [
    ("mysql://kazma@db/kazma", "must start with postgresql:// (it is 'mysql://kazma@db/kazma')"),
    ("postgresql://a b@db:x/kazma", "is not a valid PostgreSQL URL (unexpected spaces found in"),
])
def test_serve_refuses_a_malformed_url(tmp_path: Path, url: str, expected: str) -> None:
    assert_one_line(kazma(url, tmp_path, "serve", "--port", str(free_port())), expected)


def test_the_line_is_said_in_the_language_of_the_locale(tmp_path: Path) -> None:
    """An operator whose locale is Arabic reads why in Arabic, naming the same setting and URL."""
    done = kazma("mysql://kazma@db/kazma", tmp_path, "serve", "--port", str(free_port()), locale="ar_EG.UTF-8")
    assert_one_line(done, sentence("errors.pg_url_scheme", "ar", setting=SETTING, url="'mysql://kazma@db/kazma'"))


def test_serve_stops_when_the_server_does_not_answer(tmp_path: Path) -> None:
    url = f"postgresql://kazma:secret@127.0.0.1:{free_port()}/kazma"
    done = kazma(url, tmp_path, "serve", "--port", str(free_port()))
    assert_one_line(done, "Kazma cannot use the PostgreSQL server of", "kazma:***@127.0.0.1", "Connection refused")
    assert "secret" not in done.stderr


def test_serve_stops_when_the_server_refuses_the_login(tmp_path: Path, pg_url: str) -> None:
    """The tests' server trusts every password, so the refusal here is of a role it does not know: the
    same path as a wrong password (the server ends the connection at login, with its reason)."""
    parts = urlsplit(pg_url)
    url = f"postgresql://nobody:wrong@{parts.hostname}:{parts.port}{parts.path}"
    done = kazma(url, tmp_path, "serve", "--port", str(free_port()))
    assert_one_line(done, "Kazma cannot use the PostgreSQL server of", 'role "nobody" does not exist')
    assert "wrong" not in done.stderr


def test_serve_refuses_a_database_made_by_a_newer_kazma(tmp_path: Path, pg_url: str) -> None:
    newer = len(MIGRATIONS) + 1
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE SCHEMA kazma")
        conn.execute("CREATE TABLE kazma.kazma_version (version BIGINT NOT NULL)")
        conn.execute("INSERT INTO kazma.kazma_version VALUES (%s)", (newer,))
    done = kazma(pg_url, tmp_path, "serve", "--port", str(free_port()))
    assert_one_line(done, f"PostgreSQL schema kazma of the database {SETTING} names is at schema version {newer}",
                    "Run that newer Kazma, or restore a backup made by this version.")


@pytest.mark.parametrize("argv", [
    ["maintain"], ["backup", "create"], ["migrate", "export", "bundle.tar.gz"], ["users", "add", "ann"],
])
def test_every_data_command_stops_in_one_line_when_the_server_does_not_answer(tmp_path: Path, argv: list[str]) -> None:
    url = f"postgresql://kazma@127.0.0.1:{free_port()}/kazma"
    assert_one_line(kazma(url, tmp_path, *argv), "Kazma cannot use the PostgreSQL server of", "Connection refused")


# -- the database going away while Kazma runs ----------------------------------------------------


@contextlib.asynccontextmanager
async def kazma_through_proxy(
    tmp_path: Path, pg_url: str, **overrides: Any
) -> AsyncIterator[tuple[RunningServer, TcpProxy]]:
    """Kazma on PostgreSQL, its database reached through a proxy the test can cut as a network would."""
    parts = urlsplit(pg_url)
    async with tcp_proxy(f"http://{parts.hostname}:{parts.port}") as proxy:
        through = parts._replace(netloc=f"{parts.username}@127.0.0.1:{urlsplit(proxy.url).port}").geturl()
        settings = make_settings(tmp_path / "data", database={"url": through}, **overrides)
        async with serve_kazma(settings) as server:
            yield server, proxy


async def within_10_s(call: Awaitable[httpx.Response]) -> httpx.Response:
    async with asyncio.timeout(10):
        return await call


async def test_an_outage_of_postgresql_answers_503_at_once_and_kazma_goes_on_when_it_is_back(
    tmp_path: Path, pg_url: str
) -> None:
    """Broke: with the database away a message answered 500 (a psycopg error), a request waited for
    the pool ten times over, /healthz probed SQLite files that are not there, and the pool kept
    retrying on its own backoff for minutes after the server was back."""
    async with kazma_through_proxy(tmp_path, pg_url) as (server, proxy):
        _, token = await server.add_user("ann")
        async with server.client(token) as ann:
            chat = await new_chat(ann)
            before = [(await say(ann, chat, f"remember: fact {n}"))["reply"] for n in range(2)]
            assert (await ann.get("/healthz")).status_code == 200

            proxy.cut()
            for ask in (
                ann.post(f"/api/chats/{chat}/messages", json={"text": "are you there?"}),
                ann.get(f"/api/replay/snapshots/{chat}"),
                ann.get(f"/api/chats/{chat}/messages"),
            ):
                body = error_of(await within_10_s(ask), 503, "store_unavailable")
                assert "Try again in a minute" in body["message"] and "127.0.0.1" not in body["message"]
            health = await within_10_s(ann.get("/healthz"))
            assert health.status_code == 503
            assert health.json()["stores"]["PostgreSQL schema kazma"] == {
                "ok": False, "problem": "the PostgreSQL server cannot be reached"}

            proxy.mend()
            after = await say(ann, chat, "hello again")
            assert after["reply"].startswith('You said: "hello again"')
            assert (await ann.get("/healthz")).status_code == 200
            rows = (await ann.get(f"/api/chats/{chat}/messages")).json()["messages"]
            texts = [r["text"] for r in rows]
            assert [t for t in texts if t in before] == before  # nothing answered before the outage is lost
            assert "are you there?" not in texts
            assert (await ann.get(f"/api/replay/snapshots/{chat}")).status_code == 200


async def test_a_turn_running_when_postgresql_goes_away_ends_with_one_error_note_once_it_is_back(
    tmp_path: Path, pg_url: str
) -> None:
    """Broke: the turn's end could not free its chat while the database was away, so after it came
    back the chat answered turn_running until the lease ran out, and the cut turn stayed open."""
    async with kazma_through_proxy(tmp_path, pg_url, agent={"lease_seconds": 6}) as (server, proxy):
        _, token = await server.add_user("ann")
        async with server.client(token) as ann:
            chat = await new_chat(ann)
            await say(ann, chat, "hello")
            turn = asyncio.create_task(ann.post(f"/api/chats/{chat}/messages", json={"text": "sleep 3"}))
            asked: list[list[str]] = []

            async def read_asked() -> None:
                rows = (await ann.get(f"/api/chats/{chat}/messages")).json()["messages"]
                asked.append([r["text"] for r in rows if r["role"] == "user"])

            async with asyncio.timeout(10):  # the turn has taken the message in: it sleeps now
                while not asked or "sleep 3" not in asked[-1]:
                    await read_asked()
            proxy.cut()
            error_of(await within_10_s(turn), 503, "store_unavailable")
            proxy.mend()

            notes: list[list[str]] = []

            async def read_notes() -> None:
                rows = (await ann.get(f"/api/chats/{chat}/messages")).json()["messages"]
                notes.append([r["text"] for r in rows if r["role"] == "error"])

            async with asyncio.timeout(20):
                while not notes or not notes[-1]:
                    await read_notes()
                    await asyncio.sleep(0.2)
            assert notes[-1] == ["Kazma stopped during this turn. Send the message again."]
            assert (await say(ann, chat, "and now?"))["reply"].startswith('You said: "and now?"')
            await read_notes()
            assert len(notes[-1]) == 1


@contextlib.contextmanager
def answers_cannot_be_saved(db: Path) -> Iterator[None]:
    """kazma.db refuses every transaction that would save an answer (its transcript row), as a disk
    that fails at that very moment would; everything else (a lease let go, a step) still commits."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute(
            "CREATE TRIGGER answers_fail BEFORE INSERT ON transcript WHEN NEW.role = 'assistant'"
            " BEGIN SELECT json('the disk failed'); END"
        )
        conn.commit()
    try:
        yield
    finally:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            conn.execute("DROP TRIGGER answers_fail")
            conn.commit()


@pytest.mark.parametrize("cut", ["a message", "an approval denied"])
async def test_a_turn_whose_answer_could_not_be_saved_is_closed_so_a_restore_to_its_last_step_agrees_with_the_transcript(
    core: Core, chat: Chat, user: User, cut: str
) -> None:
    """Broke (one chaos run in three): the answer's checkpoint failed while the chat's lease was let
    go, so nothing closed the cut turn. Its last step, saved before the answer, stayed listed; a
    restore to it put into the state an answer the transcript never had."""
    await core.turns.send(chat.id, "hello")
    card = (await core.turns.send(chat.id, "write a.txt: x")).gates[0]["card_id"] if cut != "a message" else ""
    with answers_cannot_be_saved(core.settings.kazma_db), pytest.raises(StoreUnavailable):
        if card:
            await core.turns.decide(chat.id, card, "deny", user.id)
        else:
            await core.turns.send(chat.id, "are you there?")
    await core.recover()  # what the server's sweep does every few seconds

    newest = (await core.snapshots.list_steps(chat.id))[-1]
    await RewindService(core).restore(user, "test", chat.id, newest.id)
    state = await core.turns.graph.aget_state(core.turns.config(chat.id))
    rows = [(r.role, r.text) for r in await core.store.transcript.transcript(chat.id)]
    assert rows == [row for _, row in shown(list(state.values["messages"]))]
    assert not state.next
    assert (await core.turns.send(chat.id, "and now?")).reply.startswith('You said: "and now?"')


@contextlib.contextmanager
def postgres_away_for(url: str, *triggers: str) -> Iterator[None]:
    """PostgreSQL answers each statement the triggers name as a server shutting down would
    (SQLSTATE 57P01, a connection lost), every time, until the block ends; the rest still commits."""
    with psycopg.connect(url, autocommit=True) as pg:
        pg.execute("CREATE FUNCTION public.kazma_test_away() RETURNS trigger LANGUAGE plpgsql AS"
                   " $$ BEGIN RAISE EXCEPTION 'terminating connection' USING ERRCODE = '57P01'; END $$")
        for n, trigger in enumerate(triggers):
            pg.execute(f"CREATE TRIGGER kazma_test_away_{n} {trigger} EXECUTE FUNCTION public.kazma_test_away()")
    try:
        yield
    finally:
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute("DROP FUNCTION public.kazma_test_away() CASCADE")


ANSWER_ROW = "BEFORE INSERT ON kazma.transcript FOR EACH ROW WHEN (NEW.role = 'assistant')"
# A node's messages, written as the node ends and before its checkpoint (LangGraph's pending writes).
NODE_MESSAGES = "BEFORE INSERT ON kazma.writes FOR EACH ROW WHEN (NEW.channel = 'messages' AND NEW.task_path LIKE '%supervisor%')"
DROP_STEP = "BEFORE DELETE ON kazma_steps.steps FOR EACH ROW"


@pytest.mark.engines("postgresql")
@pytest.mark.parametrize("lost", ["the answer's checkpoint", "the answer"])
async def test_a_turn_the_database_cut_ends_with_the_state_and_the_transcript_agreeing(
    core: Core, chat: Chat, user: User, lost: str
) -> None:
    """Broke (the chaos test, one run in four): nothing of the answer was saved, and the database
    went away again after the cut turn was closed but before its unshown last step was dropped.
    The closed turn was nobody's to look at again, and a restore to that step brought back an
    answer the transcript never had. The step now goes before the turn is closed. Also: the
    answer's node wrote its messages (LangGraph's pending writes, which the state shows) but its
    checkpoint, with the transcript row, failed: the answer is kept, with its row."""
    await core.turns.send(chat.id, "hello")
    away = [ANSWER_ROW, DROP_STEP] + ([NODE_MESSAGES] if lost == "the answer" else [])
    with postgres_away_for(core.settings.database.url.get_secret_value(), *away), pytest.raises(StoreUnavailable):
        await core.turns.send(chat.id, "are you there?")
    await core.recover()  # what the server's sweep does every few seconds, the database back

    async def agree() -> None:
        state = await core.turns.graph.aget_state(core.turns.config(chat.id))
        rows = [(r.role, r.text) for r in await core.store.transcript.transcript(chat.id)]
        assert rows == [row for _, row in shown(list(state.values["messages"]))]
        assert not state.next

    await agree()
    newest = (await core.snapshots.list_steps(chat.id))[-1]
    await RewindService(core).restore(user, "test", chat.id, newest.id)
    await agree()
    assert (await core.turns.send(chat.id, "and now?")).reply.startswith('You said: "and now?"')


@pytest.mark.engines("postgresql")
async def test_a_stop_while_the_database_is_cut_ends_with_the_state_and_the_transcript_agreeing(
    tmp_path: Path, pg_kazma_url: str
) -> None:
    """A Stop pressed while the answer is said keeps what was said as a `stopped` row, written with
    the supervisor's checkpoint; the database refusing that row (away at that moment, and again
    when the stopped turn is closed) must still end with the state and the transcript agreeing."""
    opened = await Core.open(make_settings(tmp_path / "data", database={"url": pg_kazma_url}, model={"piece_seconds": 0.05}))
    try:
        user = await opened.store.users.add_user("ann")
        chat = await opened.chats.create(user, "stop")
        await opened.turns.send(chat.id, "hello")
        stopped_row = "BEFORE INSERT ON kazma.transcript FOR EACH ROW WHEN (NEW.role = 'stopped')"
        with postgres_away_for(pg_kazma_url, stopped_row, DROP_STEP):
            async with opened.events.subscribe(chat.id) as events:
                turn = asyncio.create_task(opened.turns.send(chat.id, " ".join(f"word{n}" for n in range(80))))
                async for event in events:
                    if event.type == "delta":  # the answer is being said
                        break
                await opened.turns.stop(chat.id)
                with contextlib.suppress(StoreUnavailable):
                    await turn
        await opened.recover()  # what the server's sweep does every few seconds, the database back
        state = await opened.turns.graph.aget_state(opened.turns.config(chat.id))
        rows = [(r.role, r.text) for r in await opened.store.transcript.transcript(chat.id)]
        assert rows == [row for _, row in shown(list(state.values["messages"]))]
        assert rows[-1][0] in ("stopped", "error")
        assert (await opened.turns.send(chat.id, "and now?")).reply.startswith('You said: "and now?"')
    finally:
        await opened.close()


@pytest.mark.engines("postgresql")
async def test_a_turn_whose_lease_another_replica_took_leaves_no_answer_the_transcript_lacks(
    tmp_path: Path, pg_kazma_url: str
) -> None:
    """Broke (the chaos test, a lease lost mid-turn): replica A stalled while saving its answer's
    step, long enough for its lease to run out; replica B's next message took the expired lease and
    ran its turn over A's cut one, A's step (the answer) landed after, and its answer's checkpoint was
    refused (lease_lost). Nothing closed A's turn: its step stayed listed, and a restore to it
    brought back an answer the transcript never had. An expired lease that may cover a cut turn is
    now taken only by the sweep, which waits for the stalled write and closes the turn first."""
    a = await Core.open(make_settings(tmp_path / "a", database={"url": pg_kazma_url}))
    b = await Core.open(make_settings(tmp_path / "b", database={"url": pg_kazma_url}))
    try:
        user = await a.store.users.add_user("ann")
        chat = await a.chats.create(user, "taken over")
        await a.turns.send(chat.id, "hello")
        with psycopg.connect(pg_kazma_url, autocommit=True) as pg:
            pg.execute("CREATE FUNCTION public.kazma_test_slow() RETURNS trigger LANGUAGE plpgsql AS"
                       " $$ BEGIN PERFORM pg_sleep(2); RETURN NEW; END $$")
            pg.execute("CREATE TRIGGER kazma_test_slow BEFORE INSERT ON kazma_steps.steps FOR EACH ROW"
                       " WHEN (NEW.turn_index = 2) EXECUTE FUNCTION public.kazma_test_slow()")

            def stalled() -> bool:
                return bool(pg.execute("SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'").fetchone())

            turn = asyncio.create_task(a.turns.send(chat.id, "are you there?"))
            await eventually(stalled, "replica A to be saving its answer's step")
            pg.execute("UPDATE kazma.leases SET expires_at = 0 WHERE chat_id = %s", (chat.id,))  # A's lease ran out
            with contextlib.suppress(TurnRunning):
                await b.turns.send(chat.id, "anyone?")
            await b.recover()  # what B's sweep does every few seconds
            with contextlib.suppress(LeaseLost):
                await turn
            pg.execute("DROP FUNCTION public.kazma_test_slow() CASCADE")
        await b.turns.send(chat.id, "anyone?")

        async def agree(what: str) -> None:
            state = await b.turns.graph.aget_state(b.turns.config(chat.id))
            rows = [(r.role, r.text) for r in await b.store.transcript.transcript(chat.id)]
            assert rows == [row for _, row in shown(list(state.values["messages"]))], what

        await agree("after the takeover")
        for step in reversed(await b.snapshots.list_steps(chat.id)):  # a restore takes the later ones back
            await RewindService(b).restore(user, "test", chat.id, step.id)
            await agree(f"restored to turn {step.turn_index}'s step of {step.message_count} messages")
    finally:
        await b.close()
        await a.close()
