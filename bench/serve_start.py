"""What `kazma serve` costs to start: the time and CPU to its sign-in line and to serving.

Each run starts `python -m kazma_server.cli serve` on a new data folder (SQLite, the offline
model) and notes, on one clock, when the process prints its sign-in line and when uvicorn says
"Application startup complete", with the CPU the process had used by then (/proc/PID/stat), then
stops it. `--against OLD_TREE` (a checkout of another commit, e.g. `git worktree add`) runs that
tree's code with this venv, alternating with this tree run for run, and prints the ratios: the
machine is shared, so only figures of the same run are compared.

    .venv/bin/python bench/serve_start.py [--runs 7] [--against /path/to/old/checkout]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def one_run(tree: Path) -> dict[str, float]:
    """One start of `kazma serve` from this source tree: seconds (wall, CPU) to the sign-in line and to serving."""
    noted: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "PYTHONPATH": str(tree), "LC_ALL": "C.UTF-8", "KAZMA_MODEL__PROVIDER": "offline"}
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "kazma_server.cli", "serve", "--data-dir", data, "--port", str(_free_port())],
            cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        done = threading.Event()

        def watch(stream: object, mark: str, name: str) -> None:
            for line in stream:  # type: ignore[attr-defined]
                if mark in line and name not in noted:
                    noted[name] = time.perf_counter() - started
                    noted[f"{name}_cpu"] = _cpu(proc.pid)
                    if name == "serving":
                        done.set()

        threading.Thread(target=watch, args=(proc.stdout, "Sign in", "sign_in"), daemon=True).start()
        threading.Thread(target=watch, args=(proc.stderr, "Application startup complete", "serving"), daemon=True).start()
        try:
            if not done.wait(120):
                raise RuntimeError(f"kazma serve from {tree} did not start")
        finally:
            proc.terminate()
            proc.wait(30)
    return noted


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--against", type=Path, help="an older checkout, run with this venv beside this tree")
    args = ap.parse_args()
    trees = {"this": HERE, **({"old": args.against.resolve()} if args.against else {})}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.runs):
        for name, tree in trees.items():  # alternating, so a busy moment of the machine falls on both
            runs[name].append(one_run(tree))
    medians = {name: {k: statistics.median(r[k] for r in found) for k in found[0]} for name, found in runs.items()}
    print(f"median of {args.runs} starts (seconds)   to sign-in: wall  cpu   to serving: wall  cpu")
    for name, m in medians.items():
        print(f"  {name:5} {trees[name]}")
        print(f"{m['sign_in']:36.2f} {m['sign_in_cpu']:5.2f} {m['serving']:18.2f} {m['serving_cpu']:5.2f}")
    if "old" in medians:
        new, old = medians["this"], medians["old"]
        print("this / old: " + ", ".join(f"{k} {new[k] / old[k]:.2f}" for k in ("sign_in", "sign_in_cpu", "serving", "serving_cpu")))


if __name__ == "__main__":
    main()
