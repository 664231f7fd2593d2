"""Backups: kazma.db and time_travel_audit.db, never the saved steps.

On SQLite each database is copied with SQLite's online backup API, which reads one
consistent snapshot while the server keeps writing. On PostgreSQL the schemas ``kazma``
and ``kazma_audit`` are copied, from one snapshot, into the same two SQLite files
(``stores/pg_copy.py``): one archive format for both engines, and a restore on PostgreSQL
loads them back in one transaction. Saved steps are never copied: a copy elsewhere would
bring back the steps of a chat deleted or forgotten since. A manifest records each file's sha256; a restore refuses any mismatch.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from kazma_core.errors import KazmaError
from kazma_core.replicas.leases import holder_is_dead
from kazma_core.settings import Settings
from kazma_core.stores import pg_copy
from kazma_core.stores.backends import archive_schemas, database_url, ensure_ready
from kazma_core.stores.engine import Conn
from kazma_core.stores.legacy import convert_legacy
from kazma_core.stores.sqlite import Connection, copy_database, migrate, open_sqlite

FORMAT_VERSION = 2  # 2: checkpoints live in kazma.db (no checkpoints.db)
BACKUP_KIND = "kazma-backup"
MANIFEST = "manifest.json"
# Copied in this order: checkpoints first and kazma.db last, so a chat deleted while the
# copies run is missing from kazma.db at worst with its checkpoints still present (which
# the clean-up sweeps), never the other way round.
DATABASES = ("time_travel_audit.db", "kazma.db")
NEVER_COPIED = "snapshots.db"
# A backup or bundle of format 1 also holds checkpoints.db: it is put back, then converted.
LEGACY_DATABASES = ("checkpoints.db",)


class ArchiveDamaged(KazmaError):
    """A backup or a migration bundle that cannot be trusted: nothing is taken from it."""

    code = "archive_damaged"
    status = 400


class ArchiveTooNew(KazmaError):
    """A backup or a bundle written by a newer Kazma, in a format this one does not know."""

    code = "archive_too_new"
    status = 400


def kazma_version() -> str:
    try:
        return metadata.version("kazma")
    except metadata.PackageNotFoundError:
        return "unknown"


def utc_stamp(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class FileEntry:
    sha256: str
    bytes: int

    @classmethod
    def of(cls, path: Path) -> FileEntry:
        return cls(sha256_of(path), path.stat().st_size)


@dataclass(frozen=True)
class Manifest:
    kind: str
    format_version: int
    kazma_version: str
    created_at: str
    files: dict[str, FileEntry]

    def dumps(self) -> bytes:
        body: dict[str, Any] = {
            "kind": self.kind,
            "format_version": self.format_version,
            "kazma_version": self.kazma_version,
            "created_at": self.created_at,
            "files": {name: {"sha256": e.sha256, "bytes": e.bytes} for name, e in self.files.items()},
        }
        return orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"

    @classmethod
    def parse(cls, raw: bytes, kind: str, archive: str, path: Path) -> Manifest:
        """Read a manifest; refuse one that is not of this kind, is damaged, or comes from a newer Kazma.

        ``archive`` ("backup" or "bundle") names the refusals' sentences (`errors.<archive>_...`)."""
        where = {"path": str(path)}
        try:
            body = orjson.loads(raw)
            version = body["format_version"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            raise ArchiveDamaged(message_id=f"{archive}_manifest_unreadable", **where) from None
        if body.get("kind") != kind:
            raise ArchiveDamaged(message_id=f"{archive}_wrong_kind", expected=kind, said=repr(body.get("kind")), **where)
        if not isinstance(version, int) or version < 1:
            raise ArchiveDamaged(message_id=f"{archive}_bad_version", version=repr(version), **where)
        if version > FORMAT_VERSION:
            raise ArchiveTooNew(
                message_id=f"{archive}_too_new", theirs=str(body.get("kazma_version", "unknown")), version=version,
                ours=kazma_version(), readable=FORMAT_VERSION, **where,
            )
        try:
            files = {name: FileEntry(str(e["sha256"]), int(e["bytes"])) for name, e in body["files"].items()}
            return cls(kind, version, str(body["kazma_version"]), str(body["created_at"]), files)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ArchiveDamaged(message_id=f"{archive}_manifest_incomplete", **where) from None


async def ensure_databases(settings: Settings) -> None:
    """Create (and migrate) any store's database that does not exist yet, as the server would."""
    await ensure_ready(settings)


def copy_databases(settings: Settings, into: Path) -> dict[str, FileEntry]:
    """The databases of a backup, as SQLite files in into, from whichever engine the settings name."""
    into.mkdir(parents=True, exist_ok=True)
    url = database_url(settings)
    if url:
        pg_copy.dump(url, archive_schemas(into))
    else:
        for name in DATABASES:
            copy_database(settings.data_dir / name, into / name)
    return {name: FileEntry.of(into / name) for name in DATABASES}


@dataclass(frozen=True)
class BackupReport:
    path: Path
    manifest: Manifest


def create_backup(settings: Settings, out_dir: Path, now: float | None = None) -> BackupReport:
    """Write a backup folder (the three databases and manifest.json) under out_dir.

    It is written as NAME.partial and renamed when whole, so a backup cut short never
    looks complete. The databases must exist (ensure_databases)."""
    at = time.time() if now is None else now
    out_dir.mkdir(parents=True, exist_ok=True)
    name = "kazma-backup-" + datetime.fromtimestamp(at, tz=UTC).strftime("%Y%m%dT%H%M%SZ")
    final = out_dir / name
    n = 1
    while final.exists() or final.with_name(final.name + ".partial").exists():
        n += 1
        final = out_dir / f"{name}-{n}"
    partial = final.with_name(final.name + ".partial")
    partial.mkdir(mode=0o700)
    try:
        entries = copy_databases(settings, partial)
        manifest = Manifest(BACKUP_KIND, FORMAT_VERSION, kazma_version(), utc_stamp(at), entries)
        (partial / MANIFEST).write_bytes(manifest.dumps())
        _fsync_folder(partial)
        partial.rename(final)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return BackupReport(final, manifest)


def verify_backup(path: Path) -> Manifest:
    """The backup's manifest, after every database in it matched its checksum."""
    if not (path / MANIFEST).is_file():
        raise ArchiveDamaged(message_id="backup_no_manifest", path=str(path), manifest=MANIFEST)
    manifest = Manifest.parse((path / MANIFEST).read_bytes(), BACKUP_KIND, "backup", path)
    for name in databases_in(manifest):
        entry = manifest.files.get(name)
        if entry is None or not (path / name).is_file():
            raise ArchiveDamaged(message_id="backup_member_missing", path=str(path), name=name)
        if FileEntry.of(path / name) != entry:
            raise ArchiveDamaged(message_id="backup_checksum", path=str(path), name=name)
    return manifest


def databases_in(manifest: Manifest) -> list[str]:
    """The databases an archive brings: today's, and the legacy ones an older format listed."""
    return [*DATABASES, *(name for name in LEGACY_DATABASES if name in manifest.files)]


def quick_check(path: Path, archive: str, where: Path) -> None:
    """Refuse a database of the archive (``archive`` "backup" or "bundle", at ``where``) that SQLite finds unsound."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            (result,) = conn.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as err:
        result = str(err)
    if result != "ok":
        raise ArchiveDamaged(message_id=f"{archive}_unsound_database", path=str(where), name=path.name, result=result)


def refuse_live_leases(kazma_db: Path, now: float) -> None:
    """A turn, restore or reset still holding a chat (from a process that is not proven dead) stops a restore."""
    if not kazma_db.exists():
        return
    try:
        with contextlib.closing(sqlite3.connect(f"file:{kazma_db}?mode=ro", uri=True, factory=Connection)) as conn:
            rows = conn.execute(LIVE_LEASES.format(table="leases"), (now,)).fetchall()
    except sqlite3.Error:
        return  # a kazma.db without leases (or unreadable) is about to be replaced anyway
    refuse_live(rows, now)


LIVE_LEASES = "SELECT chat_id, holder, purpose, expires_at FROM {table} WHERE expires_at >= $1"


def refuse_live(rows: list[Any], now: float) -> None:
    live = [r for r in rows if not holder_is_dead(r[1])]
    if live:
        chat, holder, purpose, expires = live[0]
        raise KazmaError(
            message_id="lease_live", purpose=purpose, chat=chat, holder=holder, seconds=max(1, int(expires - now))
        )


def install(staged: dict[str, Path], data_dir: Path) -> None:
    """Move staged database files into the data folder (its lock held alone by the caller).

    A database's old -wal and -shm go first: SQLite would replay a stale WAL onto the new file."""
    for name, path in staged.items():
        for extra in (data_dir / f"{name}-wal", data_dir / f"{name}-shm", data_dir / f"{name}-journal"):
            extra.unlink(missing_ok=True)
        os.replace(path, data_dir / name)
    _fsync_folder(data_dir)


@dataclass(frozen=True)
class RestoreReport:
    path: Path
    manifest: Manifest


def restore_backup(path: Path, settings: Settings, now: float | None = None) -> RestoreReport:
    """Put a backup's databases back. On SQLite the caller holds DataFolderLock.exclusive;
    on PostgreSQL the schemas are replaced in one transaction, refused while a lease is live.

    The saved steps are left as they are: the steps of chats the backup does not have are
    swept by the clean-up (kazma backup restore runs that sweep at once)."""
    manifest = verify_backup(path)
    at = time.time() if now is None else now
    data_dir = settings.data_dir
    url = database_url(settings)
    if not url:
        refuse_live_leases(data_dir / "kazma.db", at)
    staging = data_dir / ".restore-staging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(mode=0o700)
    try:
        staged = {}
        for name in databases_in(manifest):
            shutil.copyfile(path / name, staging / name)
            if FileEntry.of(staging / name) != manifest.files[name]:
                raise ArchiveDamaged(message_id="backup_copy_changed", name=name, path=str(path))
            quick_check(staging / name, "backup", path)
            staged[name] = staging / name
        if url:
            load_into_postgres(url, staging, lambda conn: refuse_live(conn.execute(
                LIVE_LEASES.format(table="kazma.leases"), (at,)).fetchall(), at))
        else:
            install(staged, data_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not url:
        convert_legacy(data_dir)
    return RestoreReport(path, manifest)


def at_current_schema(folder: Path) -> None:
    """An archive's SQLite files in today's layout and schema, as a server opening them would make them."""
    convert_legacy(folder)
    for schema in archive_schemas(folder):
        conn = open_sqlite(schema.path)
        try:
            migrate(conn, schema.migrations, schema.path.name)
            conn.execute("PRAGMA journal_mode=DELETE")
        finally:
            conn.close()


def load_into_postgres(url: str, folder: Path, check: Callable[[Conn], None]) -> None:
    """An archive's files (unpacked in folder) into the PostgreSQL schemas, in one transaction."""
    at_current_schema(folder)
    pg_copy.load(url, archive_schemas(folder), check=check)


def _fsync_folder(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
