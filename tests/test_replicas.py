"""Three `kazma serve` replicas on one PostgreSQL database, no sticky sessions: what a person
sees does not depend on the replica that answers.

Real processes on loopback ports, each with a data folder of its own, one fake Telegram
(which ends a held `getUpdates` with 409 when another comes, as Telegram does). One
SIGKILL covers two points: replica A is the chat apps' leader and runs a turn when it
dies, so the others must free its chat and close its turn, and take Telegram polling over.
Then the replicas finishing each other's work: a Stop sent to the replica that does not
run the turn, a restore cut on a killed replica, a stalled holder's step, and replicas
started together on an empty database.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg
import pytest
from langchain_core.messages import AIMessage

from kazma_core.core import Core
from kazma_core.errors import LeaseLost
from kazma_core.replicas.claims import ReplicaStore, one_at_a_time
from kazma_core.replicas.leader import Leadership
from kazma_core.replicas.leases import chat_lease
from kazma_core.rewind.rows import RewindRows
from kazma_core.users import FIRST_OWNER
from tests.conftest import make_settings
from tests.crash import run_killed
from tests.fakes.telegram_server import FakeTelegram, person, private_chat, serve_fake_telegram
from tests.forked import start_kazma
from tests.helpers import open_events
from tests.test_restore_crash import prepared
from tests.test_serve_bots import START_SECONDS, Serve, answer_to, free_port
from tests.test_undo_crash import prepared as restored_chat
from tests.test_undo_crash import seen

TG_TOKEN = "5550002222:AAH-replicas-test-token"
ANN_TG = person(5557654321, "Ann")
LEASE_SECONDS = 4  # agent.lease_seconds: a dead replica's chats are free about this long after
# server.leader_*: the chat apps' leader row expires 3 s after its renewal (every 1 s); the others look every 1 s
LEADER_SECONDS, LEADER_RENEW_SECONDS, LEADER_CHECK_SECONDS = 3, 1, 1
TAKEOVER_SECONDS = 30.0  # the issue's bound for another replica to take the chat apps over
WAIT_SECONDS = 20.0
BIG = 9000  # characters: more than a PostgreSQL notification holds
POLLING = "is serving (polling)"
SIGN_IN = "Sign in (one-time link"
STOP_ANSWER_SECONDS = 2.0  # the issue's bound: Stop answers this soon after the turn ended, on any replica


def replica_env(tmp_path: Path, pg_url: str, **more: str) -> dict[str, str]:
    """The environment of a replica: the shared database, short leases, no variable of the machine's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAZMA_")}
    env.update(
        PYTHONUNBUFFERED="1", NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
        KAZMA_CONFIG=str(tmp_path / "no-user-file.toml"), KAZMA_DATABASE__URL=pg_url,
        KAZMA_AGENT__LEASE_SECONDS=str(LEASE_SECONDS), KAZMA_SERVER__LEADER_SECONDS=str(LEADER_SECONDS),
        KAZMA_SERVER__LEADER_RENEW_SECONDS=str(LEADER_RENEW_SECONDS),
        KAZMA_SERVER__LEADER_CHECK_SECONDS=str(LEADER_CHECK_SECONDS), **more,
    )
    return env


@contextlib.asynccontextmanager
async def replica(
    tmp_path: Path, name: str, env: dict[str, str], start: float = START_SECONDS
) -> AsyncIterator[Serve]:
    """`kazma serve` with a data folder of its own and the shared database, answering within `start`
    seconds; SIGKILLed at the end."""
    port = free_port()
    folder = tmp_path / name
    folder.mkdir()
    data, out, err = folder / "data", folder / "serve.out", folder / "serve.err"
    process = await start_kazma(["serve", "--data-dir", str(data), "--port", str(port)], env, out, err)
    serve = Serve(f"http://127.0.0.1:{port}", data, env, process, out, err)
    try:
        async with httpx.AsyncClient(base_url=serve.url, trust_env=False) as http:

            async def healthy() -> bool:
                with contextlib.suppress(httpx.TransportError):
                    return (await http.get("/healthz")).status_code == 200
                return False

            deadline = time.monotonic() + start
            while not await healthy():
                assert process.returncode is None, f"{name} exited:\n{serve.log()[-3000:]}"
                assert time.monotonic() < deadline, f"{name} did not answer:\n{serve.log()[-3000:]}"
                await asyncio.sleep(0.05)
        yield serve
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGKILL)
            await process.wait()


