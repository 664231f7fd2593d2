"""The data folder's lock file: servers share it, a restore or an import takes it alone.

An advisory ``flock`` on ``kazma.lock`` in the data folder. The kernel drops it when the
process ends, however it ends, so a crashed server never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

from kazma_core.errors import KazmaError

LOCK_FILE = "kazma.lock"


class FolderBusy(KazmaError):
    code = "data_folder_busy"
    status = 409


class DataFolderLock:
    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

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
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(path, fd)

    @classmethod
    def exclusive(cls, data_dir: Path, doing: str) -> DataFolderLock:
        """Sole hold of the folder, for `doing` (a restore, an import); refused while a server runs."""
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            who = f" (process {holder})" if holder.isdigit() else ""
            raise FolderBusy(
                f"Kazma is running on {data_dir}{who}. Stop it first (for example `systemctl stop kazma` or "
                f"`docker compose stop kazma`), then run the {doing} again."
            ) from None
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> DataFolderLock:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
