"""The crash tests' one harness: a real process doing a real restore, undo or turn on a data folder,
SIGKILLed right after the stage named, or from outside at a moment the test picks.

    process, url = await start_serve(data, env, log)   # `kazma serve`, driven over HTTP; the test SIGKILLs it
    died = run_killed("restore-checkpoint", data, chat_id, "restore", step_id)   # blocks until it died
    child = start_killable(data, chat_id, "send", "sleep 30")                     # the test kills it

`child(STAGE, DATA_DIR, USER, CHAT, ACTION, ARG)` is the child, a process of its own forked from the
worker's forkserver (tests/forked.py: the core imported once, not once a child; `kazma serve` is started
the same way); `python -m tests.crash STAGE DATA_DIR USER CHAT ACTION ARG` runs it alone. ACTION is
`restore` (ARG: the step), `restore-both` (the step, with its files), `undo`, or `send` (ARG: the
message). STAGE names a method; once it has returned, the child SIGKILLs itself (`none`: the test kills it).
The stage table lives here only, so every crash test (test_restore_crash, test_undo_crash, test_replicas) cuts at the same places.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import httpx

from tests import forked
from tests.forked import Forked
from tests.helpers import free_port

ROOT = Path(__file__).resolve().parents[1]
CHILD_SECONDS = 120.0
SERVE_START_SECONDS = 60.0


def stages() -> dict[str, tuple[Any, str]]:
    """Where a child can be cut: (owner, name of the method after which it dies)."""
    import kazma_ui.thread_rewind as rewind_module
    from kazma_core.rewind.files import WorkspaceFiles
    from kazma_core.rewind.rows import RewindRows
    from kazma_core.stores.conversation_sql import SqlConversationStore
    from kazma_core.stores.files_sql import SqlFileStore
    from kazma_core.stores.snapshots_sql import SqlSnapshotStore
    from kazma_ui.thread_rewind import RewindService

    return {
        # a restore with files: what the files hold kept for the undo (before anything commits), then
        # the files on disk and marked (after the checkpoint), then the steps
        "restore-files-kept": (WorkspaceFiles, "keep_for_undo"),
        "restore-files": (SqlFileStore, "set_marks"),
        # an undo with files: the steps back, then the files on disk and their marks as before
        "undo-files": (SqlFileStore, "undone"),
        "checks": (RewindService, "_refuse_pending"),
        "restore-messages": (RewindService, "_step_messages"),
        # the step written back, the later rows taken back and the intent commit together
        "restore-checkpoint": (rewind_module, "write_finished_turn"),
        "restore-steps": (SqlSnapshotStore, "keep_after"),
        # the restore's checkpoint taken away, the rows put back and the undo's state: one transaction
        "undo-checkpoint": (SqlConversationStore, "drop_after"),
        "undo-steps": (SqlSnapshotStore, "put_back"),
        "undo-done": (RewindRows, "undone"),
        # a turn starting drops the undo: kazma.db's part, then the kept-aside steps
        "turn-drops-undo": (SqlConversationStore, "drop_history"),
    }


def stages_before() -> dict[str, tuple[Any, str]]:
    """Where a child can be cut before a method runs: (owner, name of the method it dies on calling)."""
    from kazma_core.rewind.keep import UndoKeep

    # a newer restore ended the undo and answered; the write-ahead logs are emptied after the answer
    return {"undo-purge": (UndoKeep, "purge")}


def stages_sync() -> dict[str, tuple[Any, str]]:
    """Where a child can be cut after a plain function first returns: (owner, name of the function)."""
    import kazma_core.rewind.files as file_rewind

    # one file of a restore (or an undo) written, the others not yet
    return {"first-file": (file_rewind, "_write")}


def _log(data: Path) -> Path:
    return data.with_name(f"{data.name}-crash-child.log")


def _child(stage: str, data: Path, chat_id: str, action: str, arg: str, env: dict[str, str] | None = None) -> Forked:
    log = _log(data)
    return forked.start(child, (stage, str(data), "ann", chat_id, action, arg), dict(os.environ) if env is None else env,
                        log, log, cwd=ROOT)


def run_killed(stage: str, data: Path, chat_id: str, action: str, arg: str = "") -> None:
    """Run the child to its death after `stage`; the test fails unless it died of SIGKILL there."""
    process = _child(stage, data, chat_id, action, arg)
    returncode = process.wait_blocking(CHILD_SECONDS)
    assert returncode == -signal.SIGKILL, _log(data).read_text(errors="replace")[-3000:]


async def killed_after(stage: str, data: Path, chat_id: str, action: str, arg: str, env: dict[str, str],
                       timeout: float) -> None:
    """`run_killed` from an event loop, with the child's environment given (a replica's)."""
    process = _child(stage, data, chat_id, action, arg, env)
    await asyncio.wait_for(process.wait(), timeout)
    assert process.returncode == -signal.SIGKILL, _log(data).read_text(errors="replace")[-3000:]


def start_killable(data: Path, chat_id: str, action: str, arg: str = "") -> Forked:
    """The child, started with no stage: the test picks the moment and kills it."""
    return _child("none", data, chat_id, action, arg)


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


def _die_before(owner: Any, name: str) -> None:
    async def die(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(owner, name, die)


def _die_after_sync(owner: Any, name: str) -> None:
    original = getattr(owner, name)

    def then_die(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(owner, name, then_die)


def _die_after(owner: Any, name: str) -> None:
    original = getattr(owner, name)

    async def then_die(*args: Any, **kwargs: Any) -> Any:
        await original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)

    setattr(owner, name, then_die)


async def _act(data_dir: str, user_name: str, chat_id: str, action: str, arg: str) -> None:
    from kazma_core.core import Core
    from kazma_core.settings import load_settings
    from kazma_ui.thread_rewind import RewindService

    core = await Core.open(load_settings(data_dir=data_dir))
    if action == "send":
        await core.turns.send(chat_id, arg)
        return
    user = await core.store.users.user_by_name(user_name)
    if action in ("restore", "restore-both"):
        await RewindService(core).restore(user, "test", chat_id, arg, what="both" if action == "restore-both" else "conversation")
        await core.kept.purged()  # what the restore left to run after its answer
    elif action == "undo":
        await RewindService(core).undo(user, "test", chat_id)
    else:
        raise SystemExit(f"unknown action {action!r}")


def child(stage: str, data_dir: str, user_name: str, chat_id: str, action: str, arg: str) -> None:
    """The child: cut after (or before) the stage named, then do the action."""
    if stage in stages_before():
        _die_before(*stages_before()[stage])
    elif stage in stages_sync():
        _die_after_sync(*stages_sync()[stage])
    elif stage != "none":
        _die_after(*stages()[stage])
    asyncio.run(_act(data_dir, user_name, chat_id, action, arg))


if __name__ == "__main__":
    child(*sys.argv[1:7])