def client(serve: Serve, token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=serve.url, headers={"Authorization": f"Bearer {token}"}, trust_env=False,
                             timeout=httpx.Timeout(60.0))


async def until(probe: object, what: str, timeout: float = WAIT_SECONDS) -> None:
    """Wait (bounded) until the async `probe()` is truthy."""
    deadline = time.monotonic() + timeout
    while not await probe():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        await asyncio.sleep(0.1)


async def first_step(http: httpx.AsyncClient, chat: str) -> str:
    steps = (await http.get(f"/api/replay/snapshots/{chat}")).json()["snapshots"]
    assert steps, f"chat {chat} has no saved step"
    return str(steps[-1]["snapshot_id"])


async def running(http: httpx.AsyncClient, chat: str) -> bool:
    return bool((await http.get(f"/api/chats/{chat}/messages")).json()["running"])


async def telegram_turn(telegram: FakeTelegram, text: str) -> None:
    """Ann writes to the bot on Telegram: exactly one answer comes back, whichever replica polls."""
    before = len(telegram.to(ANN_TG["id"]))
    telegram.message(ANN_TG, private_chat(ANN_TG), text)
    replies = await telegram.replies(ANN_TG["id"], before, timeout=WAIT_SECONDS)
    assert [r.text for r in replies] == [answer_to(text)]
    await asyncio.sleep(1.0)  # a second poller would answer it again meanwhile
    assert len(telegram.to(ANN_TG["id"])) == before + 1


