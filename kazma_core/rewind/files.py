"""A restore's files: what it would change in the person's folder, and putting it there.

A restore with files gives every file the chat's tools changed after the step its content at
the step, and removes a file they created after it (`plan`). A file whose content on disk is
not what the chat's tools (or its last restore) left there was changed since by something
else (a hand edit, another chat, another program): `changed_since`, which a restore refuses
unless forced. Only the folder given is read or written (the restoring user's own), each
file through `workspace_path`, so nothing outside it is reachable.

Files are written whole, through a temporary file renamed over the old one: a kill leaves
each file as it was or as restored, and putting the same contents again changes nothing,
which is how a restore or an undo cut by a crash is finished (`kazma_core/rewind/finish.py`).
"""

from __future__ import annotations

import asyncio
import difflib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kazma_core import crashpoints
from kazma_core.agent.tools import workspace_path
from kazma_core.stores import bodies
from kazma_core.stores.files_sql import NO_FILE, FileState, SqlFileStore, encode

RESTORED = "restored"
REMOVED = "removed"
DIFF_LINES = 40  # a preview's diff of one file shows at most this many lines
DIFF_CHARS = 4000


@dataclass(frozen=True)
class FileChange:
    """One file a restore would change: its content at the step (`to`, None: no file) and now."""

    path: str
    change: str  # restored | removed
    to_n: int
    to: bytes | None
    disk: bytes | None
    mark_n: int | None  # what the chat's tools last left there (None: they never wrote it)
    base_n: int  # what was there before the chat's tools first wrote it
    changed_since: bool

    def diff(self) -> str | None:
        """A short unified diff from the file now to the file restored (None when either is not text)."""
        try:
            now = (self.disk or b"").decode("utf-8").splitlines(keepends=True)
            then = (self.to or b"").decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            return None
        lines = list(difflib.unified_diff(now, then, f"{self.path} (now)", f"{self.path} (restored)", n=1))
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines[:DIFF_LINES])
        if len(lines) > DIFF_LINES:
            text += f"… {len(lines) - DIFF_LINES} more lines\n"
        return text[:DIFF_CHARS]


def _read(workspace: Path, path: str) -> bytes | None:
    try:
        target = workspace_path(workspace, path)
    except ValueError:
        return None
    return target.read_bytes() if target.is_file() else None


def _key(data: bytes | None) -> bytes | None:
    return None if data is None else bodies.digest(encode(data))


def _write(workspace: Path, path: str, data: bytes | None) -> None:
    target = workspace_path(workspace, path)
    if data is None:
        target.unlink(missing_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".kazma-restore-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    crashpoints.passed("first-file")


def write_files(workspace: Path, contents: Iterable[tuple[str, bytes | None]]) -> None:
    for path, data in contents:
        _write(workspace, path, data)


class WorkspaceFiles:
    """A chat's files as its steps know them, and a restore's or a fork's changes to a folder."""

    def __init__(self, store: SqlFileStore) -> None:
        self.store = store

    async def plan(self, chat_id: str, step_id: str, workspace: Path, *, own_marks: bool = True) -> list[FileChange]:
        """What putting the step's files in `workspace` would change. `own_marks`: the chat's own
        record of what its tools left there counts (a fork into the forker's folder has none)."""
        state = await self.store.state(chat_id, step_id)
        marks = state.marks if own_marks else {}
        paths = sorted(set(state.manifest) | set(marks))
        disks = await asyncio.to_thread(lambda: {p: _read(workspace, p) for p in paths})
        planned: list[tuple[str, int, int | None, int]] = []
        for path in paths:
            mark = marks.get(path)
            to_n = state.manifest.get(path, mark.base_n if mark else NO_FILE)
            if _key(disks[path]) != self._digest(state, to_n):
                planned.append((path, to_n, mark.now_n if mark else None, mark.base_n if mark else NO_FILE))
        contents = await self.store.contents(chat_id, {to_n for _, to_n, _, _ in planned})
        changes = []
        for path, to_n, mark_n, base_n in planned:
            expected = self._digest(state, mark_n or NO_FILE)
            changes.append(FileChange(
                path=path, change=REMOVED if to_n == NO_FILE else RESTORED, to_n=to_n, to=contents.get(to_n),
                disk=disks[path], mark_n=mark_n, base_n=base_n, changed_since=_key(disks[path]) != expected,
            ))
        return changes

    @staticmethod
    def _digest(state: FileState, n: int) -> bytes | None:
        return None if n == NO_FILE else state.digests.get(n)

    async def keep_for_undo(self, chat_id: str, restore_id: str, changes: list[FileChange]) -> dict[str, int]:
        """What the files hold now, kept for the restore's undo; each file's base (for a mark it has not yet)."""
        await self.store.keep_for_undo(chat_id, restore_id, [(c.path, c.disk, c.mark_n) for c in changes])
        rows = {path: before_n for path, before_n, _ in await self.store.undo_rows(chat_id, restore_id)}
        crashpoints.passed("restore-files-kept")
        return {c.path: c.base_n if c.mark_n is not None else rows[c.path] for c in changes}

    async def put(self, chat_id: str, workspace: Path, entries: list[list[object]]) -> None:
        """Put a restore's files in the folder, then mark them as the chat's ([path, to_n, base_n] each).
        Running it again changes nothing."""
        wanted = [(str(p), int(str(to_n)), int(str(base_n))) for p, to_n, base_n in entries]
        contents = await self.store.contents(chat_id, {to_n for _, to_n, _ in wanted})
        await asyncio.to_thread(write_files, workspace, [(p, contents.get(to_n)) for p, to_n, _ in wanted])
        await self.store.set_marks(chat_id, [(p, base_n, to_n) for p, to_n, base_n in wanted])
        crashpoints.passed("restore-files")

    async def put_back(self, chat_id: str, restore_id: str, workspace: Path) -> int:
        """An undo's files: each as it was before the restore, then the marks too. Running it again changes nothing."""
        rows = await self.store.undo_rows(chat_id, restore_id)
        if rows:
            contents = await self.store.contents(chat_id, {before_n for _, before_n, _ in rows})
            await asyncio.to_thread(write_files, workspace, [(p, contents.get(n)) for p, n, _ in rows])
        await self.store.undone(chat_id, restore_id)
        crashpoints.passed("undo-files")
        return len(rows)

    async def changed_since_restore(self, chat_id: str, restore_id: str, workspace: Path) -> list[str]:
        """The files a restore put back that something else changed since (an undo would overwrite them)."""
        rows = await self.store.undo_rows(chat_id, restore_id)
        if not rows:
            return []
        state = await self.store.state(chat_id, "")
        disks = await asyncio.to_thread(lambda: {p: _read(workspace, p) for p, _, _ in rows})
        changed = []
        for path, _, _ in rows:
            mark = state.marks.get(path)
            if _key(disks[path]) != self._digest(state, mark.now_n if mark else NO_FILE):
                changed.append(path)
        return changed
