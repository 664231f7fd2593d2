"""Migration bundles: one archive that moves a Kazma to another machine, or another engine.

A gzip'd tar holding manifest.json (kind, format version, Kazma version, created time,
each file's sha256), the databases of a backup and settings.json (the settings
overrides). The databases are SQLite files whichever engine wrote them, so a bundle
exported from SQLite imports into PostgreSQL and back: export reads the engine the
settings name, import writes into the engine the settings name. Saved steps never
travel: a chat deleted or forgotten since its steps were saved is not brought back. An
import goes into an empty data folder (SQLite) or an empty database (PostgreSQL) only,
and takes nothing from a bundle that is damaged or newer than this Kazma reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import sqlite3
import tarfile
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from kazma_core.backup import (
    DATABASES,
    FORMAT_VERSION,
    MANIFEST,
    ArchiveDamaged,
    FileEntry,
    Manifest,
    copy_databases,
    databases_in,
    install,
    kazma_version,
    load_into_postgres,
    quick_check,
    utc_stamp,
)
from kazma_core.errors import KazmaError, SettingsError
from kazma_core.settings import Settings, validate_override
from kazma_core.stores import pg_copy
from kazma_core.stores.backends import APP_SCHEMA, AUDIT_SCHEMA, STEPS_SCHEMA, database_url
from kazma_core.stores.engine import Conn
from kazma_core.stores.legacy import convert_legacy
from kazma_core.stores.postgres import SETTING

BUNDLE_KIND = "kazma-migration"
SETTINGS_FILE = "settings.json"
MEMBERS = (*DATABASES, SETTINGS_FILE)
# Any of these in a folder means it already holds a Kazma.
DATA_FILES = ("kazma.db", "checkpoints.db", "snapshots.db", "time_travel_audit.db")
READ_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error)


class FolderNotEmpty(KazmaError):
    code = "data_folder_not_empty"
    status = 409


class DatabaseNotEmpty(KazmaError):
    code = "database_not_empty"
    status = 409


@dataclass(frozen=True)
class ExportReport:
    path: Path
    manifest: Manifest
    overrides: dict[str, Any]


@dataclass(frozen=True)
class ImportReport:
    manifest: Manifest
    chats: int
    checkpoints: int
    audit_rows: int
    overrides: dict[str, Any]
    dropped: dict[str, SettingsError] = field(default_factory=dict)  # setting -> why it was left out


def read_overrides_flat(kazma_db: Path) -> dict[str, Any]:
    with contextlib.closing(sqlite3.connect(f"file:{kazma_db}?mode=ro", uri=True)) as conn:
        return {key: orjson.loads(value) for key, value in conn.execute("SELECT key, value FROM settings_overrides ORDER BY key")}


def export_bundle(settings: Settings, file: Path, now: float | None = None) -> ExportReport:
    """Write the bundle to file (through FILE.partial, so a cut-short export never looks whole)."""
    at = time.time() if now is None else now
    file.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=file.parent, prefix=".kazma-export-"))
    partial = file.with_name(file.name + ".partial")
    try:
        entries = copy_databases(settings, staging)
        overrides = read_overrides_flat(staging / "kazma.db")
        (staging / SETTINGS_FILE).write_bytes(orjson.dumps(overrides, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        entries[SETTINGS_FILE] = FileEntry.of(staging / SETTINGS_FILE)
        manifest = Manifest(BUNDLE_KIND, FORMAT_VERSION, kazma_version(), utc_stamp(at), entries)
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds token hashes and keys
        with os.fdopen(fd, "wb") as raw:
            with tarfile.open(fileobj=raw, mode="w:gz") as tar:
                _add(tar, MANIFEST, io.BytesIO(manifest.dumps()), len(manifest.dumps()), at)
                for name in MEMBERS:
                    with (staging / name).open("rb") as handle:
                        _add(tar, name, handle, entries[name].bytes, at)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(partial, file)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ExportReport(file, manifest, overrides)


def _add(tar: tarfile.TarFile, name: str, data: IO[bytes], size: int, at: float) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = size, int(at), 0o600
    tar.addfile(info, data)


def refuse_non_empty(data_dir: Path) -> None:
    for name in DATA_FILES:
        if any((data_dir / f"{name}{extra}").exists() for extra in ("", "-wal")):
            raise FolderNotEmpty(message_id="import_folder_not_empty", data_dir=str(data_dir), name=name)


def refuse_non_empty_database(counts: dict[str, int]) -> None:
    filled = sorted(table for table, rows in counts.items() if rows)
    if filled:
        raise DatabaseNotEmpty(
            message_id="import_database_not_empty", setting=SETTING, rows=counts[filled[0]], table=filled[0],
            app_schema=APP_SCHEMA, steps_schema=STEPS_SCHEMA, audit_schema=AUDIT_SCHEMA,
        )


def _still_empty(conn: Conn) -> None:
    """Inside the load's transaction: nothing was written since the first check (a server started meanwhile)."""
    counts = {}
    for schema in (APP_SCHEMA, AUDIT_SCHEMA):
        for (table,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename <> $2",
                                     (schema, pg_copy.VERSION_TABLE)).fetchall():
            counts[f"{schema}.{table}"] = int(conn.execute(f'SELECT count(*) FROM {schema}."{table}"').fetchone()[0])
    refuse_non_empty_database(counts)


