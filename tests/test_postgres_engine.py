"""The PostgreSQL engine under every store: what a team's deployment relies on when replicas
share one database and the network between them and it is not perfect."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from kazma_core.core import Core
from kazma_core.replicas.leases import chat_lease
from kazma_core.stores.engine import Conn, NewerSchema
from kazma_core.stores.postgres import DatabaseUnreachable, PostgresDB
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings

COUNTER = ["CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0)"]


def read_then_add(conn: Conn) -> None:
    # A read, then a write computed from it: the pattern every budget and body number uses.
    (n,) = conn.execute("SELECT n FROM counter WHERE id = 1").fetchone()
    conn.execute("UPDATE counter SET n = $1 WHERE id = 1", (n + 1,))


async def count(db: PostgresDB) -> int:
    return int((await db.run(lambda c: c.execute("SELECT n FROM counter").fetchone()))[0])


async def test_two_replicas_writing_the_same_row_lose_no_write(pg_url: str) -> None:
    """Each replica's read-then-write runs as if alone: a conflicting one runs again, none is lost."""
    a, b = PostgresDB(pg_url, "shared", COUNTER), PostgresDB(pg_url, "shared", COUNTER)
    try:
        await asyncio.gather(*(db.tx(read_then_add) for _ in range(40) for db in (a, b)))
        assert await count(a) == 80
    finally:
        await a.close()
        await b.close()


NOTES = ["CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL, n BIGINT)"]
AWKWARD = ["it's \\ a 'quote' $1 -- not a comment; E'\\x41' ملاحظة", "", "%s %(x)s", "a\nb\tc"]


async def test_a_transaction_keeps_what_its_first_statement_was_given_and_stays_one(pg_url: str) -> None:
    """A transaction's first statement goes with its BEGIN, its values written in: text with quotes,
    backslashes, placeholders and other scripts is stored as given, and a failure later in the
    transaction takes that first write back with the rest."""
    db = PostgresDB(pg_url, "notes", NOTES)

    def then_fail(conn: Conn) -> None:
        conn.execute("INSERT INTO notes (id, text, n) VALUES ($1, $2, $3)", (1, AWKWARD[0], -(2**40)))
        conn.execute("INSERT INTO notes (id, text) VALUES ($1, $2)", (1, "the same id again"))

    try:
        with pytest.raises(psycopg.errors.UniqueViolation):
            await db.tx(then_fail)
        assert await db.run(lambda c: c.execute("SELECT count(*) FROM notes").fetchone()[0]) == 0
        for i, text in enumerate(AWKWARD, start=1):
            await db.tx(lambda c, i=i, text=text: c.execute("INSERT INTO notes (id, text, n) VALUES ($1, $2, $3)", (i, text, None)))
        rows = await db.run(lambda c: c.execute("SELECT id, text, n FROM notes ORDER BY id").fetchall())
        assert [(r["id"], r["text"], r["n"]) for r in rows] == [(i, t, None) for i, t in enumerate(AWKWARD, start=1)]
        # A transaction that sent nothing began nothing: the connection serves the next one.
        await db.tx(lambda c: None)
        assert await db.tx(lambda c: c.execute("SELECT text FROM notes WHERE id = $1", (2,)).fetchone()[0]) == ""
    finally:
        await db.close()


async def test_a_lost_connection_is_replaced_and_the_next_transaction_runs(pg_url: str) -> None:
    db = PostgresDB(pg_url, "shared", COUNTER)
    try:
        await db.tx(read_then_add)
        with psycopg.connect(pg_url, autocommit=True) as admin:
            # The server ends every other connection to this database (a restart, a failover).
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        await db.tx(read_then_add)
        assert await count(db) == 2
    finally:
        await db.close()


async def test_a_database_of_a_newer_kazma_is_refused_in_one_line(pg_url: str) -> None:
    newer = PostgresDB(pg_url, "kazma", [*COUNTER, "CREATE TABLE later (id INTEGER)"])
    await newer.run(lambda c: None)
    await newer.close()
    older = PostgresDB(pg_url, "kazma", COUNTER)
    try:
        with pytest.raises(NewerSchema) as refused:
            await older.run(lambda c: None)
        assert "version 2" in str(refused.value) and "\n" not in str(refused.value)
    finally:
        await older.close()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("mysql://kazma@localhost/kazma", "must start with postgresql://"),
        ("postgresql://kazma@localhost:notaport/kazma", "not a valid PostgreSQL URL"),
        ("postgresql://kazma@localhost/kazma?nosuchoption=1", "not a valid PostgreSQL URL"),
        ("postgresql://kazma:secret@127.0.0.1:1/kazma", "cannot use the PostgreSQL server"),
    ],
)
async def test_an_unusable_database_url_is_one_line_naming_the_setting(url: str, says: str) -> None:
    with pytest.raises(DatabaseUnreachable) as refused:
        db = PostgresDB(url, "kazma", COUNTER)
        try:
            await db.run(lambda c: None)
        finally:
            await db.close()
    message = str(refused.value)
    assert says in message and "KAZMA_DATABASE__URL" in message and "\n" not in message
    assert "secret" not in message  # a password never reaches a log