async def test_three_replicas_share_events_leases_the_clean_up_and_the_chat_apps(tmp_path: Path, pg_url: str) -> None:
    # Ann, her token, her chats and her Telegram account, written to the shared database beforehand.
    core = await Core.open(make_settings(tmp_path / "setup", database={"url": pg_url}))
    try:
        await core.store.users.add_user("olga", "owner")
        ann = await core.store.users.add_user("ann")
        token = await core.store.users.issue_token(ann.id, "api")
        await core.store.users.link_identity(f"telegram:{ANN_TG['id']}", ann.id)
        watched, busy = (await core.chats.create(ann, "watched")).id, (await core.chats.create(ann, "busy")).id
    finally:
        await core.close()

    async with serve_fake_telegram(TG_TOKEN) as telegram:
        env = replica_env(
            tmp_path, pg_url, KAZMA_SERVER__FIRST_CLEANUP_SECONDS="3",
            KAZMA_TELEGRAM__TOKEN=TG_TOKEN, KAZMA_TELEGRAM__BASE_URL=telegram.base_url, KAZMA_TELEGRAM__MODE="polling",
        )
        async with replica(tmp_path, "a", env) as a:
            # A starts first, so it leads the chat apps; B and C follow.
            await a.until(lambda: POLLING in a.log(), "replica A to poll Telegram")
            async with replica(tmp_path, "b", env) as b, replica(tmp_path, "c", env) as c:
                async with client(a, token) as on_a, client(b, token) as on_b, client(c, token) as on_c:
                    # 1. A turn on B streams to a tab open on A (a big answer too), and B's restore reloads it.
                    async with open_events(on_a, watched) as tab:
                        text = "x" * BIG
                        r = await on_b.post(f"/api/chats/{watched}/messages", json={"text": text})
                        assert r.status_code == 200, r.text
                        mine = await tab.until("message", role="user", text=text)
                        answer = await tab.until("message", role="assistant", turn_index=mine.data["turn_index"])
                        assert answer.data["text"] == r.json()["reply"]
                        step = await first_step(on_c, watched)
                        r = await on_b.post("/api/replay/restore", json={"thread_id": watched, "snapshot_id": step})
                        assert r.status_code == 200, r.text
                        await tab.until("reload")
                    # Event ids are each replica's own: resumed on another replica, the stream reloads.
                    async with open_events(on_c, watched, last_event_id=tab.last_id) as resumed:
                        assert (await resumed.next()).type == "reload"

                    # 2. A turn running on A: a restore on B is refused with turn_running.
                    r = await on_a.post(f"/api/chats/{busy}/messages", json={"text": "hello"})
                    assert r.status_code == 200, r.text
                    step = await first_step(on_b, busy)
                    r = await on_a.post(f"/api/chats/{busy}/messages", params={"wait": "false"}, json={"text": "sleep 30"})
                    assert r.status_code == 202, r.text
                    await until(lambda: running(on_b, busy), "the turn on A to show on B")
                    r = await on_b.post("/api/replay/restore", json={"thread_id": busy, "snapshot_id": step})
                    assert r.status_code == 409 and r.json()["error"] == "turn_running", r.text

                    # 3. Only one replica polls Telegram, and one answer comes per message.
                    await asyncio.sleep(LEADER_CHECK_SECONDS + 1)  # longer than a follower's look at the leader's row
                    await telegram_turn(telegram, "hello from Telegram")
                    assert POLLING not in b.log() and POLLING not in c.log()

                    # 4. A dies mid-turn: B frees the chat and closes the cut turn; B or C takes Telegram over.
                    a.process.send_signal(signal.SIGKILL)
                    await a.process.wait()
                    killed = time.monotonic()

                    async def freed() -> bool:
                        rows = (await on_b.get(f"/api/chats/{busy}/messages")).json()
                        return not rows["running"] and rows["messages"][-1]["role"] == "error"

                    await until(freed, "the dead replica's chat to be freed and its turn closed", 3 * LEASE_SECONDS + 5)
                    r = await on_c.post(f"/api/chats/{busy}/messages", json={"text": "are you there?"})
                    assert r.status_code == 200 and r.json()["reply"] == answer_to("are you there?"), r.text

                    await until(lambda: _polls(b, c), "B or C to take Telegram over", TAKEOVER_SECONDS)
                    assert time.monotonic() - killed < TAKEOVER_SECONDS + 1
                    assert (POLLING in b.log()) != (POLLING in c.log())
                    await telegram_turn(telegram, "still there?")
                    assert telegram.conflicts == 0
                    for serve in (a, b, c):
                        assert "Conflict" not in serve.log()

                # 5. The clean-up: every replica's first pass came 3 s after its start; one of them ran it.
                day = datetime.now(UTC).date().isoformat()
                with psycopg.connect(pg_url) as conn:
                    claims = conn.execute("SELECT day, holder FROM kazma.job_claims").fetchall()
                assert [d for d, _ in claims] == [day]
                pids = {a.process.pid, b.process.pid, c.process.pid}
                assert int(claims[0][1].split(":")[1]) in pids
                skipped = [s for s in (a, b, c) if "another replica runs the pass of" in s.log()]
                assert len(skipped) == 2, [s.log()[-2000:] for s in (a, b, c)]


async def _polls(*serves: Serve) -> bool:
    return any(POLLING in s.log() for s in serves)