def import_bundle(file: Path, settings: Settings) -> ImportReport:
    """Load a bundle into an empty data folder (the caller holds DataFolderLock.exclusive), or into
    an empty PostgreSQL database when the settings name one."""
    data_dir = settings.data_dir
    url = database_url(settings)
    if url:
        refuse_non_empty_database(pg_copy.row_counts(url, (APP_SCHEMA, STEPS_SCHEMA, AUDIT_SCHEMA)))
    else:
        refuse_non_empty(data_dir)
    if not file.is_file():
        raise KazmaError(message_id="bundle_file_missing", file=str(file))
    staging = Path(tempfile.mkdtemp(dir=data_dir, prefix=".import-"))
    try:
        try:
            manifest = _unpack(file, staging)
        except READ_ERRORS as err:
            raise ArchiveDamaged(message_id="bundle_unreadable", path=str(file), problem=str(err)) from None
        for name in databases_in(manifest):
            quick_check(staging / name, "bundle", file)
        overrides, dropped = _valid_overrides(staging / SETTINGS_FILE, file)
        _write_overrides(staging / "kazma.db", overrides, time.time())
        if url:
            load_into_postgres(url, staging, _still_empty)
            counts = _counts(staging)
        else:
            install({name: staging / name for name in databases_in(manifest)}, data_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if not url:
        convert_legacy(data_dir)
        counts = _counts(data_dir)
    return ImportReport(manifest, *counts, overrides=overrides, dropped=dropped)


def _unpack(file: Path, staging: Path) -> Manifest:
    """Check the manifest first (a newer format is refused before anything else), then each member's sha256."""
    with tarfile.open(file, "r:gz") as tar:
        members = {m.name: m for m in tar.getmembers()}
        if MANIFEST not in members or not members[MANIFEST].isfile():
            raise ArchiveDamaged(message_id="bundle_no_manifest", path=str(file), manifest=MANIFEST)
        manifest = Manifest.parse(_read(tar, members[MANIFEST]), BUNDLE_KIND, "bundle", file)
        for name in (*MEMBERS, *(n for n in databases_in(manifest) if n not in MEMBERS)):
            member, entry = members.get(name), manifest.files.get(name)
            if member is None or entry is None or not member.isfile():
                raise ArchiveDamaged(message_id="bundle_member_missing", path=str(file), name=name)
            digest, size = hashlib.sha256(), 0
            with _member(tar, member) as source, (staging / name).open("wb") as out:
                for chunk in iter(lambda: source.read(1 << 20), b""):
                    digest.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
            if FileEntry(digest.hexdigest(), size) != entry:
                raise ArchiveDamaged(message_id="bundle_checksum", path=str(file), name=name)
    return manifest


def _member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    handle = tar.extractfile(member)
    if handle is None:
        raise ArchiveDamaged(message_id="bundle_member_not_file", name=member.name)
    return handle


def _read(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    with _member(tar, member) as handle:
        return handle.read()


def _valid_overrides(path: Path, file: Path) -> tuple[dict[str, Any], dict[str, SettingsError]]:
    """The bundle's overrides this Kazma accepts; the others are left out (named, with why)."""
    try:
        stored = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError:
        raise ArchiveDamaged(message_id="bundle_settings_unreadable", path=str(file), name=SETTINGS_FILE) from None
    if not isinstance(stored, dict):
        raise ArchiveDamaged(message_id="bundle_settings_not_object", path=str(file), name=SETTINGS_FILE)
    kept: dict[str, Any] = {}
    dropped: dict[str, SettingsError] = {}
    for key, value in stored.items():
        try:
            validate_override(key, value)
        except SettingsError as err:
            dropped[key] = err
            continue
        kept[key] = value
    return kept, dropped


def _write_overrides(kazma_db: Path, overrides: dict[str, Any], at: float) -> None:
    with contextlib.closing(sqlite3.connect(kazma_db)) as conn, conn:
        conn.execute("DELETE FROM settings_overrides")
        conn.executemany(
            "INSERT INTO settings_overrides (key, value, updated_at) VALUES (?, ?, ?)",
            [(key, orjson.dumps(value).decode(), at) for key, value in overrides.items()],
        )


def _counts(data_dir: Path) -> tuple[int, int, int]:
    def count(name: str, table: str) -> int:
        with contextlib.closing(sqlite3.connect(f"file:{data_dir / name}?mode=ro", uri=True)) as conn:
            return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    return count("kazma.db", "chats"), count("kazma.db", "checkpoints"), count("time_travel_audit.db", "audit")
