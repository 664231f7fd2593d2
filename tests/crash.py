"""The crash tests' one harness: `kazma serve` on a data folder, driven over HTTP from outside and
SIGKILLed, either by itself at one of the product's named crash points (kazma_core/crashpoints.py) or
by the test at a moment it picks.

    process, url = await start_serve(data, env, log)                  # the test drives it and kills it
    await run_killed("restore-checkpoint", data, chat_id, "restore", step_id)   # returns once it died there
    server = await start_killable(data, chat_id, "send", "sleep 30")   # the request under way; the test kills it

ACTION is `restore` (ARG: the step), `restore-both` (the step, with its files), `undo`, or `send` (ARG:
the message), each the request a person's client sends, as the chat's owner "ann" (a token made for her
with `kazma users token` first). Every process is a fork of the worker's forkserver (tests/forked.py:
the imports paid once, not once a start). The points are named in the product's code, not patched in:
every crash test (test_restore_crash, test_undo_crash, test_files_crash, test_replicas) cuts at the
same places, and a point that moves moves with the code.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

import httpx

from kazma_core.crashpoints import ENV as KILL_AT
from kazma_core.crashpoints import POINTS
from tests import forked
from tests.forked import Forked
from tests.helpers import free_port

CHILD_SECONDS = 120.0
SERVE_START_SECONDS = 60.0


def _log(data: Path) -> Path:
    return data.with_name(f"{data.name}-crash-child.log")


async def start_serve(data: Path, env: dict[str, str], log: Path) -> tuple[Forked, str]:
    """`kazma serve` on `data` in a process of its own (output appended to `log`), once it answers /healthz:
    the process, to SIGKILL, and its address, to drive over HTTP."""
    port = free_port()
    process = await forked.start_kazma(["serve", "--data-dir", str(data), "--port", str(port)], env, log, log)
    url = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(base_url=url, trust_env=False) as http:
        deadline = asyncio.get_running_loop().time() + SERVE_START_SECONDS
        while True:
            if process.returncode is not None:
                raise AssertionError(f"kazma serve exited ({process.returncode}):\n{log.read_text()[-3000:]}")
            with contextlib.suppress(httpx.TransportError):
                if (await http.get("/healthz")).status_code == 200:
                    return process, url
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"kazma serve did not answer:\n{log.read_text()[-3000:]}")
            await asyncio.sleep(0.05)


async def _token(data: Path, env: dict[str, str]) -> str:
    """A new API token of ann's, as an operator makes one: `kazma users token ann`."""
    out = data.with_name(f"{data.name}-token.txt")
    out.unlink(missing_ok=True)
    process = await forked.start_kazma(["users", "token", "ann", "--data-dir", str(data)], env, out, _log(data))
    assert await asyncio.wait_for(process.wait(), CHILD_SECONDS) == 0, _log(data).read_text(errors="replace")[-3000:]
    return out.read_text().split()[-1]


def _request(http: httpx.AsyncClient, chat_id: str, action: str, arg: str) -> Any:
    if action in ("restore", "restore-both"):
        return http.post("/api/replay/restore", json={
            "thread_id": chat_id, "snapshot_id": arg, "what": "both" if action == "restore-both" else "conversation",
        })
    if action == "undo":
        return http.post("/api/replay/undo", json={"thread_id": chat_id})
    if action == "send":
        return http.post(f"/api/chats/{chat_id}/messages", json={"text": arg})
    raise AssertionError(f"unknown action {action!r}")


class Serving:
    """`kazma serve` with one request under way (its task), read as the process: kill, wait, returncode."""

    def __init__(self, process: Forked, http: httpx.AsyncClient, request: asyncio.Task[Any]) -> None:
        self.process, self.http, self.request = process, http, request

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def kill(self) -> None:
        self.process.kill()

    async def wait(self) -> int:
        code = await self.process.wait()
        # The request ends with the server: its connection dropped (or its answer, had it come first).
        await asyncio.gather(self.request, return_exceptions=True)
        await self.http.aclose()
        return code


async def _serving(point: str, data: Path, chat_id: str, action: str, arg: str, env: dict[str, str] | None) -> Serving:
    env = {**(dict(os.environ) if env is None else env), KILL_AT: point}
    token = await _token(data, {k: v for k, v in env.items() if k != KILL_AT})
    process, url = await start_serve(data, env, _log(data))
    http = httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}, trust_env=False, timeout=CHILD_SECONDS)
    return Serving(process, http, asyncio.ensure_future(_request(http, chat_id, action, arg)))


async def run_killed(point: str, data: Path, chat_id: str, action: str, arg: str = "", env: dict[str, str] | None = None,
                     timeout: float = CHILD_SECONDS) -> None:
    """`kazma serve` on `data`, told to die at `point`, sent the action; returns once it died there (the
    test fails unless it died of SIGKILL in time). `env`: the server's environment (a replica's)."""
    assert point in POINTS, f"{point!r} is no crash point of kazma_core/crashpoints.py"
    serving = await _serving(point, data, chat_id, action, arg, env)
    try:
        returncode = await asyncio.wait_for(serving.wait(), timeout)
    finally:
        if serving.returncode is None:
            serving.kill()
            await serving.wait()
    assert returncode == -signal.SIGKILL, _log(data).read_text(errors="replace")[-3000:]


async def start_killable(data: Path, chat_id: str, action: str, arg: str = "") -> Serving:
    """`kazma serve` on `data` with the action's request under way and no crash point: the test picks
    the moment and kills it."""
    return await _serving("", data, chat_id, action, arg, None)