async def test_a_chat_whose_turns_alternate_between_replicas_stays_one_conversation(tmp_path: Path, pg_url: str) -> None:
    """Each replica keeps the chats it served in memory; a turn another replica ran since, or a
    restore made there, must show up whole on this one, never as this one's stale copy."""
    a = await Core.open(make_settings(tmp_path / "a", database={"url": pg_url}))
    b = await Core.open(make_settings(tmp_path / "b", database={"url": pg_url}))
    try:
        user = await a.store.users.add_user("ann")
        chat = await a.chats.create(user)
        for core, text in ((a, "one"), (b, "two"), (a, "three"), (b, "four")):
            assert (await core.turns.send(chat.id, text)).status == "done"
        step = next(s for s in await a.snapshots.list_steps(chat.id) if s.turn_index == 2)
        await RewindService(a).restore(user, "web", chat.id, step.id)
        assert (await b.turns.send(chat.id, "five")).status == "done"
        assert (await a.turns.send(chat.id, "six")).status == "done"
        for core in (a, b):
            state = await core.turns.graph.aget_state(core.turns.config(chat.id))
            asked = [m.text for m in state.values["messages"] if m.type == "human"]
            assert asked == ["one", "two", "five", "six"]
            rows = [r.text for r in await core.store.transcript.transcript(chat.id) if r.role == "user"]
            assert rows == asked
    finally:
        await a.close()
        await b.close()


async def test_a_slow_write_of_one_chat_holds_up_neither_another_chat_nor_its_own_order(tmp_path: Path, pg_url: str) -> None:
    """Two chats' turns run side by side on PostgreSQL (each store has several connections): while
    one chat's transaction waits on the database, another chat's turn writes and answers; the
    waiting chat's next write starts only once the one before it ended (its lease keeps them in order)."""
    core = await Core.open(make_settings(tmp_path / "data", database={"url": pg_url}))
    try:
        ann = await core.store.users.add_user("ann")
        slow, quick = (await core.chats.create(ann, "slow")).id, (await core.chats.create(ann, "quick")).id
        seen: list[str] = []
        started, go = threading.Event(), threading.Event()

        def blocking(conn: Conn) -> None:
            seen.append("slow: first write starts")
            started.set()
            assert go.wait(30), "the test never let the first write go on"
            conn.execute("SELECT 1").fetchall()
            seen.append("slow: first write ends")

        async def slow_turn() -> None:
            async with chat_lease(core.store.leases, slow, "turn", 30):
                # Sent off one after the other without waiting, as a turn's checkpoint writes are.
                first = asyncio.create_task(core.store.db.tx(blocking))
                await asyncio.to_thread(started.wait, 30)
                second = asyncio.create_task(core.store.db.tx(lambda c: seen.append("slow: second write")))
                await asyncio.gather(first, second)

        slowly = asyncio.create_task(slow_turn())
        assert await asyncio.to_thread(started.wait, 30)
        # Another chat meanwhile: a whole turn, answered while the first chat's write still waits.
        answer = await asyncio.wait_for(core.turns.send(quick, "calc 1+1"), 60)
        seen.append("quick: answered")
        go.set()
        await asyncio.wait_for(slowly, 60)
        assert "2" in answer.reply
        assert seen == ["slow: first write starts", "quick: answered", "slow: first write ends", "slow: second write"]
    finally:
        await core.close()


async def test_the_same_event_twice_in_a_row_reaches_the_other_replicas_twice(pg_url: str) -> None:
    """Events queued together leave in one statement, one transaction: PostgreSQL would deliver
    identical notifications of one transaction once (the same piece of an answer twice, say)."""
    from kazma_core.replicas.relay import CHANNEL, EventRelay

    heard: list[str] = []
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as listener:
        await listener.execute(f"LISTEN {CHANNEL}")
        relay = EventRelay(pg_url, "kazma", lambda *a: None, lambda: None, lambda *a: None)
        for _ in range(3):
            relay.send("chat-1", "delta", {"text": "ha"})
        await relay.close()
        async for note in listener.notifies(timeout=5.0):
            heard.append(note.payload)
            if len(heard) == 3:
                break
    assert len(heard) == 3
    assert all('"delta"' in payload for payload in heard)


async def test_a_replica_alone_sends_nothing_and_sends_again_once_another_listens(pg_url: str) -> None:
    """A replica that nobody answers counts itself alone and sends no notification (they would
    cost the database and itself for nothing); one starting later says HELLO, and from then on
    each hears the other's events, in order."""
    from kazma_core.replicas.relay import CHANNEL, SETTLE_SECONDS, EventRelay

    got: dict[str, list[tuple[str, str, dict[str, str]]]] = {"a": [], "b": []}

    def relay(name: str) -> EventRelay:
        return EventRelay(pg_url, "kazma", lambda c, t, d: got[name].append((c, t, d)), lambda: None,
                          lambda *a: None, origin=f"test-host:{name}")

    async def soon(probe: Callable[[], bool], what: str) -> None:
        for _ in range(200):
            if probe():
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}")

    heard: list[str] = []
    async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as listener:
        await listener.execute(f"LISTEN {CHANNEL}")
        a = relay("a")
        try:
            await a.listening()
            assert not a.alone  # until the others had time to answer, it cannot know
            await asyncio.sleep(SETTLE_SECONDS)
            await soon(lambda: a.alone, "replica a to count itself alone")
            a.send("chat-1", "delta", {"text": "nobody hears this"})
            b = relay("b")
            try:
                await b.listening()
                await soon(lambda: not a.alone and not b.alone, "the replicas to hear each other")
                a.send("chat-1", "delta", {"text": "one"})
                a.send("chat-1", "delta", {"text": "two"})
                b.send("chat-2", "delta", {"text": "three"})
                await soon(lambda: len(got["b"]) == 2 and len(got["a"]) == 1, "the events to cross")
            finally:
                await b.close()
        finally:
            await a.close()
        with contextlib.suppress(TimeoutError):
            async for note in listener.notifies(timeout=1.0):
                heard.append(note.payload)
    assert got["b"] == [("chat-1", "delta", {"text": "one"}), ("chat-1", "delta", {"text": "two"})]
    assert got["a"] == [("chat-2", "delta", {"text": "three"})]
    assert heard and not any("nobody hears this" in payload for payload in heard)