async def test_stop_sent_to_another_replica_stops_the_turn_where_it_runs(tmp_path: Path, pg_url: str) -> None:
    """Regression: Stop sent to replica B, for a turn running on replica A, answered `stopped: false`
    and the turn ran on."""
    core = await Core.open(make_settings(tmp_path / "setup", database={"url": pg_url}))
    try:
        ann = await core.store.users.add_user("ann")
        token = await core.store.users.issue_token(ann.id, "api")
        chat = (await core.chats.create(ann, "stopped elsewhere")).id
    finally:
        await core.close()
    env = replica_env(tmp_path, pg_url)
    async with replica(tmp_path, "a", env) as a, replica(tmp_path, "b", env) as b:  # noqa: SIM117  (the servers, then their clients)
        async with client(a, token) as on_a, client(b, token) as on_b, open_events(on_a, chat) as tab:
            r = await on_a.post(f"/api/chats/{chat}/messages", params={"wait": "false"}, json={"text": "sleep 5"})
            assert r.status_code == 202, r.text
            await tab.until("message", role="user")
            await until(lambda: running(on_b, chat), "the turn on A to show on B")

            async def stop() -> tuple[httpx.Response, float]:
                response = await on_b.post(f"/api/chats/{chat}/stop")
                return response, time.monotonic()

            stopping = asyncio.create_task(stop())
            await tab.until("message", role="stopped", timeout=4)  # before the 5 s sleep would have ended it
            await tab.until("turn", running=False)
            ended = time.monotonic()
            r, answered = await stopping
            assert r.status_code == 200 and r.json() == {"stopped": True, "thread_id": chat}, r.text
            assert answered - ended < STOP_ANSWER_SECONDS
            rows = (await on_b.get(f"/api/chats/{chat}/messages")).json()
            assert not rows["running"] and [m["role"] for m in rows["messages"]] == ["user", "stopped"]
            # Nothing runs any more: the next Stop, on either replica, says so.
            for http in (on_a, on_b):
                assert (await http.post(f"/api/chats/{chat}/stop")).json()["stopped"] is False


async def test_a_restore_cut_on_a_killed_replica_is_finished_by_another_replicas_sweep(
    tmp_path: Path, pg_url: str
) -> None:
    """Regression: a restore cut by SIGKILL on one replica (its step written back, its later steps not
    yet kept aside) stayed half-done until some replica restarted."""
    db = {"url": pg_url}
    chat, step, transcript, steps = await prepared(tmp_path / "setup", database=db)
    other = await Core.open(make_settings(tmp_path / "b", database=db, agent={"lease_seconds": 2}))
    sweep: asyncio.Task[None] | None = None
    try:
        # Replica A restores the chat and is killed right after the transaction that writes the step back.
        await killed_after(tmp_path, pg_url, "restore-checkpoint", chat, "restore", step)
        rows = RewindRows(other.store.db)
        assert [i.chat_id for i in await rows.open_intents()] == [chat]
        # Then the other replica's sweep, which is what finishes it (started before, it could do so
        # before the half-done state was looked at).
        sweep = asyncio.create_task(other.sweep())

        async def finished() -> bool:
            return not await rows.open_intents()

        await until(finished, "the other replica's sweep to finish the cut restore", 10)
        assert [s.id for s in await other.snapshots.list_steps(chat)] == steps[: steps.index(step) + 1]
        assert [(r.turn_index, r.role, r.text) for r in await other.store.transcript.transcript(chat)] == transcript[:4]
        assert await other.store.leases.lease(chat) is None
        assert (await other.turns.send(chat, "still here?")).status == "done"
    finally:
        if sweep is not None:
            sweep.cancel()
            await asyncio.gather(sweep, return_exceptions=True)
        await other.close()


