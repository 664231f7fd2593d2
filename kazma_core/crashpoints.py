"""Named moments inside a write that spans two stores (or a store and the files), where the crash tests
SIGKILL the server: `kazma serve` started with `KAZMA_TEST_KILL_AT=<name>` in its environment kills
itself the first time it passes that moment, and the test then checks what the next start makes of it
(tests/crash.py is the harness). Between two commits of one request is where a crash does the most
harm, and a kill from outside lands there only by chance: these points let a test land there every time.

Outside the tests the variable is unset, and `passed` reads the environment and compares two strings."""

from __future__ import annotations

import os
import signal

# Each point, and the moment it names (in the order a restore, an undo and a turn pass them).
POINTS = {
    "checks": "a restore or an undo checked that no approval waits",
    "restore-messages": "a restore read its step's messages",
    "restore-files-kept": "a restore kept what the files hold now for its undo (before anything commits)",
    "restore-checkpoint": "a restore committed its step, its later rows taken back and its intent together",
    "first-file": "a restore or an undo put one file on disk, the others not yet",
    "restore-files": "a restore's files are on disk and marked",
    "restore-steps": "a restore kept its later steps aside",
    "undo-checkpoint": "an undo committed its checkpoint taken away, the rows put back and its state",
    "undo-steps": "an undo put its steps back",
    "undo-files": "an undo put its files back and their marks as before",
    "undo-done": "an undo marked itself done",
    "turn-drops-undo": "a turn starting dropped the chat's undo in kazma.db, its kept-aside steps not yet",
    "restore-drops-undo": "a newer restore dropped the last one's undo in kazma.db; nothing emptied its write-ahead logs yet",
}

ENV = "KAZMA_TEST_KILL_AT"


def passed(point: str) -> None:
    """The moment `point` (a key of POINTS) is reached: the process dies here if a test asked it to."""
    if point == os.environ.get(ENV):
        os.kill(os.getpid(), signal.SIGKILL)
