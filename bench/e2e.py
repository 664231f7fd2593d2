"""End-to-end bench: `kazma serve` driven over HTTP as a person uses it, beside the same server
on LangGraph's stock checkpointer (bench/stock_serve.py), with the same messages, in one run.

For each server, in a fresh data folder, default settings, the offline model answering at once
(model.piece_seconds 0: its words otherwise come 0.03 s apart):

1. one chat grown to a tenth, half and all of --messages (1,000 unless told: 100, 500 and
   1,000; user messages of about 580 characters, answers that quote them): bytes in the data
   folder and bytes the server wrote to disk (/proc/PID/io write_bytes) at each size; at the
   full length, the folder once the server has stopped, against the raw text of the conversation;
2. turn latency: a message to the long chat and one to a new chat, alternated;
3. reads at the full length, each the median of several: the Time Travel listing of the long chat,
   the newest step's newest page (`?limit=100`), the transcript's newest page (`?limit=100`);
   then restore (to the newest step) and fork (of it) over HTTP (a restore or fork refused, a
   step saved cut say, is counted and shown, not a crash); last the step and the transcript read
   whole; the server's memory (/proc/PID/status: VmRSS, and VmHWM, the peak) when the chat has
   grown, after the page reads, restores and forks, and after the whole reads;
4. 20 chats x 20 messages at once: messages/s, p50, p99;
5. `big 2000` then 8 messages, with tool results cut at 4 MB instead of 64 KB for this phase so
   the 2 MB result is stored whole: how much the stopped data folder grew; and another user's
   `calc 1+1` while that runs, against the same request alone.

`kazma-pg` is the same run on PostgreSQL (KAZMA_DATABASE__URL, a fresh database), `kazma-pg2`
with two `kazma serve` replicas on that database, each request sent to the next replica in
turn (no stickiness: one chat's messages alternate between them). On PostgreSQL the "data
folder" is the size of the three schemas' tables (indexes and TOAST included) plus the
folder, and "bytes written" is the PostgreSQL cluster's WAL (pg_stat_wal) plus what the Kazma
processes wrote. The server is the one KAZMA_TEST_DATABASE_URL names (a superuser's URL), or
a private one started from Debian's binaries as the tests do.

The machine is shared and noisy: read the ratios, measured minutes apart at most.

    .venv/bin/python bench/e2e.py [--quick] [--messages 1000] [--only kazma stock kazma-pg kazma-pg2]

How long it takes (2 cores, shared): with the default 1,000 messages about 1 minute for all
four on a quiet machine, up to 6 on a slower, busier one; with --messages 10000 the growth
dominates: kazma's part under a minute to 4 minutes, kazma-pg's about 1, the stock server's
well over an hour (its growth grows with the square of the length: every checkpoint is a
whole copy). The time each phase took is printed to stderr as it goes, each server's
figures as soon as its run ends, and the whole run's time at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from itertools import cycle
from pathlib import Path

import httpx
import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kazma_core.core import Core  # noqa: E402
from kazma_core.settings import Settings, load_settings  # noqa: E402
from tests.postgres import ENV_URL, fresh_database, private_server  # noqa: E402

KAZMA = str(Path(sys.executable).with_name("kazma"))
SERVERS = {"kazma": [KAZMA, "serve"], "stock": [sys.executable, str(ROOT / "bench" / "stock_serve.py")],
           "kazma-pg": [KAZMA, "serve"], "kazma-pg2": [KAZMA, "serve"]}
REPLICAS = {"kazma-pg": 1, "kazma-pg2": 2}  # the runs on PostgreSQL, and how many servers share it
SCHEMA_BYTES = """
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname IN ('kazma', 'kazma_steps', 'kazma_audit') AND c.relkind = 'r'
"""
PARAGRAPH = (  # about 570 characters: a message of some substance, as pasted notes and questions are
    "I keep notes on the garden: the tomatoes need water every other day, the beans climb the fence, "
    "and the soil by the shed stays wet after rain. Last year the squash took over the path and the "
    "lettuce bolted in June. This spring I moved the compost bin, added two raised beds by the south "
    "wall, and planted garlic in October as the neighbour suggested. The basil never did well. "
    "What should I plant next to the beans this year, and is it too late to start peppers from seed? "
    "I have about three hours a week for it. "
)
TARGETS = {
    "ratio": 1.3, "folder_x_raw": 4.0, "restore_ms": 20.0, "fork_ms": 20.0, "read_ms": 20.0, "rss_mb": 200.0,
    "throughput": 250.0, "p99_ms": 300.0, "cpu_ms": 5.0, "big_growth_mb": 5.0, "other_p99_ms": 100.0,
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and "workspace" not in p.parts)


def ms(seconds: float) -> float:
    return seconds * 1000


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in bytes: its resident memory now and at its peak."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) * 1024
    return found.get("VmRSS", 0), found.get("VmHWM", 0)


def wal_bytes(database_url: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT wal_bytes FROM pg_stat_wal").fetchone()
        return int(row[0]) if row else 0


@dataclass
class Server:
    """One `kazma serve` (or the stock server), or several replicas sharing one PostgreSQL database."""

    kind: str
    data: Path
    env: dict[str, str]
    database_url: str = ""
    processes: list[asyncio.subprocess.Process] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    wal_at_start: int = 0

    @property
    def url(self) -> str:
        return self.urls[0]

    def folders(self) -> list[Path]:
        return [self.data, *(self.data.with_name(f"data-{n}") for n in range(2, REPLICAS.get(self.kind, 1) + 1))]

    async def start(self) -> None:
        if self.database_url and not self.wal_at_start:
            self.wal_at_start = wal_bytes(self.database_url)
        self.processes, self.urls = [], []
        for folder in self.folders():
            port = free_port()
            log = (self.data.parent / f"{self.kind}-{folder.name}.log").open("ab")
            self.processes.append(await asyncio.create_subprocess_exec(
                *SERVERS[self.kind], "--data-dir", str(folder), "--port", str(port),
                stdout=log, stderr=log, env=self.env,
            ))
            self.urls.append(f"http://127.0.0.1:{port}")
        for url in self.urls:
            await self._healthy(url)

    async def _healthy(self, url: str) -> None:
        async with httpx.AsyncClient(base_url=url, trust_env=False) as http:
            for _ in range(1200):
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get("/healthz")).status_code == 200:
                        return
                await asyncio.sleep(0.05)
        raise RuntimeError(f"{self.kind} server did not start; see the logs in {self.data.parent}")

    async def stop(self) -> None:
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            await process.wait()

    def written(self) -> int:
        total = self.wal_written()
        for process in self.processes:
            for line in Path(f"/proc/{process.pid}/io").read_text().splitlines():
                if line.startswith("write_bytes:"):
                    total += int(line.split()[1])
        return total

    def run_again(self) -> int:
        """Transactions PostgreSQL refused for a concurrent one and the server ran again, so far (its log)."""
        logs = (self.data.parent / f"{self.kind}-{folder.name}.log" for folder in self.folders())
        return sum(log.read_bytes().count(b"transaction run again") for log in logs if log.exists())

    def cpu_seconds(self) -> float:
        """CPU time the server processes have used so far (user + system, all their threads)."""
        ticks = 0
        for process in self.processes:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rpartition(")")[2].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def memory(self) -> tuple[int, int]:
        """(VmRSS, VmHWM) of the largest replica (for one server, of it)."""
        return max(memory(process.pid) for process in self.processes)

    def wal_written(self) -> int:
        return wal_bytes(self.database_url) - self.wal_at_start if self.database_url else 0

    def stored(self) -> int:
        """The data folder(s), and on PostgreSQL the tables of Kazma's schemas."""
        total = sum(folder_bytes(folder) for folder in self.folders() if folder.exists())
        if self.database_url:
            with psycopg.connect(self.database_url) as conn:
                row = conn.execute(SCHEMA_BYTES).fetchone()
                total += int(row[0]) if row else 0
        return total


