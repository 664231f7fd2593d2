"""SQLite engine bench: what a turn's transactions cost on aiosqlite's thread, against the
standard library's one-thread executor the engine ran on before, in one run.

Both engines are kazma_core.stores.sqlite.SqliteDB: the same files, pragmas, migrations and error
handling; only the hand-off of a transaction to the connection's thread differs ("aiosqlite":
the engine as it is, "executor": run_in_executor on a ThreadPoolExecutor(max_workers=1), kept
here as the yardstick). Each turn of a chat is what the server's stores do for one, through the
real stores, in a folder of its own per engine:

  lease acquire (app store, fenced from then on), one supervisor iteration (2 put_writes +
  2 put of the conversation store into kazma.db, the transcript rows derived from them), a step
  saved (SnapshotRecorder.capture into snapshots.db), the lease renewed, a second iteration and
  the turn's last step, the lease released; conversations of about 1 KB a message.

Printed per engine: process CPU time (every thread: the event loop's and the databases'), the event
loop thread's alone, and wall time per turn, with 1 chat and with 20 chats taking turns at once; then the hand-off alone, per
request that does nothing on the thread, from 1 caller and from 20 at once; each the median over
rounds that alternate the engines (the shared machine drifts from minute to minute), and the
ratio aiosqlite / executor of each median.

    .venv/bin/python bench/sqlite_engine.py [--rounds 7] [--turns 20] [--chats 20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from langgraph.checkpoint.base import empty_checkpoint

from kazma_core.events import LocalEventBus
from kazma_core.replicas import fence as fences
from kazma_core.settings import load_settings
from kazma_core.stores import app_schema, snapshots_sql
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.engine import Conn
from kazma_core.stores.snapshots_sql import SqlSnapshotStore
from kazma_core.stores.sqlite import SqliteDB
from kazma_core.time_travel import SnapshotRecorder

sys.path.insert(0, str(Path(__file__).parent))
from capture import conversation, make_state, turn_writes

T = TypeVar("T")
Figures = tuple[float, ...]  # CPU (every thread), the event loop thread's CPU, wall
TTL = 60.0
SETTINGS = load_settings().time_travel


class ExecutorDB(SqliteDB):
    """The engine before aiosqlite: every request handed to a one-thread ThreadPoolExecutor."""

    hops = 0  # requests handed to a thread, both files, every instance (the transactions counted)

    def __init__(self, path: Path, migrations: Any, *, secure_delete: bool = False) -> None:
        super().__init__(path, migrations, secure_delete=secure_delete)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sqlite-{path.name}")

    async def run(self, fn: Callable[[sqlite3.Connection], T], *, small: bool = False) -> T:
        # Every request to the thread, small or not (as before requests could run at once).
        ExecutorDB.hops += 1
        return await asyncio.get_running_loop().run_in_executor(self._pool, self._call, fn)

    async def close(self) -> None:
        await asyncio.to_thread(self._probes.shutdown, wait=True)
        await asyncio.get_running_loop().run_in_executor(self._pool, self._drop)
        self._pool.shutdown(wait=True)


ENGINES: dict[str, type[SqliteDB]] = {"aiosqlite": SqliteDB, "executor": ExecutorDB}


@dataclass
class Chat:
    chat_id: str
    configs: list[Any]
    last: list[Any] = field(default_factory=lambda: [empty_checkpoint()])
    step: int = 0


class Bench:
    """One engine's stores in a folder of their own, with chats made and a few turns taken."""

    def __init__(self, engine: type[SqliteDB], folder: Path) -> None:
        self.app = AppStore(engine(folder / "kazma.db", app_schema.MIGRATIONS, secure_delete=True))
        self.conversation = SqlConversationStore(self.app.db)
        self.steps = SqlSnapshotStore(engine(folder / "snapshots.db", snapshots_sql.MIGRATIONS, secure_delete=True))
        self.recorder = SnapshotRecorder(self.steps, SETTINGS, LocalEventBus())
        self.msgs = conversation(400)
        self.chats: list[Chat] = []

    per_turn = 0.0  # requests per turn, as the executor counted them

    async def open(self, chats: int) -> None:
        owner = await self.app.users.add_user(f"bench-{uuid.uuid4().hex[:6]}")
        for _ in range(chats):
            chat = await self.app.chats.create_chat(owner.id, "bench")
            self.chats.append(Chat(chat.id, [{"configurable": {"thread_id": chat.id, "checkpoint_ns": ""}}]))
        await self.turns(self.chats, 2)  # the schema's pages read, the caches warm

    async def turn(self, chat: Chat) -> None:
        holder = uuid.uuid4().hex
        if not await self.app.leases.acquire_lease(chat.chat_id, holder, "turn", TTL):
            raise RuntimeError("the lease was not taken")
        held = fences.Fence(chat.chat_id, holder, until=time.time() + TTL)
        token = fences.hold(held)
        try:
            for last in (False, True):
                state = make_state(self.msgs, chat.step, min(len(self.msgs), 2 * chat.step + 2))
                await turn_writes(self.conversation, chat.configs, chat.last, chat.step, state)
                if await self.recorder.capture(chat.chat_id, state, last=last) is None:
                    raise RuntimeError("capture failed: see the log above")
                chat.step += 1
                if not last and not await self.app.leases.renew_lease(chat.chat_id, holder, TTL):
                    raise RuntimeError("the lease was not renewed")
        finally:
            fences.let_go(held, token)
            await self.app.leases.release_lease(chat.chat_id, holder)

    async def turns(self, chats: list[Chat], each: int) -> None:
        async def one(chat: Chat) -> None:
            for _ in range(each):
                await self.turn(chat)

        await asyncio.gather(*(one(chat) for chat in chats))

    async def close(self) -> None:
        await self.steps.close()
        await self.app.close()