async def test_an_undo_cut_on_a_killed_replica_is_finished_by_another_replicas_sweep(
    tmp_path: Path, pg_url: str
) -> None:
    """Regression: an undo cut by SIGKILL on one replica (kazma.db's part committed, the steps not yet
    back) stayed half-done until some replica restarted."""
    db = {"url": pg_url}
    chat, before, _ = await restored_chat(tmp_path / "setup", database=db)
    other = await Core.open(make_settings(tmp_path / "b", database=db, agent={"lease_seconds": 2}))
    sweep: asyncio.Task[None] | None = None
    try:
        # Replica A undoes the restore and is killed right after the transaction that puts kazma.db's part back.
        await killed_after(tmp_path, pg_url, "undo-checkpoint", chat, "undo", "")
        rows = RewindRows(other.store.db)
        assert [u.chat_id for u in await rows.undoing()] == [chat]
        # Then the other replica's sweep, which is what finishes it (started before, it could do so
        # before the half-done state was looked at).
        sweep = asyncio.create_task(other.sweep())

        async def finished() -> bool:
            return not await rows.undoing()

        await until(finished, "the other replica's sweep to finish the cut undo", 10)
        assert await seen(other, chat) == before
        assert (await other.turns.send(chat, "still here?")).status == "done"
    finally:
        if sweep is not None:
            sweep.cancel()
            await asyncio.gather(sweep, return_exceptions=True)
        await other.close()


async def killed_after(tmp_path: Path, pg_url: str, stage: str, chat: str, action: str, arg: str) -> None:
    """Replica A: a process on the shared database that runs Ann's restore or undo and kills itself
    (SIGKILL) at the crash point named (tests/crash.py)."""
    await run_killed(stage, tmp_path / "a", chat, action, arg, replica_env(tmp_path, pg_url), WAIT_SECONDS)


@contextlib.asynccontextmanager
async def two_replicas_and_a_chat(tmp_path: Path, pg_url: str) -> AsyncIterator[tuple[Core, Core, str]]:
    """Two cores on one database (replicas A and B, in this process) and Ann's chat, answered once on A."""
    a = await Core.open(make_settings(tmp_path / "a", database={"url": pg_url}))
    b = await Core.open(make_settings(tmp_path / "b", database={"url": pg_url}))
    try:
        ann = await a.store.users.add_user("ann")
        chat = (await a.chats.create(ann, "fenced")).id
        await a.turns.send(chat, "hello")
        yield a, b, chat
    finally:
        await a.close()
        await b.close()


async def test_a_holder_whose_lease_was_taken_saves_no_step(tmp_path: Path, pg_url: str) -> None:
    """Regression: fencing refused a stalled holder's checkpoint and transcript writes, not its saved
    steps (another store): it could still add a stray step to a chat another replica had taken."""
    async with two_replicas_and_a_chat(tmp_path, pg_url) as (a, b, chat):
        state = (await a.turns.graph.aget_state(a.turns.config(chat))).values
        async with chat_lease(a.store.leases, chat, "turn", 30):
            assert await a.recorder.capture(chat, state, last=True) is not None  # held: saved
        before = [s.id for s in await b.snapshots.list_steps(chat)]
        async with chat_lease(a.store.leases, chat, "turn", 30) as holder:
            # A stalls past its lease (as a paused process does); B takes the chat meanwhile.
            await b.store.leases.release_lease(chat, holder)
            assert await b.store.leases.acquire_lease(chat, "b-holder", "recover", 30)
            assert await a.recorder.capture(chat, state, last=True) is None
        assert [s.id for s in await b.snapshots.list_steps(chat)] == before


