"""Converting a data folder of the first layout, where LangGraph's checkpoints had a file of
their own (checkpoints.db, the stock SQLite saver, a whole copy of the conversation in
every checkpoint), into the conversation store in kazma.db.

Each chat's newest checkpoint (with its pending writes) becomes the chat's checkpoint in
kazma.db, its messages stored once as bodies; older checkpoints are history the stock
saver kept and are not carried over (the saved steps in snapshots.db are untouched). The
transcript rows stay as they were.

The conversion works on a copy of kazma.db and puts it in place only when whole, after
both old files were copied to ``backups/before-conversion-<time>/``: a conversion that
fails leaves the old files exactly as they were and says why.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kazma_core.errors import KazmaError
from kazma_core.stores.app_schema import MIGRATIONS
from kazma_core.stores.conversation_sql import MESSAGES, SqlConversationStore, _is_messages, _PutJob
from kazma_core.stores.sqlite import copy_database, migrate, open_sqlite

log = logging.getLogger(__name__)

LEGACY_FILE = "checkpoints.db"
CONVERSATION_VERSION = 2  # kazma.db's migration that brought the conversation store


class ConversionFailed(KazmaError):
    code = "conversion_failed"
    status = 500


@dataclass(frozen=True)
class Conversion:
    chats: int
    backup: Path


def _version(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _files(path: Path) -> list[Path]:
    return [p for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()]


def convert_legacy(data_dir: Path, now: float | None = None) -> Conversion | None:
    """Convert checkpoints.db into kazma.db when the folder still has one; None when there is nothing to do."""
    legacy = data_dir / LEGACY_FILE
    kazma_db = data_dir / "kazma.db"
    if not legacy.exists():
        return None
    at = datetime.fromtimestamp(now, tz=UTC) if now is not None else datetime.now(UTC)
    backup = data_dir / "backups" / f"before-conversion-{at.strftime('%Y%m%dT%H%M%SZ')}"
    if kazma_db.exists() and _version(kazma_db) >= CONVERSATION_VERSION:
        # A conversion finished but was cut off before the old file was moved away.
        backup.mkdir(parents=True, exist_ok=True)
        for path in _files(legacy):
            os.replace(path, backup / path.name)
        log.warning("moved a leftover %s (already converted) to %s", LEGACY_FILE, backup)
        return Conversion(0, backup)
    work = data_dir / ".kazma.db.converting"
    try:
        backup.mkdir(parents=True, exist_ok=True)
        copy_database(legacy, backup / LEGACY_FILE)
        if kazma_db.exists():
            copy_database(kazma_db, backup / "kazma.db")
            shutil.copyfile(backup / "kazma.db", work)
        else:
            work.unlink(missing_ok=True)
        chats = _convert(legacy, work)
    except Exception as err:
        work.unlink(missing_ok=True)
        raise ConversionFailed(message_id="conversion_failed", legacy=str(legacy), reason=f"{type(err).__name__}: {err}") from err
    for path in _files(kazma_db)[1:]:
        path.unlink()
    os.replace(work, kazma_db)
    for path in _files(legacy):
        path.unlink()
    log.warning(
        "converted the chat history of %d chats from %s into kazma.db; a copy of the old files is in %s",
        chats, LEGACY_FILE, backup,
    )
    return Conversion(chats, backup)


def _version_number(version: Any) -> Any:
    return int(version.split(".")[0]) if isinstance(version, str) else version


def _whole_versions(checkpoint: Any) -> Any:
    """LangGraph's SQLite saver numbers channel versions "000…0007.0.8123…"; the conversation
    store uses the whole number alone (only the order matters, and it is the same)."""
    checkpoint["channel_versions"] = {k: _version_number(v) for k, v in checkpoint["channel_versions"].items()}
    checkpoint["versions_seen"] = {
        node: {k: _version_number(v) for k, v in seen.items()} for node, seen in checkpoint["versions_seen"].items()
    }
    return checkpoint


def _convert(legacy: Path, work: Path) -> int:
    """Each chat's newest checkpoint and its writes, into the copy of kazma.db, in one transaction."""
    saver = SqlConversationStore(db=None)  # type: ignore[arg-type]  # only its put and serialiser
    chats = 0
    with contextlib.closing(sqlite3.connect(f"file:{legacy}?mode=ro", uri=True)) as src:
        src.row_factory = sqlite3.Row
        dst = open_sqlite(work, secure_delete=True)
        try:
            migrate(dst, MIGRATIONS)
            dst.execute("BEGIN IMMEDIATE")
            threads = [r[0] for r in src.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''")]
            for thread_id in threads:
                row = src.execute(
                    "SELECT * FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
                    (thread_id,),
                ).fetchone()
                checkpoint = _whole_versions(saver.serde.loads_typed((row["type"], row["checkpoint"])))
                metadata = json.loads(row["metadata"]) if row["metadata"] is not None else {}
                found = checkpoint["channel_values"].get(MESSAGES)
                turn = checkpoint["channel_values"].get("turn_index")
                job = _PutJob(
                    thread_id, "", checkpoint, json.dumps(metadata, ensure_ascii=False),
                    str(metadata["run_id"]) if metadata.get("run_id") else None, None,
                    found if _is_messages(found) else None, None, None, turn if isinstance(turn, int) else None,
                    derive=False,
                )
                saver._put(dst, job)
                writes = src.execute(
                    "SELECT task_id, task_path, idx, channel, type, value FROM writes"
                    " WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
                    (thread_id, row["checkpoint_id"]),
                ).fetchall()
                dst.executemany(
                    "INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,"
                    " channel, type, value) VALUES ($1, '', $2, $3, $4, $5, $6, $7, $8)",
                    [(thread_id, row["checkpoint_id"], *tuple(w)) for w in writes],
                )
                chats += 1
            dst.execute("COMMIT")
        except BaseException:
            if dst.in_transaction:
                dst.execute("ROLLBACK")
            raise
        finally:
            dst.close()
    return chats