class RoundRobin(httpx.AsyncBaseTransport):
    """Each request to the next replica, as a load balancer without sticky sessions would."""

    def __init__(self, urls: list[str]) -> None:
        self._next: Iterator[httpx.URL] = cycle(httpx.URL(u) for u in urls)
        self._transport = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        target = next(self._next)
        request.url = request.url.copy_with(host=target.host, port=target.port)
        return await self._transport.handle_async_request(request)

    async def aclose(self) -> None:
        await self._transport.aclose()


@dataclass
class Result:
    sizes: dict[int, tuple[int, int]] = field(default_factory=dict)  # messages -> (folder bytes, bytes written)
    stopped_folder: int = 0
    raw_text: int = 0
    fresh_ms: float = 0.0
    long_ms: float = 0.0
    restore_ms: float = float("nan")
    fork_ms: float = float("nan")
    refused: dict[str, int] = field(default_factory=dict)  # "restore: snapshot_truncated" -> times
    grown_rss: tuple[int, int] = (0, 0)  # (VmRSS, VmHWM) once the chat has grown
    after_rss: tuple[int, int] = (0, 0)  # ... after the page reads, restores and forks at the full length
    whole_rss: tuple[int, int] = (0, 0)  # ... then after reading the step and the transcript whole
    reads: dict[str, float] = field(default_factory=dict)  # what was read -> p50 ms
    growth_s: float = 0.0
    throughput: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    cpu_ms_per_turn: float = 0.0  # the server's own CPU time over the 20 x 20 phase, per message sent
    run_again: int = 0  # transactions PostgreSQL refused (a concurrent one) and ran again in the 20 x 20 phase
    big_growth: int = 0
    alone_p99_ms: float = 0.0
    other_p50_ms: float = 0.0
    other_p99_ms: float = 0.0