async def test_replicas_started_together_on_an_empty_database_make_one_owner(tmp_path: Path, pg_url: str) -> None:
    """Regression: replicas started at the same instant on an empty database could each make an owner
    (and print a sign-in link for each)."""

    async def waiting() -> bool:
        for task in starting:
            if task.done():
                await task  # a replica that failed to start says why
        with psycopg.connect(pg_url) as conn:
            (count,) = conn.execute(  # the owner's lock (the schemas' migrations take a lock too: pg_advisory_xact_lock)
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event = 'advisory' AND query LIKE 'SELECT pg_advisory_lock(%%'"
            ).fetchone()
        return bool(count == 2)

    env = replica_env(tmp_path, pg_url)
    starting: list[asyncio.Task[Serve]] = []
    async with contextlib.AsyncExitStack() as started:
        # Both reach the owner's making at the same moment: held here until both wait for it.
        async with one_at_a_time(pg_url, FIRST_OWNER):
            # Two starts at once, held at the owner's lock meanwhile: each has longer than one start alone.
            starting.extend(
                asyncio.create_task(started.enter_async_context(replica(tmp_path, n, env, 3 * START_SECONDS))) for n in "ab"
            )
            try:
                await until(waiting, "both replicas to wait to make the owner", 2 * START_SECONDS)
            except BaseException:
                for task in starting:
                    task.cancel()
                await asyncio.gather(*starting, return_exceptions=True)
                raise
        a, b = await asyncio.gather(*starting)
        with psycopg.connect(pg_url) as conn:
            owners = conn.execute("SELECT name FROM kazma.users WHERE role = 'owner'").fetchall()
        assert owners == [("owner",)]
        outputs = [a.out.read_text(), b.out.read_text()]
        assert sum(o.count(SIGN_IN) for o in outputs) == 1, outputs
        assert any("Another replica starting at the same time made the owner" in o for o in outputs), outputs


# the pieces, in one process against the same kind of database ------------------------------------
async def test_a_holder_whose_lease_was_taken_writes_nothing_more_to_the_chat(tmp_path: Path, pg_url: str) -> None:
    async with two_replicas_and_a_chat(tmp_path, pg_url) as (a, b, chat):
        before = await a.store.transcript.transcript(chat)
        async with chat_lease(a.store.leases, chat, "turn", 30) as holder:
            # A stalls past its lease (as a paused process does); B takes the chat meanwhile.
            await b.store.leases.release_lease(chat, holder)
            assert await b.store.leases.acquire_lease(chat, "b-holder", "restore", 30)
            with pytest.raises(LeaseLost):
                await a.turns.graph.aupdate_state(
                    a.turns.config(chat), {"messages": [AIMessage("written too late")]}, as_node="respond"
                )
        assert await b.store.transcript.transcript(chat) == before


async def test_a_lease_of_another_host_is_freed_only_once_expired(tmp_path: Path, pg_url: str) -> None:
    core = await Core.open(make_settings(tmp_path / "a", database={"url": pg_url}))
    try:
        ann = await core.store.users.add_user("ann")
        chat = (await core.chats.create(ann, "cut")).id
        assert await core.store.leases.acquire_lease(chat, "elsewhere:1:0123456789ab:x", "turn", 1.0)
        assert await core.recover() == []  # another host: alive or not, nobody here can tell
        await asyncio.sleep(1.2)
        assert await core.recover() == [chat]
        assert await core.store.leases.lease(chat) is None
    finally:
        await core.close()


async def test_one_leader_at_a_time_and_another_takes_over_when_it_stops(tmp_path: Path, pg_url: str) -> None:
    core = await Core.open(make_settings(tmp_path / "a", database={"url": pg_url}))
    store = ReplicaStore(core.store.db)
    leading: list[str] = []

    def candidate(holder: str) -> tuple[Leadership, asyncio.Task[None]]:
        async def work() -> None:
            leading.append(holder)
            try:
                await asyncio.Event().wait()
            finally:
                leading.remove(holder)

        leadership = Leadership(store, "test", holder=holder, ttl=1.0, renew=0.3, check=0.2)
        return leadership, asyncio.create_task(leadership.lead(work))

    try:
        (_, first), (_, second) = candidate("one"), candidate("two")
        await until(lambda: _true(len(leading) == 1), "a leader")
        await asyncio.sleep(1.5)  # renewals go on: still the same, single leader
        assert len(leading) == 1
        stopping = first if leading == ["one"] else second
        stopping.cancel()
        await asyncio.gather(stopping, return_exceptions=True)
        await until(lambda: _true(leading == (["two"] if stopping is first else ["one"])), "the other to lead", 5)
        (second if stopping is first else first).cancel()
        await asyncio.gather(first, second, return_exceptions=True)
    finally:
        await core.close()


async def _true(value: bool) -> bool:
    return value
