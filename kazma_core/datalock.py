"""The data folder's lock files: one server per folder; a restore or an import alone.

Advisory ``flock`` locks, which the kernel drops when the process ends however it ends:
- ``kazma.lock``: held shared by a server and by the commands that may run beside it
  (maintain, backup create, migrate export); a restore or an import takes it alone.
- ``kazma.serve.lock``: held alone by the one server of the folder, with its process id
  written in it, so a second server, a restore or an import can name the process that
  really holds the folder. A server that stops cleanly empties the file; an id left in a
  file nobody holds is a crashed server's, and the next server takes the lock over and
  says so in its log.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path
from types import TracebackType

from kazma_core.errors import KazmaError

LOCK_FILE = "kazma.lock"
SERVE_LOCK_FILE = "kazma.serve.lock"

log = logging.getLogger(__name__)


class FolderBusy(KazmaError):
    code = "data_folder_busy"
    status = 409


class DataFolderLock:
    def __init__(self, path: Path, fd: int, *, clear: bool = False) -> None:
        self.path = path
        self._fd: int | None = fd
        self._clear = clear

    @classmethod
    def shared(cls, data_dir: Path) -> DataFolderLock:
        """A server's hold (several may share it); refused while a restore or an import runs."""
        path = data_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise FolderBusy(
                f"A restore or an import is writing {data_dir}. Wait until it has finished, then start again."
            ) from None
        return cls(path, fd)

    @classmethod
    def serving(cls, data_dir: Path) -> DataFolderLock:
        """The one server's hold of the folder: refused (naming the holder) while another server runs."""
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / SERVE_LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _pid_in(fd)
            os.close(fd)
            who = f" (process {holder})" if holder else ""
            raise FolderBusy(
                f"Another Kazma server is running on {data_dir}{who}. Stop it first, or give this one "
                "another data folder with --data-dir or KAZMA_DATA_DIR."
            ) from None
        left = _pid_in(fd)
        if left and left != os.getpid():
            state = "no longer running" if not _alive(left) else "not holding it"
            log.warning("took over the data folder lock of %s left by process %s (%s)", data_dir, left, state)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        os.fsync(fd)
        return cls(path, fd, clear=True)

    @classmethod
    def exclusive(cls, data_dir: Path, doing: str) -> DataFolderLock:
        """Sole hold of the folder, for `doing` (a restore, an import); refused while a server runs."""
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = serving_pid(data_dir)
            os.close(fd)
            who = f" (process {holder})" if holder else " (a kazma command such as maintain or backup create)"
            raise FolderBusy(
                f"Kazma is running on {data_dir}{who}. Stop it first (for example `systemctl stop kazma` or "
                f"`docker compose stop kazma`), then run the {doing} again."
            ) from None
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            if self._clear:
                os.ftruncate(self._fd, 0)  # a clean stop leaves no process id behind
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> DataFolderLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _pid_in(fd: int) -> int | None:
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return int(text) if text.isdigit() else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def serving_pid(data_dir: Path) -> int | None:
    """The process id of the server holding the folder now, or None when no server holds it."""
    path = data_dir / SERVE_LOCK_FILE
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _pid_in(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