async def users(settings: Settings, names: list[str]) -> dict[str, str]:
    core = await Core.open(settings)
    try:
        tokens = {}
        for name in names:
            user = await core.store.users.add_user(name)
            tokens[name] = await core.store.users.issue_token(user.id, "api")
        return tokens
    finally:
        await core.close()


@contextlib.asynccontextmanager
async def client(server: Server, token: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, headers={"Authorization": f"Bearer {token}"},
                                 transport=RoundRobin(server.urls), trust_env=False,
                                 timeout=httpx.Timeout(300.0)) as http:
        yield http


async def send(http: httpx.AsyncClient, thread: str, text: str) -> tuple[float, dict]:  # type: ignore[type-arg]
    start = time.perf_counter()
    r = await http.post(f"/api/chats/{thread}/messages", json={"text": text})
    took = time.perf_counter() - start
    r.raise_for_status()
    return took, r.json()


async def timed_get(http: httpx.AsyncClient, path: str, times: int) -> float:
    """The median time of reading `path` (ms), after one read that warms what a person's first
    read would find cold."""
    (await http.get(path)).raise_for_status()
    took = []
    for _ in range(times):
        start = time.perf_counter()
        (await http.get(path)).raise_for_status()
        took.append(time.perf_counter() - start)
    return ms(statistics.median(took))


async def attempt(http: httpx.AsyncClient, path: str, body: dict[str, str], out: Result, what: str) -> float | None:
    """The time of a restore or fork (s), or None when refused (counted in out.refused by its code)."""
    start = time.perf_counter()
    r = await http.post(path, json=body)
    took = time.perf_counter() - start
    if r.status_code in (409, 404, 413):
        key = f"{what}: {r.json().get('error', r.status_code)}"
        out.refused[key] = out.refused.get(key, 0) + 1
        return None
    r.raise_for_status()
    return took