async def timed(bench: Bench, chats: int, each: int) -> Figures:
    """(CPU ms, the event loop's CPU ms, wall ms) per turn, chats taking `each` turns at once."""
    gc.collect()
    hops = ExecutorDB.hops
    cpu, loop, wall = time.process_time(), time.thread_time(), time.perf_counter()
    await bench.turns(bench.chats[:chats], each)
    turns = chats * each
    if ExecutorDB.hops != hops:
        Bench.per_turn = (ExecutorDB.hops - hops) / turns
    return tuple((now - then) * 1000 / turns for now, then in _since(cpu, loop, wall))


async def handoffs(bench: Bench, at_once: int, requests: int = 2000) -> Figures:
    """(CPU us, the event loop's CPU us, wall us) per request that does nothing on the thread: the hand-off alone, there
    and back, `at_once` callers asking together."""
    db = bench.app.db

    async def caller() -> None:
        for _ in range(requests // at_once):
            await db.run(_nothing)

    gc.collect()
    cpu, loop, wall = time.process_time(), time.thread_time(), time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(at_once)))
    return tuple((now - then) * 1e6 / requests for now, then in _since(cpu, loop, wall))


def _since(cpu: float, loop: float, wall: float) -> list[tuple[float, float]]:
    return [(time.process_time(), cpu), (time.thread_time(), loop), (time.perf_counter(), wall)]


def _nothing(conn: Conn) -> None:
    return None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="rounds, each engine once per round (default 7)")
    parser.add_argument("--turns", type=int, default=20, help="turns per round with 1 chat (default 20)")
    parser.add_argument("--chats", type=int, default=20, help="chats at once in the concurrent part (default 20)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kazma-engine-bench-") as tmp:
        benches: dict[str, Bench] = {}
        for name, engine in ENGINES.items():
            (Path(tmp) / name).mkdir()
            benches[name] = Bench(engine, Path(tmp) / name)
            await benches[name].open(args.chats)
        figures: dict[tuple[str, str], list[Figures]] = {}
        try:
            for round_ in range(args.rounds):
                order = list(benches) if round_ % 2 == 0 else list(reversed(benches))
                for name in order:
                    figures.setdefault((name, "1 chat"), []).append(await timed(benches[name], 1, args.turns))
                    # Each chat's conversation grows by the same amount on both engines.
                    figures.setdefault((name, f"{args.chats} chats"), []).append(await timed(benches[name], args.chats, 1))
                    for at_once in (1, args.chats):
                        got = await handoffs(benches[name], at_once)
                        figures.setdefault((name, f"hop x{at_once}"), []).append(got)
                print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
        finally:
            for bench in benches.values():
                with contextlib.suppress(Exception):
                    await bench.close()
    print(f"median of {args.rounds} rounds; CPU is the whole process's (every thread)")
    print(f"turn: ms per turn ({Bench.per_turn:.0f} requests to a database thread); hop: us per request doing nothing")
    print(f"{'':10} {'workload':>10} {'CPU':>8} {'loop CPU':>9} {'wall':>8}")
    medians: dict[tuple[str, str], Figures] = {}
    for (name, load), samples in figures.items():
        medians[name, load] = tuple(statistics.median(s[i] for s in samples) for i in range(3))
    for (name, load), (cpu, loop, wall) in sorted(medians.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"{name:10} {load:>10} {cpu:8.2f} {loop:9.2f} {wall:8.2f}")
    for load in ("1 chat", f"{args.chats} chats", "hop x1", f"hop x{args.chats}"):
        (cpu_a, loop_a, wall_a), (cpu_e, loop_e, wall_e) = medians["aiosqlite", load], medians["executor", load]
        print(f"aiosqlite / executor, {load}: CPU {cpu_a / cpu_e:.3f}, loop CPU {loop_a / loop_e:.3f}, wall {wall_a / wall_e:.3f}")


if __name__ == "__main__":
    asyncio.run(main())
