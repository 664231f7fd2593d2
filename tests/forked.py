"""Processes of our own code, started without paying for its imports each time: `kazma serve` (or any
`kazma` command), each in a process of its own that a test can SIGKILL.

A start of `kazma serve` spends about 3 s of CPU on imports before it does anything (FastAPI,
LangChain, LangGraph, psycopg, and about 0.9 s of it our own modules, their pydantic models built),
and the kill and crash tests start it about eighty times. Here each pytest worker keeps one
forkserver (multiprocessing's) that imported all of it once, on a single thread; every process is a
fork of it, which runs `kazma_server.cli.main` with the argv, the environment, the folder and the
output files it is given, as the `kazma` script would. Nothing of ours is replaced: what a process
must have of its own is drawn after the fork (its replica identity, kazma_core.replicas.identity),
or read when used (the environment: settings, the crash point).

    process = await start_kazma(["serve", "--data-dir", str(data), "--port", str(port)], env, out, err)
    process.send_signal(signal.SIGKILL); await process.wait()     # as asyncio's Process
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import multiprocessing
import os
import sys
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

# What a start spends its imports on: other people's packages, then ours (the command line and the app).
PRELOAD = """
    fastapi fastapi.routing fastapi.openapi.models fastapi.openapi.utils fastapi.security fastapi.responses
    fastapi.staticfiles fastapi.templating starlette.middleware.base jinja2 jinja2.lexer
    langsmith langsmith.client langsmith.run_trees langsmith.schemas
    langchain_core.language_models langchain_core.messages langchain_core.tools langchain_core.runnables
    langchain_core.tracers.event_stream langchain_core.callbacks langchain_core.outputs langchain_core.prompts
    langgraph.graph langgraph.types langgraph.checkpoint.base langgraph.checkpoint.serde.jsonplus langgraph.prebuilt
    langgraph.pregel langgraph_sdk psycopg psycopg.rows psycopg_pool pydantic pydantic_settings
    apscheduler.schedulers.asyncio apscheduler.triggers.cron rich.console markdown_it prometheus_client httpx
    uvicorn uvicorn.main uvicorn.config uvicorn.server uvicorn.lifespan.on uvicorn.protocols.http.httptools_impl
    uvicorn.protocols.http.h11_impl uvicorn.loops.uvloop orjson tenacity aiosqlite sqlite3
    kazma_server.cli kazma_server.app
""".split()

_context: Any = None


def _forkserver() -> Any:
    global _context  # noqa: PLW0603  (one forkserver per worker, made at its first use)
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload([name for name in PRELOAD if importlib.util.find_spec(name.split(".")[0])])
    return _context


class Forked:
    """A forked process, read as asyncio's `Process`: pid, returncode (None while it runs, -9 once
    SIGKILLed), send_signal, kill, wait."""

    def __init__(self, process: BaseProcess) -> None:
        self.process = process

    @property
    def pid(self) -> int:
        assert self.process.pid is not None
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.exitcode

    def send_signal(self, signum: int) -> None:
        if self.process.exitcode is None:
            os.kill(self.pid, signum)

    def kill(self) -> None:
        self.process.kill()

    async def wait(self) -> int:
        while self.process.exitcode is None:
            await asyncio.sleep(0.02)
        self.process.join()
        return self.process.exitcode

    def wait_blocking(self, timeout: float) -> int | None:
        self.process.join(timeout)
        return self.process.exitcode


def start(target: Callable[..., Any], args: tuple[Any, ...], env: dict[str, str], stdout: Path, stderr: Path,
          cwd: Path | None = None) -> Forked:
    """`target(*args)` in a fork of the worker's forkserver, with this environment and folder, its
    output appended to these files (written through: a SIGKILL loses none of it)."""
    process = _forkserver().Process(target=_run, args=(target, args, env, str(stdout), str(stderr), str(cwd or Path.cwd())),
                                    daemon=False)
    process.start()
    return Forked(process)


async def start_kazma(argv: list[str], env: dict[str, str], stdout: Path, stderr: Path) -> Forked:
    """The `kazma` command with these arguments (`serve ...`), as asyncio.create_subprocess_exec would run it."""
    return start(_kazma, (argv,), env, stdout, stderr)


def _kazma(argv: list[str]) -> None:
    from kazma_server.cli import main

    sys.argv = ["kazma", *argv]
    sys.exit(main(argv))


def _run(target: Callable[..., Any], args: tuple[Any, ...], env: dict[str, str], stdout: str, stderr: str, cwd: str) -> None:
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    for fd, path in ((1, stdout), (2, stderr)):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(out, fd)
        os.close(out)
    sys.stdout = io.TextIOWrapper(open(1, "wb", buffering=0, closefd=False), encoding="utf-8", write_through=True)  # noqa: SIM115
    sys.stderr = io.TextIOWrapper(open(2, "wb", buffering=0, closefd=False), encoding="utf-8", write_through=True)  # noqa: SIM115
    target(*args)