def lengths(messages: int) -> tuple[int, ...]:
    """Where the long chat is measured on its way: a tenth, half and all of it, in whole turns."""
    return tuple(max(2, messages * k // 10 // 2 * 2) for k in (1, 5, 10))


async def run(kind: str, quick: bool, messages: int, base: Path, database_url: str = "") -> Result:
    data = base / kind / "data"
    database = {"database": {"url": database_url}} if database_url else {}
    tokens = await users(load_settings(data_dir=str(data), **database), ["ann", "bob", *[f"u{i}" for i in range(20)]])
    env = {k: v for k, v in os.environ.items() if not k.startswith("KAZMA_")}
    env.update(KAZMA_CONFIG=str(base / "no-user-file.toml"), NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    # The offline model answers at once, as it did before it streamed: at its default pace (0.03 s a
    # word) every turn would take about 3 s of pauses, and the bench would measure that pace, not Kazma.
    env["KAZMA_MODEL__PIECE_SECONDS"] = "0"
    if database_url:
        env["KAZMA_DATABASE__URL"] = database_url
    server = Server(kind, data, env, database_url)
    out = Result()
    await server.start()
    began = time.perf_counter()
    async with client(server, tokens["ann"]) as http:
        long_chat = (await http.post("/api/chats", json={})).json()["thread_id"]
        count, raw = 0, 0
        for target in lengths(messages):
            while count < target:
                text = f"{count // 2}: {PARAGRAPH}"
                _, answer = await send(http, long_chat, text)
                count += 2
                raw += len(text.encode()) + len(answer["reply"].encode())
            out.sizes[target] = (server.stored(), server.written())
            print(f"  {kind}: {target} messages ({time.perf_counter() - began:.0f} s)", file=sys.stderr)
        out.raw_text = raw
    out.growth_s = time.perf_counter() - began
    out.grown_rss = server.memory()
    await server.stop()
    out.stopped_folder = server.stored()
    await server.start()

    async with client(server, tokens["ann"]) as http:
        fresh, long = [], []
        for i in range(10 if quick else 30):
            new_chat = (await http.post("/api/chats", json={})).json()["thread_id"]
            fresh.append((await send(http, new_chat, f"fresh {i}: {PARAGRAPH}"))[0])
            long.append((await send(http, long_chat, f"again {i}: {PARAGRAPH}"))[0])
        out.fresh_ms, out.long_ms = ms(statistics.median(fresh)), ms(statistics.median(long))

        reads = 5 if quick else 15
        steps = f"/api/replay/snapshots/{long_chat}"
        newest = (await http.get(steps)).json()["snapshots"][-1]["snapshot_id"]
        for label, path in (
            ("Time Travel listing", steps),
            ("a step's view, newest page", f"{steps}/{newest}?limit=100"),
            ("transcript, newest page", f"/api/chats/{long_chat}/messages?limit=100"),
        ):
            out.reads[label] = await timed_get(http, path, reads)

        restores, forks = [], []
        for _ in range(5 if quick else 15):
            newest = (await http.get(steps)).json()["snapshots"][-1]["snapshot_id"]
            ref = {"thread_id": long_chat, "snapshot_id": newest}
            if (took := await attempt(http, "/api/replay/restore", ref, out, "restore")) is not None:
                restores.append(took)
            if (took := await attempt(http, "/api/replay/fork", ref, out, "fork")) is not None:
                forks.append(took)
        if restores:
            out.restore_ms = ms(statistics.median(restores))
        if forks:
            out.fork_ms = ms(statistics.median(forks))
        out.after_rss = server.memory()
        # Last, what a client asking for the whole of a long chat costs (and the memory it leaves).
        for label, path in (
            ("a step's view, whole", f"{steps}/{newest}"),
            ("transcript, whole", f"/api/chats/{long_chat}/messages"),
        ):
            out.reads[label] = await timed_get(http, path, reads)
        out.whole_rss = server.memory()
        print(f"  {kind}: reads, restores and forks done", file=sys.stderr)

    async def one_chat(name: str) -> list[float]:
        async with client(server, tokens[name]) as http:
            chat = (await http.post("/api/chats", json={})).json()["thread_id"]
            return [(await send(http, chat, f"{name} {i}: {PARAGRAPH}"))[0] for i in range(20)]

    start, cpu, again = time.perf_counter(), server.cpu_seconds(), server.run_again()
    took = [t for chat in await asyncio.gather(*(one_chat(f"u{i}") for i in range(20))) for t in chat]
    out.throughput = len(took) / (time.perf_counter() - start)
    out.cpu_ms_per_turn = ms(server.cpu_seconds() - cpu) / len(took)
    out.run_again = server.run_again() - again
    out.p50_ms, out.p99_ms = ms(statistics.median(took)), ms(pct(took, 0.99))

    await server.stop()
    before = server.stored()
    # A 2 MB tool result kept whole: the default cut (limits.max_tool_result_chars, 64 KB) would
    # leave nothing large to store, and this phase measures how a large state is kept.
    server.env = {**env, "KAZMA_LIMITS__MAX_TOOL_RESULT_CHARS": str(4 << 20)}
    await server.start()
    async with client(server, tokens["ann"]) as ann, client(server, tokens["bob"]) as bob:
        bob_chat = (await bob.post("/api/chats", json={})).json()["thread_id"]
        alone = [(await send(bob, bob_chat, "calc 1+1"))[0] for _ in range(20)]
        out.alone_p99_ms = ms(pct(alone, 0.99))
        big_chat = (await ann.post("/api/chats", json={})).json()["thread_id"]
        busy = True

        async def heavy() -> None:
            nonlocal busy
            await send(ann, big_chat, "big 2000")
            for i in range(8):
                await send(ann, big_chat, f"after the big one {i}")
            busy = False

        async def other() -> list[float]:
            seen = []
            while busy:
                seen.append((await send(bob, bob_chat, "calc 1+1"))[0])
            return seen

        _, seen = await asyncio.gather(heavy(), other())
        out.other_p50_ms, out.other_p99_ms = ms(statistics.median(seen)), ms(pct(seen, 0.99))
    await server.stop()
    out.big_growth = server.stored() - before
    return out


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def report(results: dict[str, Result], messages: int) -> None:
    kinds = list(results)
    n = f"{messages:,}"
    print("\nKazma end-to-end bench: kazma serve over HTTP, offline model, default settings")
    print(f"({os.cpu_count()} cores, shared with whatever else runs on the machine: the client, every server "
          "and PostgreSQL share them)")
    if any(k in REPLICAS for k in kinds):
        print("(kazma-pg, kazma-pg2: PostgreSQL with one and two replicas; their data folder is the schemas' "
              "tables plus the folders, bytes written the cluster's WAL plus the Kazma processes')")
    print(f"{'':44}" + "".join(f"{k:>16}" for k in kinds) + ("      ratio" if len(kinds) == 2 else ""))

    def row(label: str, values: list[float], fmt: str, ratio: bool = True) -> None:
        cells = "".join(f"{format(v, fmt):>16}" for v in values)
        extra = f"{values[0] / values[1]:>10.3f}x" if ratio and len(values) == 2 and values[1] else ""
        print(f"{label:44}{cells}{extra}")

    for size in lengths(messages):
        row(f"data folder at {size} messages (MB, live)", [results[k].sizes[size][0] / 1e6 for k in kinds], ".2f")
        row(f"bytes written by {size} messages (MB)", [results[k].sizes[size][1] / 1e6 for k in kinds], ".1f")
    row(f"data folder at {n}, server stopped (MB)", [results[k].stopped_folder / 1e6 for k in kinds], ".2f")
    row("  x the raw text of the conversation", [results[k].stopped_folder / results[k].raw_text for k in kinds], ".2f")
    row("turn p50, new chat (ms)", [results[k].fresh_ms for k in kinds], ".1f")
    row(f"turn p50, {n}-message chat (ms)", [results[k].long_ms for k in kinds], ".1f")
    row(f"  {n}-message / new chat", [results[k].long_ms / results[k].fresh_ms for k in kinds], ".2f")
    row(f"restore at {n} over HTTP, p50 (ms)", [results[k].restore_ms for k in kinds], ".1f")
    row(f"fork at {n} over HTTP, p50 (ms)", [results[k].fork_ms for k in kinds], ".1f")
    for label in results[kinds[0]].reads:
        row(f"{label} at {n}, p50 (ms)"[:44], [results[k].reads.get(label, float("nan")) for k in kinds], ".1f")
    row(f"server RSS at {n} grown (MB)", [results[k].grown_rss[0] / 1e6 for k in kinds], ".0f")
    row("  peak while growing, VmHWM (MB)", [results[k].grown_rss[1] / 1e6 for k in kinds], ".0f")
    row("  after page reads, restores, forks (MB)", [results[k].after_rss[0] / 1e6 for k in kinds], ".0f")
    row("  peak since the restart, VmHWM (MB)", [results[k].after_rss[1] / 1e6 for k in kinds], ".0f")
    row("  after whole reads too (MB)", [results[k].whole_rss[0] / 1e6 for k in kinds], ".0f")
    row("  peak with whole reads, VmHWM (MB)", [results[k].whole_rss[1] / 1e6 for k in kinds], ".0f")
    row(f"growing to {n} messages took (s)", [results[k].growth_s for k in kinds], ".0f")
    for k in kinds:
        for what, times in results[k].refused.items():
            print(f"  {k}: {what} refused {times} times")
    row("20 chats x 20 messages: messages/s", [results[k].throughput for k in kinds], ".0f")
    row("  p50 (ms)", [results[k].p50_ms for k in kinds], ".0f")
    row("  p99 (ms)", [results[k].p99_ms for k in kinds], ".0f")
    row("  server CPU per message (ms)", [results[k].cpu_ms_per_turn for k in kinds], ".1f")
    row("  transactions run again (conflicts)", [results[k].run_again for k in kinds], "d", ratio=False)
    row("big 2000 + 8 messages: folder grew (MB)", [results[k].big_growth / 1e6 for k in kinds], ".1f")
    row("another user's calc 1+1 alone, p99 (ms)", [results[k].alone_p99_ms for k in kinds], ".0f")
    row("  ... while big 2000 runs, p50 (ms)", [results[k].other_p50_ms for k in kinds], ".0f")
    row("  ... while big 2000 runs, p99 (ms)", [results[k].other_p99_ms for k in kinds], ".0f")
    if "kazma" in results:
        r, t = results["kazma"], TARGETS
        checks = [
            (f"turn at {n} <= 1.3x a new chat", r.long_ms / r.fresh_ms <= t["ratio"]),
            # The issue's size target is for 10,000 messages: below that the files' fixed pages weigh more.
            (f"folder at {n} <= 4x the raw text", r.stopped_folder / r.raw_text <= t["folder_x_raw"] if messages >= 10_000 else None),
            ("restore <= 20 ms over HTTP", r.restore_ms <= t["restore_ms"]),
            ("fork <= 20 ms over HTTP", r.fork_ms <= t["fork_ms"]),
            ("Time Travel listing <= 20 ms", r.reads["Time Travel listing"] <= t["read_ms"]),
            ("a step's view (newest page) <= 20 ms", r.reads["a step's view, newest page"] <= t["read_ms"]),
            ("server RSS <= 200 MB (peak, with paged reads)", max(r.grown_rss[1], r.after_rss[1]) <= t["rss_mb"] * 1e6),
            (">= 250 messages/s, p99 <= 300 ms", r.throughput >= t["throughput"] and r.p99_ms <= t["p99_ms"]),
            ("server CPU <= 5 ms per message (20 x 20)", r.cpu_ms_per_turn <= t["cpu_ms"]),
            ("big 2000 + 8 grows the folder <= 5 MB", r.big_growth <= t["big_growth_mb"] * 1e6),
            ("other user's p99 <= 100 ms during big 2000", r.other_p99_ms <= t["other_p99_ms"]),
        ]
        print("\nTargets (kazma):")
        for label, ok in checks:
            print(f"  {'----' if ok is None else 'PASS' if ok else 'MISS'}  {label}{' (judged at 10,000 messages)' if ok is None else ''}")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--messages", type=int, default=1000, help="length of the long chat (default: 1000)")
    parser.add_argument("--only", nargs="+", choices=list(SERVERS), help="these servers (default: all four)")
    args = parser.parse_args()
    if args.messages < 20:
        parser.error("--messages: at least 20")
    kinds = args.only or list(SERVERS)
    began = time.perf_counter()
    base = Path(tempfile.mkdtemp(prefix="kazma-e2e-"))
    try:
        with contextlib.ExitStack() as stack:
            admin = ""
            if any(kind in REPLICAS for kind in kinds):
                admin = os.environ.get(ENV_URL) or stack.enter_context(private_server()).url
            results = {}
            for kind in kinds:
                url = stack.enter_context(fresh_database(admin)) if kind in REPLICAS else ""
                results[kind] = await run(kind, args.quick, args.messages, base, url)
                if kind != kinds[-1]:  # a long run of the next server does not hold these back
                    report({kind: results[kind]}, args.messages)
                    print(f"({kind} done after {(time.perf_counter() - began) / 60:.1f} minutes)", flush=True)
            report(results, args.messages)
            print(f"\nThe run took {(time.perf_counter() - began) / 60:.1f} minutes.")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
