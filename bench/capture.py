"""Capture benchmark: what saving every step of a growing conversation costs.

For conversations of 10, 100 and 1,000 messages (about 1 KB each, with AI tool calls
and ToolMessages mixed in) the conversation is grown 1-2 messages at a time and a step
holding the whole conversation so far is captured after each append (a new turn every
10 steps). The same steps go to four stores, each in its own temporary folder:

  ours       SqliteSnapshotStore through SnapshotRecorder.capture (budgets too large to evict)
  langgraph  AsyncSqliteSaver.aput of a checkpoint holding the same state, read with aget_tuple
  naive      one aiosqlite row per step holding the whole state as JSON, read with orjson.loads
  raw        one aiosqlite insert of a 20 KB blob + commit (the floor for any durable write)

All files use WAL with synchronous=NORMAL (LangGraph's own default is FULL, which adds an
fsync per commit; it is lowered here so the figures compare designs, not pragmas).
Per store: capture median over all steps and over the last 10 % (largest states), bytes
per step (file + -wal after wal_checkpoint(TRUNCATE), divided by steps stored), file
size, and the median time to read the newest and the middle step back into a full state.
Figures are wall times on a shared machine: read the ratios, and rerun when in doubt.
At 10 messages the file sizes are mostly empty schema pages (ours starts at 48 KB).

    .venv/bin/python bench/capture.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
import orjson
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, message_to_dict
from langgraph.checkpoint.base import Checkpoint, create_checkpoint, empty_checkpoint
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from kazma_core.events import EventBus
from kazma_core.settings import TimeTravelSettings
from kazma_core.stores.snapshots_sqlite import SqliteSnapshotStore
from kazma_core.time_travel import SnapshotRecorder

SIZES = (10, 100, 1000)
CHAT = "bench-chat"
PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL")
SETTINGS = TimeTravelSettings(
    enabled=True, max_snapshots=100_000, max_global_snapshots=10_000_000, max_per_turn=10_000,
    max_thread_bytes=1 << 40, max_total_bytes=1 << 44, max_snapshot_bytes=1 << 30,
    auto_maintain=True, retention_days=30,
)
WORDS = (
    "the agent reads a file then calls the search tool and writes a short answer about "
    "sqlite pages wal commits bodies steps turns budgets time travel restore branch json"
).split()

State = dict[str, Any]


def text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    length = 0
    while length < chars:
        word = rng.choice(WORDS) + (str(rng.randrange(1000)) if rng.random() < 0.2 else "")
        out.append(word)
        length += len(word) + 1
    return " ".join(out)


def conversation(n: int, seed: int = 7) -> list[BaseMessage]:
    """Human, AI with a tool call, ToolMessage, AI answer, repeated: about 1 KB each as JSON."""
    rng = random.Random(seed)
    msgs: list[BaseMessage] = []
    while len(msgs) < n:
        i, call = len(msgs), f"call_{len(msgs):05d}"
        kind = i % 4
        if kind == 0:
            msgs.append(HumanMessage(text(rng, 820), id=f"m{i:05d}"))
        elif kind == 1:
            args = {"query": text(rng, 200), "limit": 10}
            calls = [{"name": "search", "args": args, "id": call}]
            msgs.append(AIMessage(text(rng, 500), id=f"m{i:05d}", tool_calls=calls))
        elif kind == 2:
            msgs.append(ToolMessage(text(rng, 780), id=f"m{i:05d}", tool_call_id=f"call_{i - 1:05d}", name="search"))
        else:
            msgs.append(AIMessage(text(rng, 720), id=f"m{i:05d}"))
    return msgs


def step_ends(n: int, seed: int = 11) -> list[int]:
    """How many messages the conversation holds at each step: 1 or 2 appended per step."""
    rng = random.Random(seed)
    ends, end = [], 0
    while end < n:
        end = min(n, end + rng.choice((1, 2)))
        ends.append(end)
    return ends


def make_state(msgs: list[BaseMessage], step: int, end: int) -> State:
    return {
        "messages": msgs[:end],
        "plan": [{"title": f"part {j} of the task", "done": j < step % 5} for j in range(5)],
        "routing": {"agent": "researcher", "reason": "needs the search tool", "confidence": 0.8},
        "cost": {"input_tokens": 900 * end, "output_tokens": 210 * end, "usd": round(0.00002 * end, 6)},
        "scratchpad": {"notes": f"looked at {end} messages", "files": ["a.py", "b.md"]},
        "turn_index": step // 10,
        "questions": [f"question of turn {step // 10}"],
        "iteration": step % 10,
        "model": "bench",
        "gates": [],
    }


def ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


async def samples_ms(fn: Callable[[], Awaitable[Any]], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        t0 = time.perf_counter()
        await fn()
        samples.append(ms_since(t0))
    return samples


def file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


@dataclass
class Result:
    """One store's figures for one size (ms, bytes)."""

    store: str
    median: float
    tail: float
    per_step: float
    size: float
    read_newest: float
    read_middle: float
    read_ok: bool


