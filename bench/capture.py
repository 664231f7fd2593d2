"""Capture benchmark: what saving every step of a growing conversation costs.

Conversations of 10, 100 and 1,000 messages (about 1 KB each as JSON, AI tool calls and
ToolMessages mixed in) are grown 1-2 messages at a time. Each step is what one supervisor
iteration of a turn persists, counted whole: the two nodes' writes (the new messages, then
the small fields) and the two checkpoints after them, plus, for Kazma, the time-travel step.
The same steps go to three stores, each in its own temporary folder:

  ours       Kazma's conversation store (2 aput_writes + 2 aput into kazma.db) and the step
             store through SnapshotRecorder.capture, with the server's default settings
             (so old steps are evicted as a server would); read: a kept step, whole
  langgraph  AsyncSqliteSaver: the same 2 aput_writes + 2 aput; read: aget_tuple
  naive      one aiosqlite row per step holding the whole state as JSON; read: orjson.loads

plus "raw": an aiosqlite insert of a 20 KB blob + commit, timed between each store's
captures so it sees the same machine (a thread hop on these shared VMs drifts between
~15 and ~100 us from minute to minute). Every file uses WAL + synchronous=NORMAL
(LangGraph's own default, FULL, adds an fsync per commit). Reported per store: capture
median over all steps and over the last 10 % (largest states), bytes per step (file +
-wal after wal_checkpoint(TRUNCATE), over steps stored), file size, and the median time
to read the newest and the middle step back into a full state. At 10 messages the sizes
are mostly empty schema pages (an empty snapshots.db is 48 KB).

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
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import aiosqlite
import orjson
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, message_to_dict
from langgraph.checkpoint.base import BaseCheckpointSaver, ChannelVersions, create_checkpoint, empty_checkpoint
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from kazma_core.events import LocalEventBus
from kazma_core.messages import load_messages, message_dict
from kazma_core.settings import TimeTravelSettings, load_settings
from kazma_core.stores.app_schema import MIGRATIONS
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.snapshots_sql import MIGRATIONS as STEP_MIGRATIONS
from kazma_core.stores.snapshots_sql import SqlSnapshotStore
from kazma_core.stores.sqlite import SqliteDB
from kazma_core.time_travel import SnapshotRecorder

SIZES = (10, 100, 1000)
CHAT = "bench-chat"
PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL")
TRUNCATE = "PRAGMA wal_checkpoint(TRUNCATE)"
SETTINGS: TimeTravelSettings = load_settings().time_travel  # what `kazma serve` runs with
WORDS = (
    "the", "agent", "reads", "a", "file", "then", "calls", "search", "tool", "and", "writes", "short", "answer",
    "about", "sqlite", "pages", "wal", "commits", "bodies", "steps", "turns", "budgets", "time", "travel", "json",
)

State = dict[str, Any]
Capture = Callable[[int, State], Awaitable[None]]
Read = Callable[[int], Awaitable[list[Any]]]


def text(rng: random.Random, chars: int) -> str:
    """Prose of about chars characters, a number in every fifth word or so."""
    return " ".join(f"{rng.choice(WORDS)}{rng.randrange(99) if rng.random() < 0.2 else ''}" for _ in range(chars // 6))


def conversation(n: int, seed: int = 7) -> list[BaseMessage]:
    """Human, AI with a tool call, ToolMessage, AI answer, repeated: about 1 KB each as JSON."""
    rng = random.Random(seed)
    msgs: list[BaseMessage] = []
    for i in range(n):
        mid = f"m{i:05d}"
        if i % 4 == 0:
            msgs.append(HumanMessage(text(rng, 820), id=mid))
        elif i % 4 == 1:
            call = {"name": "search", "args": {"query": text(rng, 200), "limit": 10}, "id": f"call_{i:05d}"}
            msgs.append(AIMessage(text(rng, 500), id=mid, tool_calls=[call]))
        elif i % 4 == 2:
            msgs.append(ToolMessage(text(rng, 780), id=mid, tool_call_id=f"call_{i - 1:05d}", name="search"))
        else:
            msgs.append(AIMessage(text(rng, 720), id=mid))
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
    turn = step // 10
    return {
        "messages": msgs[:end],
        "plan": [{"title": f"part {j} of the task", "done": j < step % 5} for j in range(5)],
        "routing": {"agent": "researcher", "reason": "needs the search tool", "confidence": 0.8},
        "cost": {"input_tokens": 900 * end, "output_tokens": 210 * end, "usd": round(0.00002 * end, 6)},
        "scratchpad": {"notes": f"looked at {end} messages", "files": ["a.py", "b.md"]},
        "turn_index": turn, "questions": [f"question of turn {turn}"], "iteration": step % 10,
        "model": "bench", "gates": [],
    }


async def samples_ms(fn: Callable[[], Awaitable[Any]], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        t0 = time.perf_counter()
        await fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return samples


async def connect(path: Path) -> aiosqlite.Connection:
    conn = await aiosqlite.connect(path)
    for pragma in PRAGMAS:
        await conn.execute(pragma)
    return conn


def as_dicts(messages: list[Any]) -> list[Any]:
    """Messages in one comparable form (Kazma's saved form leaves default fields out)."""
    return [message_dict(m if not isinstance(m, dict) else load_messages([m])[0]) for m in messages]


@dataclass
class Job:
    """The same steps for every store, and the raw commit timed between captures."""

    msgs: list[BaseMessage]
    ends: list[int]
    reads: int
    raw: Callable[[], Awaitable[None]]
    raw_per_step: int


@dataclass
class Result:
    """One store's figures for one size (ms, bytes)."""

    raw: float  # ms, the 20 KB commit timed between this store's captures
    median: float  # ms, capture
    tail: float  # ms, capture over the last 10 % of steps
    per_step: float  # bytes
    size: float  # bytes
    read_newest: float  # ms
    read_middle: float  # ms
    read_ok: bool  # the middle step read back equals what was captured


async def measure(
    paths: list[Path], capture: Capture, checkpoint: Callable[[], Awaitable[Any]], read: Read, job: Job,
    kept: Callable[[], Awaitable[list[int]]] | None = None,
) -> Result:
    """Capture every step (only the store calls are timed), then size the files and time reads
    of the newest step and of the middle one of those still kept."""
    msgs, ends, reads = job.msgs, job.ends, job.reads
    times, raw = [], []
    for step, end in enumerate(ends):
        state = make_state(msgs, step, end)
        t0 = time.perf_counter()
        await capture(step, state)
        times.append((time.perf_counter() - t0) * 1000)
        raw += await samples_ms(job.raw, job.raw_per_step)
    await checkpoint()
    size = sum(p.stat().st_size for path in paths for p in (path, Path(f"{path}-wal")) if p.exists())
    alive = await kept() if kept else list(range(len(ends)))
    newest, mid = alive[-1], alive[len(alive) // 2]
    ok = as_dicts(await read(mid)) == as_dicts(msgs[: ends[mid]])
    tail = times[-max(1, len(times) // 10):]
    return Result(
        statistics.median(raw), statistics.median(times), statistics.median(tail), size / len(times), size,
        statistics.median(await samples_ms(lambda: read(newest), reads)),
        statistics.median(await samples_ms(lambda: read(mid), reads)), ok,
    )


async def turn_writes(saver: BaseCheckpointSaver[Any], configs: list[Any], last: list[Any], step: int, state: State) -> None:
    """What one supervisor iteration persists through a checkpointer: each of its two nodes'
    writes, then the checkpoint after it (LangGraph's put_writes, then put)."""
    if "checkpoint_id" not in configs[-1]["configurable"]:  # the run's input checkpoint comes first
        configs.append(await saver.aput(configs[-1], last[0], cast("Any", {"source": "input", "step": -1}), {}))
    before = last[0]["channel_values"].get("messages", []) if step else []
    fields = {k: v for k, v in state.items() if k != "messages"}
    for writes in ([("messages", state["messages"][len(before):])], list(fields.items())):
        await saver.aput_writes(configs[-1], writes, f"task-{step}-{len(writes)}")
        checkpoint = create_checkpoint(last[0], None, step)
        old = checkpoint["channel_versions"]
        versions: ChannelVersions = {k: saver.get_next_version(cast("Any", old.get(k)), None) for k, _ in writes}
        checkpoint["channel_values"] = {**last[0]["channel_values"], **dict(writes), "messages": state["messages"]}
        checkpoint["channel_versions"] = {**old, **versions}
        metadata: Any = {"source": "loop", "step": step, "parents": {}}
        configs.append(await saver.aput(configs[-1], checkpoint, metadata, versions))
        last[0] = checkpoint


async def run_ours(folder: Path, job: Job) -> Result:
    store = SqlSnapshotStore(SqliteDB(folder / "snapshots.db", STEP_MIGRATIONS, secure_delete=True))
    recorder = SnapshotRecorder(store, SETTINGS, LocalEventBus())
    db = SqliteDB(folder / "kazma.db", MIGRATIONS, secure_delete=True)
    conversation = SqlConversationStore(db)
    configs: list[Any] = [{"configurable": {"thread_id": CHAT, "checkpoint_ns": ""}}]
    last = [empty_checkpoint()]
    ids: list[str] = []

    async def capture(step: int, state: State) -> None:
        await turn_writes(conversation, configs, last, step, state)
        info = await recorder.capture(CHAT, state, last=True)
        if info is None:
            raise RuntimeError("capture failed: see the log above")
        ids.append(info.id)

    async def read(step: int) -> list[Any]:
        got = await store.get(CHAT, ids[step])
        return got.state["messages"] if got else []

    async def kept() -> list[int]:
        alive = {info.id for info in await store.list_steps(CHAT)}
        return [step for step, step_id in enumerate(ids) if step_id in alive]

    async def checkpoint() -> None:
        await store.db.run(lambda c: c.execute(TRUNCATE).fetchall())
        await db.run(lambda c: c.execute(TRUNCATE).fetchall())

    try:
        return await measure([store.db.path, db.path], capture, checkpoint, read, job, kept)
    finally:
        await store.close()
        await db.close()


async def run_langgraph(folder: Path, job: Job) -> Result:
    path = folder / "langgraph.db"
    conn = await connect(path)
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    configs: list[Any] = [{"configurable": {"thread_id": CHAT, "checkpoint_ns": ""}}]
    last = [empty_checkpoint()]
    per_step: list[Any] = []

    async def capture(step: int, state: State) -> None:
        await turn_writes(saver, configs, last, step, state)
        per_step.append(configs[-1])

    async def read(step: int) -> list[Any]:
        got = await saver.aget_tuple(per_step[step])
        return list(got.checkpoint["channel_values"]["messages"]) if got else []

    try:
        return await measure([path], capture, lambda: conn.execute(TRUNCATE), read, job)
    finally:
        await conn.close()


async def run_naive(folder: Path, job: Job) -> Result:
    path = folder / "naive.db"
    conn = await connect(path)
    await conn.execute("CREATE TABLE steps (seq INTEGER PRIMARY KEY, chat_id TEXT NOT NULL, state BLOB NOT NULL)")

    async def capture(step: int, state: State) -> None:
        blob = orjson.dumps({**state, "messages": [message_to_dict(m) for m in state["messages"]]})
        await conn.execute("INSERT INTO steps (seq, chat_id, state) VALUES (?, ?, ?)", (step, CHAT, blob))
        await conn.commit()

    async def read(step: int) -> list[Any]:
        async with conn.execute("SELECT state FROM steps WHERE seq = ?", (step,)) as cur:
            row = await cur.fetchone()
        return list(orjson.loads(row[0])["messages"]) if row else []

    try:
        return await measure([path], capture, lambda: conn.execute(TRUNCATE), read, job)
    finally:
        await conn.close()


@asynccontextmanager
async def raw_writer(folder: Path) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """One insert of a 20 KB blob + commit, with our pragmas."""
    blob = random.Random(3).randbytes(20 * 1024)
    conn = await connect(folder / "raw.db")
    await conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")

    async def write() -> None:
        await conn.execute("INSERT INTO t (body) VALUES (?)", (blob,))
        await conn.commit()

    try:
        await samples_ms(write, 10)  # warm up
        yield write
    finally:
        await conn.close()


def median_of(rounds: list[Result]) -> Result:
    """The median of each figure over the rounds."""
    def med(name: str) -> float:
        return float(statistics.median(getattr(r, name) for r in rounds))

    return Result(med("raw"), med("median"), med("tail"), med("per_step"), med("size"), med("read_newest"),
                  med("read_middle"), all(r.read_ok for r in rounds))


async def bench_size(n: int, rounds: int, reads: int, raw_samples: int) -> None:
    """Run every store on the same steps; with several rounds each figure is their median."""
    msgs, ends = conversation(n), step_ends(n)
    avg = sum(len(orjson.dumps(message_to_dict(m))) for m in msgs) / n
    runners = {"ours": run_ours, "langgraph": run_langgraph, "naive": run_naive}
    per_round: dict[str, list[Result]] = {name: [] for name in runners}
    for _ in range(rounds):
        for name, runner in runners.items():
            gc.collect()  # every store starts from the same heap
            with tempfile.TemporaryDirectory(prefix=f"kazma-bench-{name}-") as tmp:
                async with raw_writer(Path(tmp)) as raw:
                    job = Job(msgs, ends, reads, raw, max(1, raw_samples // len(ends)))
                    per_round[name].append(await runner(Path(tmp), job))
    results = {name: median_of(rs) for name, rs in per_round.items()}

    print(f"\n== {n} messages (avg {avg:.0f} B as JSON), {len(ends)} steps in {(len(ends) + 9) // 10} turns,"
          f" {rounds} round(s) ==")
    head = (f"{'store':<10} {'capture ms':>10} {'last10% ms':>10} {'B/step':>11} {'file MB':>9}"
            f" {'read new ms':>11} {'read mid ms':>11} {'raw 20KB ms':>11}  read ok")
    print(head + "\n" + "-" * len(head))
    for name, r in results.items():
        print(f"{name:<10} {r.median:>10.3f} {r.tail:>10.3f} {r.per_step:>11,.0f} {r.size / 1e6:>9.2f}"
              f" {r.read_newest:>11.3f} {r.read_middle:>11.3f} {r.raw:>11.3f}  {'yes' if r.read_ok else 'NO'}")
    print("(raw 20KB: insert + commit of a 20 KB blob, timed between that store's captures; a step is 5 commits:"
          " 2 writes, 2 checkpoints and, for ours, the saved step)")

    ours, lg, naive = results["ours"], results["langgraph"], results["naive"]
    rows = [
        ("ours step / langgraph step (median)", ours.median / lg.median, 0.5),
        ("ours step / langgraph step (last 10%)", ours.tail / lg.tail, 0.1),
        ("ours step / 5 raw 20 KB commits (median)", ours.median / (5 * ours.raw), 4.0),
        ("ours step / 5 raw 20 KB commits (last 10%)", ours.tail / (5 * ours.raw), 4.0),
        ("ours bytes per step / naive bytes per step", ours.per_step / naive.per_step, 1 / 40),
        ("ours read-back ms (slower of newest, middle)", max(ours.read_newest, ours.read_middle), 15.0),
    ]
    for label, value, target in rows:
        print(f"  {label:<46} {value:>9.4f}   target <= {target:<7.4g} {'PASS' if value <= target else 'MISS'}")
    print(f"  (naive / ours bytes per step: {naive.per_step / ours.per_step:,.1f}x;"
          f" langgraph / ours: {lg.per_step / ours.per_step:,.1f}x)")


async def main() -> None:
    parser = argparse.ArgumentParser(description="Capture benchmark: ours vs LangGraph vs naive vs raw.")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (under a minute)")
    args = parser.parse_args()
    rounds, reads, raw_samples = (1, 5, 100) if args.quick else (3, 21, 300)
    print(f"Kazma capture bench ({'quick' if args.quick else 'full'}): {rounds} round(s) per size,"
          f" reads median of {reads}, WAL + synchronous=NORMAL everywhere")
    for n in SIZES:
        await bench_size(n, rounds, reads, raw_samples)


if __name__ == "__main__":
    asyncio.run(main())
