"""The data folder's lock files: one server per folder; a restore or an import alone.

Advisory ``flock`` locks, which the kernel drops when the process ends however it ends:
- ``kazma.lock``: held shared by a server and by the commands that may run beside it
  (maintain, backup create, migrate export); a restore or an import takes it alone.
- ``kazma.serve.lock``: held alone by the one server of the folder, with its process id
  written in it, so a second server, a restore or an import can name the process that
  really holds the folder. A server that stops cleanly empties the file; an id left in a
  file nobody holds is a crashed server's, and the next server takes the lock over and
  says so in its log.

A command that fails before it has done its work takes back what it made in the folder
(`taken_back_on_failure`): the folder itself, its workspace, a lock file, a database file
it created; never anything that was there before it started.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
from collections.abc import Iterator
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
        fd, held = _locked(path, fcntl.LOCK_SH)
        if not held:
            os.close(fd)
            raise FolderBusy(message_id="folder_being_written", data_dir=str(data_dir)) from None
        return cls(path, fd)

    @classmethod
    def serving(cls, data_dir: Path) -> DataFolderLock:
        """The one server's hold of the folder: refused (naming the holder) while another server runs."""
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / SERVE_LOCK_FILE
        fd, held = _locked(path, fcntl.LOCK_EX)
        if not held:
            holder = _pid_in(fd)
            os.close(fd)
            if holder:
                raise FolderBusy(message_id="server_running_pid", data_dir=str(data_dir), pid=holder) from None
            raise FolderBusy(message_id="server_running", data_dir=str(data_dir)) from None
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
        fd, held = _locked(path, fcntl.LOCK_EX)
        if not held:
            holder = serving_pid(data_dir)
            os.close(fd)
            if holder:
                raise FolderBusy(message_id=f"folder_in_use_{doing}_pid", data_dir=str(data_dir), pid=holder) from None
            raise FolderBusy(message_id=f"folder_in_use_{doing}", data_dir=str(data_dir)) from None
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


def _locked(path: Path, how: int) -> tuple[int, bool]:
    """The lock file opened and locked (`how`, without waiting): (fd, True), or (fd, False) while
    another process holds it. A file a failed start removed between its opening here and its
    locking is opened again, so two holders can never lock two files of one name."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
        except BlockingIOError:
            return fd, False
        with contextlib.suppress(FileNotFoundError):  # removed meanwhile: the next round makes it again
            if os.path.samestat(os.stat(path), os.fstat(fd)):
                return fd, True
        os.close(fd)


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


# What a SQLite database keeps beside its file: left alone when the file was there before.
_BESIDE = ("-wal", "-shm", "-journal")


class Made:
    """What one command is about to make in the data folder, noted before it makes anything."""

    def __init__(self, data_dir: Path, *also: Path) -> None:
        self.data_dir = data_dir
        self.kept = False  # set once the command has done its work: from then on, what it made stays
        self._first_new = _first_missing(data_dir)  # the folder, or the first of its parents it creates
        self._before = set(os.listdir(data_dir)) if data_dir.is_dir() else set()
        self._also = [p for p in also if not p.exists() and not p.is_relative_to(data_dir)]

    def take_back(self) -> None:
        """Remove what the command made, unless another process holds the folder (then what is new
        in it may be that process's). Never anything that was there before."""
        if self.data_dir.is_dir() and self._new():
            with contextlib.ExitStack() as alone:
                for name in (LOCK_FILE, SERVE_LOCK_FILE):
                    fd, held = _locked(self.data_dir / name, fcntl.LOCK_EX)
                    alone.callback(os.close, fd)
                    if not held:
                        log.warning("left what this command made in %s: another process holds the folder", self.data_dir)
                        return
                for name in self._new():  # the lock files too, when this command made them
                    _remove(self.data_dir / name)
        for path in self._also:
            _remove(path)
        if self._first_new is not None:
            folder = self.data_dir
            while folder.is_relative_to(self._first_new):
                with contextlib.suppress(OSError):  # not empty: something else was put there meanwhile
                    folder.rmdir()
                folder = folder.parent

    def _new(self) -> list[str]:
        return [
            name for name in sorted(set(os.listdir(self.data_dir)) - self._before)
            if not name.endswith(_BESIDE) or _base(name) not in self._before
        ]


@contextlib.contextmanager
def taken_back_on_failure(data_dir: Path, *also: Path) -> Iterator[Made]:
    """Run a command's start; if it fails before `kept` is set, what it made is taken back, so a
    failed start leaves the folder as it found it (no lock file, no empty workspace, no folder)."""
    made = Made(data_dir, *also)
    try:
        yield made
    except BaseException:
        if not made.kept:
            made.take_back()
        raise


def _first_missing(path: Path) -> Path | None:
    missing = None
    while not path.exists():
        missing, path = path, path.parent
    return missing


def _base(name: str) -> str:
    return next((name.removesuffix(end) for end in _BESIDE if name.endswith(end)), name)


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    except OSError as err:
        log.warning("could not remove %s after a failed start: %s", path, err.strerror)