async def summarize(
    store: str, capture: list[float], size: int, reads: int, newest: Callable[[], Awaitable[Any]],
    middle: Callable[[], Awaitable[Any]], ok: bool,
) -> Result:
    """Figures of one capture sequence; reading the newest and the middle step is timed here."""
    tail = capture[-max(1, len(capture) // 10):]
    read_newest = statistics.median(await samples_ms(newest, reads))
    read_middle = statistics.median(await samples_ms(middle, reads))
    return Result(store, statistics.median(capture), statistics.median(tail), size / len(capture), size,
                  read_newest, read_middle, ok)


def combine(rounds: list[Result]) -> Result:
    """The median of each figure over the rounds."""
    def med(attr: str) -> float:
        return statistics.median(getattr(r, attr) for r in rounds)

    return Result(rounds[0].store, med("median"), med("tail"), med("per_step"), med("size"), med("read_newest"),
                  med("read_middle"), all(r.read_ok for r in rounds))


def as_dicts(messages: list[Any]) -> list[Any]:
    return [m if isinstance(m, dict) else message_to_dict(m) for m in messages]


async def run_ours(folder: Path, msgs: list[BaseMessage], ends: list[int], reads: int) -> Result:
    path = folder / "snapshots.db"
    store = SqliteSnapshotStore(path)
    recorder = SnapshotRecorder(store, SETTINGS, EventBus())
    times, ids = [], []
    for step, end in enumerate(ends):
        state = make_state(msgs, step, end)
        t0 = time.perf_counter()
        info = await recorder.capture(CHAT, state, last=True)
        times.append(ms_since(t0))
        if info is None:
            raise RuntimeError("capture failed: see the log above")
        ids.append(info.id)
    await store.db.run(lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
    size = file_bytes(path)
    mid = len(ids) // 2
    got = await store.get(CHAT, ids[mid])
    ok = got is not None and got.state["messages"] == as_dicts(msgs[: ends[mid]])
    result = await summarize(
        "ours", times, size, reads, lambda: store.get(CHAT, ids[-1]), lambda: store.get(CHAT, ids[mid]), ok
    )
    await store.close()
    return result


async def run_langgraph(folder: Path, msgs: list[BaseMessage], ends: list[int], reads: int) -> Result:
    path = folder / "langgraph.db"
    async with aiosqlite.connect(path) as conn:
        saver = AsyncSqliteSaver(conn)
        await saver.setup()
        for pragma in PRAGMAS:
            await conn.execute(pragma)
        config: Any = {"configurable": {"thread_id": CHAT, "checkpoint_ns": ""}}
        checkpoint: Checkpoint = empty_checkpoint()
        times, configs = [], []
        for step, end in enumerate(ends):
            state = make_state(msgs, step, end)
            checkpoint = create_checkpoint(checkpoint, None, step)
            versions = {k: saver.get_next_version(checkpoint["channel_versions"].get(k), None) for k in state}
            checkpoint["channel_values"] = state
            checkpoint["channel_versions"] = {**checkpoint["channel_versions"], **versions}
            metadata: Any = {"source": "loop", "step": step, "parents": {}}
            t0 = time.perf_counter()
            config = await saver.aput(config, checkpoint, metadata, versions)
            times.append(ms_since(t0))
            configs.append(config)
        await conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = file_bytes(path)
        mid = len(configs) // 2
        got = await saver.aget_tuple(configs[mid])
        ok = got is not None and as_dicts(got.checkpoint["channel_values"]["messages"]) == as_dicts(msgs[: ends[mid]])
        return await summarize(
            "langgraph", times, size, reads, lambda: saver.aget_tuple(configs[-1]),
            lambda: saver.aget_tuple(configs[mid]), ok,
        )


async def run_naive(folder: Path, msgs: list[BaseMessage], ends: list[int], reads: int) -> Result:
    path = folder / "naive.db"
    async with aiosqlite.connect(path) as conn:
        for pragma in PRAGMAS:
            await conn.execute(pragma)
        await conn.execute("CREATE TABLE steps (seq INTEGER PRIMARY KEY, chat_id TEXT NOT NULL, state BLOB NOT NULL)")
        await conn.commit()
        times = []
        for step, end in enumerate(ends):
            state = make_state(msgs, step, end)
            t0 = time.perf_counter()
            blob = orjson.dumps({**state, "messages": [message_to_dict(m) for m in state["messages"]]})
            await conn.execute("INSERT INTO steps (chat_id, state) VALUES (?, ?)", (CHAT, blob))
            await conn.commit()
            times.append(ms_since(t0))
        await conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = file_bytes(path)

        async def read(seq: int) -> State:
            async with conn.execute("SELECT state FROM steps WHERE seq = ?", (seq,)) as cur:
                row = await cur.fetchone()
            if row is None:
                raise LookupError(seq)
            return dict(orjson.loads(row[0]))

        mid = len(ends) // 2
        ok = (await read(mid + 1))["messages"] == as_dicts(msgs[: ends[mid]])
        return await summarize("naive", times, size, reads, lambda: read(len(ends)), lambda: read(mid + 1), ok)


async def raw_commits(folder: Path, times: int) -> list[float]:
    """Times of one insert of a 20 KB blob + commit, with our pragmas."""
    blob = random.Random(3).randbytes(20 * 1024)
    async with aiosqlite.connect(folder / "raw.db") as conn:
        for pragma in PRAGMAS:
            await conn.execute(pragma)
        await conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        await conn.commit()

        async def write() -> None:
            await conn.execute("INSERT INTO t (body) VALUES (?)", (blob,))
            await conn.commit()

        await samples_ms(write, 10)  # warm up
        return await samples_ms(write, times)


def verdict(value: float, target: float) -> str:
    return "PASS" if value <= target else "MISS"


async def bench_size(n: int, rounds: int, reads: int, raw_times: int) -> None:
    """Run every store on the same steps; with several rounds each figure is their median.

    The raw baseline runs half before and half after the stores in each round, so it
    sees the same machine (thread wake-up times here drift between runs).
    """
    msgs = conversation(n)
    ends = step_ends(n)
    avg = sum(len(orjson.dumps(message_to_dict(m))) for m in msgs) / n
    runners = {"ours": run_ours, "langgraph": run_langgraph, "naive": run_naive}
    per_round: dict[str, list[Result]] = {name: [] for name in runners}
    raw_samples: list[float] = []
    with tempfile.TemporaryDirectory(prefix="kazma-bench-raw-") as raw_dir:
        for _ in range(rounds):
            raw_samples += await raw_commits(Path(raw_dir), raw_times // (2 * rounds))
            for name, runner in runners.items():
                gc.collect()  # start each store with the same heap
                with tempfile.TemporaryDirectory(prefix=f"kazma-bench-{name}-") as tmp:
                    per_round[name].append(await runner(Path(tmp), msgs, ends, reads))
            raw_samples += await raw_commits(Path(raw_dir), raw_times // (2 * rounds))
    results = {name: combine(rs) for name, rs in per_round.items()}
    raw = statistics.median(raw_samples)

    print(f"\n== {n} messages (avg {avg:.0f} B as JSON), {len(ends)} steps in {(len(ends) + 9) // 10} turns,"
          f" {rounds} round(s) ==")
    head = (f"{'store':<10} {'capture ms':>10} {'last10% ms':>10} {'B/step':>11} {'file MB':>9}"
            f" {'read new ms':>11} {'read mid ms':>11}  ok")
    print(head)
    print("-" * len(head))
    for r in results.values():
        print(
            f"{r.store:<10} {r.median:>10.3f} {r.tail:>10.3f} {r.per_step:>11,.0f} {r.size / 1e6:>9.2f}"
            f" {r.read_newest:>11.3f} {r.read_middle:>11.3f}  {'yes' if r.read_ok else 'NO'}"
        )
    print(f"{'raw 20 KB':<10} {raw:>10.3f}   (insert + commit, median of {len(raw_samples)})")

    ours, lg, naive = results["ours"], results["langgraph"], results["naive"]
    rows = [
        ("ours capture / langgraph put (median)", ours.median / lg.median, 0.1),
        ("ours capture / langgraph put (last 10%)", ours.tail / lg.tail, 0.1),
        ("ours capture / raw 20 KB commit (median)", ours.median / raw, 4.0),
        ("ours capture / raw 20 KB commit (last 10%)", ours.tail / raw, 4.0),
        ("ours bytes per step / naive bytes per step", ours.per_step / naive.per_step, 1 / 40),
        ("ours read-back ms (slower of newest, middle)", max(ours.read_newest, ours.read_middle), 15.0),
    ]
    for label, value, target in rows:
        print(f"  {label:<46} {value:>9.4f}   target <= {target:<7.4g} {verdict(value, target)}")
    print(f"  (naive / ours bytes per step: {naive.per_step / ours.per_step:,.1f}x;"
          f" langgraph / ours: {lg.per_step / ours.per_step:,.1f}x)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (under a minute)")
    args = parser.parse_args()
    rounds, reads, raw_times = (1, 5, 200) if args.quick else (3, 21, 600)
    print(f"Kazma capture bench ({'quick' if args.quick else 'full'}): {rounds} round(s) per size,"
          f" reads median of {reads}, WAL + synchronous=NORMAL everywhere")
    for n in SIZES:
        await bench_size(n, rounds, reads, raw_times)


if __name__ == "__main__":
    asyncio.run(main())
