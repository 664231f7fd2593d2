"""The data folder's commands: `kazma maintain`, `kazma backup create|restore`, `kazma migrate export|import`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from kazma_core.backup import NEVER_COPIED, create_backup, ensure_databases, restore_backup, verify_backup
from kazma_core.core import prepare_data_dir
from kazma_core.datalock import DataFolderLock, taken_back_on_failure
from kazma_core.errors import KazmaError
from kazma_core.maintenance import Maintenance, PassReport
from kazma_core.migration import export_bundle, import_bundle
from kazma_core.settings import Settings, load_settings
from kazma_core.sizes import human_size
from kazma_core.stores import pg_copy
from kazma_core.stores.app_sql import SqlAppStore
from kazma_core.stores.backends import APP_SCHEMA, AUDIT_SCHEMA, STEPS_SCHEMA, app_db, database_url, steps_db
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.postgres import SETTING, check_url, redact
from kazma_core.stores.snapshots_sql import SqlSnapshotStore

T = TypeVar("T")


def register(sub: Any) -> None:
    """Add the data commands to the `kazma` parser's subcommands."""
    maintain = sub.add_parser("maintain", help="run one clean-up pass now and print what it did")
    maintain.add_argument("--data-dir")
    maintain.set_defaults(func=cmd_maintain)

    backup = sub.add_parser("backup", help="back up or restore kazma.db (chats and their conversations) and the audit trail")
    backups = backup.add_subparsers(dest="backup_command", required=True)
    create = backups.add_parser("create", help="copy the databases (safe while the server runs); never the steps")
    create.add_argument("--out", help="folder the backup is written under (default: DATA_DIR/backups)")
    create.add_argument("--data-dir")
    create.set_defaults(func=cmd_backup_create)
    restore = backups.add_parser("restore", help="put a backup back (stop the server first)")
    restore.add_argument("path", help="the backup folder printed by `kazma backup create`")
    restore.add_argument("--data-dir")
    restore.set_defaults(func=cmd_backup_restore)

    migrate = sub.add_parser("migrate", help="move Kazma to another machine in one file")
    bundles = migrate.add_subparsers(dest="migrate_command", required=True)
    export = bundles.add_parser("export", help="write a migration bundle (databases, settings; never the steps)")
    export.add_argument("file")
    export.add_argument("--data-dir")
    export.set_defaults(func=cmd_migrate_export)
    load = bundles.add_parser("import", help="load a migration bundle into an empty data folder")
    load.add_argument("file")
    load.add_argument("--data-dir")
    load.set_defaults(func=cmd_migrate_import)


def stored_in(settings: Settings) -> str:
    """Where the settings keep the chats: what an operator reads to know which deployment a command touched."""
    url = database_url(settings)
    if url:
        return f"the PostgreSQL database {redact(url)} (schemas {APP_SCHEMA}, {AUDIT_SCHEMA})"
    return str(settings.data_dir)


def steps_in(settings: Settings) -> str:
    return f"the schema {STEPS_SCHEMA}" if database_url(settings) else NEVER_COPIED


@contextlib.contextmanager
def data_folder(args: argparse.Namespace) -> Iterator[Settings]:
    """The settings a data command runs with (its --data-dir), the folder ready in today's layout.

    A database server that cannot be used is said before the folder is touched (a lock taken in
    it would hide that), and a command that fails takes back what it made in the folder."""
    settings = load_settings(data_dir=args.data_dir)
    with taken_back_on_failure(settings.data_dir, settings.workspace):
        if url := database_url(settings):
            check_url(url)
            with pg_copy.connect(url) as conn:  # only asked to answer: an import needs it still empty
                conn.execute("SELECT 1")
        prepare_data_dir(settings)
        yield settings


async def _with_stores(settings: Settings, work: Callable[[Maintenance], Awaitable[T]], **options: Any) -> T:
    store = SqlAppStore(app_db(settings))
    snapshots = SqlSnapshotStore(steps_db(settings))
    try:
        await store.count_users()  # creates and migrates kazma.db now
        return await work(Maintenance(settings, store, snapshots, SqlConversationStore(store.db), **options))
    finally:
        await snapshots.close()
        await store.close()


# kazma maintain -------------------------------------------------------------------------
def cmd_maintain(args: argparse.Namespace) -> int:
    with data_folder(args) as settings, DataFolderLock.shared(settings.data_dir):
        report = asyncio.run(_with_stores(settings, lambda m: m.run_pass(by_hand=True)))
    print("\n".join(describe_pass(report, settings)))
    for alert in report.alerts:
        print(f"kazma: alert {alert.id} ({alert.kind}): {alert.message}", file=sys.stderr)
    return 1 if report.alerts else 0


def counted(n: int, thing: str) -> str:
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def describe_pass(report: PassReport, settings: Settings) -> list[str]:
    live = report.live
    url = database_url(settings)
    lines = [
        f"Clean-up of {report.where} in {redact(url)}" if url else f"Clean-up of {settings.snapshots_db}",
        (
            f"  settings now: time_travel.retention_days = {live.retention_days}, "
            f"time_travel.auto_maintain = {'on' if live.auto_maintain else 'off'}"
        ),
    ]
    if not live.auto_maintain and report.by_hand:
        lines.append("  auto_maintain is off, so the daily pass leaves steps alone; this pass was asked for by hand")
    if report.cutoff is None:
        lines.append("  Old steps: not deleted (auto_maintain is off)")
    else:
        lines.append(
            f"  Steps older than {counted(live.retention_days, 'day')} (saved before {_when(report.cutoff)}): "
            f"{report.expired_steps} deleted"
        )
    if report.orphan_chats or report.orphan_threads:
        lines.append(
            f"  Chats that no longer exist: {counted(report.orphan_steps, 'step')} of "
            f"{counted(report.orphan_chats, 'chat')} deleted, and the checkpoints of {counted(report.orphan_threads, 'chat')}"
        )
    else:
        lines.append("  Chats that no longer exist: none left a step or a checkpoint behind")
    lines.append(
        f"  Chat step history: {counted(report.checkpoints_pruned, 'checkpoint')} deleted "
        f"(the newest {report.checkpoints_per_chat} kept per chat)"
    )
    lines.append(
        f"  Saved steps: {human_size(report.step_bytes_before)} -> {human_size(report.step_bytes_after)} "
        f"({human_size(max(report.step_bytes_before - report.step_bytes_after, 0))} freed)"
    )
    if report.compaction is None:
        lines.append("  Not compacted: auto_maintain is off")
    else:
        how = " (VACUUM FULL)" if url and report.compacted else ""
        lines.append(f"  {'Compacted' if report.compacted else 'Not compacted'}{how}: {report.compaction.reason}")
    lines.append(
        f"  {report.where} on disk: {human_size(report.disk_bytes_before)} -> {human_size(report.disk_bytes_after)} "
        f"({human_size(report.disk_bytes_freed)} given back)"
    )
    check = report.verification
    if check is not None:
        verdict = "Checks passed" if check.passed else "Checks FAILED"
        if not check.scanned:
            lines.append(
                f"  {verdict}: {check.rows_left} of {check.steps_deleted} deleted steps left, "
                f"{counted(check.bodies_freed, 'freed message')} gone with them, and VACUUM ran. The text of "
                "deleted messages is not looked for in the files: they are the PostgreSQL server's"
            )
        else:
            lines.append(
                f"  {verdict}: {check.rows_left} of {check.steps_deleted} deleted steps left; "
                f"{check.samples_left} of {check.samples} text samples of {check.bodies_freed} freed messages "
                f"left in the file or its WAL ({check.samples_shared} also held by steps kept)"
            )
    lines.append(f"  Took {report.seconds:.2f} s")
    return lines


# kazma backup ---------------------------------------------------------------------------
def cmd_backup_create(args: argparse.Namespace) -> int:
    with data_folder(args) as settings, DataFolderLock.shared(settings.data_dir):
        out = Path(args.out).expanduser().resolve() if args.out else settings.data_dir / "backups"
        asyncio.run(ensure_databases(settings))
        report = create_backup(settings, out)
    print(f"Backup written to {report.path}")
    print(f"  from {stored_in(settings)}")
    for name, entry in report.manifest.files.items():
        print(f"  {name}: {human_size(entry.bytes)}, sha256 {entry.sha256}")
    print(f"  {steps_in(settings)} is not in it: saved steps are never backed up.")
    print(f"Restore it with: kazma backup restore {report.path}")
    return 0


def cmd_backup_restore(args: argparse.Namespace) -> int:
    path = Path(args.path).expanduser().resolve()
    verify_backup(path)  # a damaged backup is refused before anything else is looked at
    with data_folder(args) as settings, DataFolderLock.exclusive(settings.data_dir, "restore"):
        report = restore_backup(path, settings)
        swept = asyncio.run(_with_stores(settings, lambda m: m.sweep_orphans(), orphan_grace=0.0))
    print(f"Restored {path} (written {report.manifest.created_at} by Kazma {report.manifest.kazma_version}) "
          f"into {stored_in(settings)}")
    steps = sum(len(d.step_ids) for d in swept.deletions)
    print(f"  Saved steps of chats the backup does not have: {counted(steps, 'step')} of "
          f"{counted(len(swept.chats), 'chat')} deleted")
    return 0


# kazma migrate --------------------------------------------------------------------------
def cmd_migrate_export(args: argparse.Namespace) -> int:
    file = Path(args.file).expanduser().resolve()
    if file.exists():
        raise KazmaError(message_id="file_exists", file=str(file))
    with data_folder(args) as settings, DataFolderLock.shared(settings.data_dir):
        asyncio.run(ensure_databases(settings))
        report = export_bundle(settings, file)
    print(f"Migration bundle written to {file} ({human_size(file.stat().st_size)})")
    print(f"  from {stored_in(settings)}")
    for name, entry in report.manifest.files.items():
        print(f"  {name}: {human_size(entry.bytes)}, sha256 {entry.sha256}")
    print(f"  {counted(len(report.overrides), 'settings override')}; {steps_in(settings)} is not in it "
          "(saved steps never travel)")
    print("  It holds your chats and token hashes: keep it private.")
    print(f"Load it with: kazma migrate import {file.name} --data-dir EMPTY_FOLDER (SQLite), or with "
          f"{SETTING} naming an empty database (PostgreSQL)")
    return 0


def cmd_migrate_import(args: argparse.Namespace) -> int:
    file = Path(args.file).expanduser().resolve()
    with data_folder(args) as settings, DataFolderLock.exclusive(settings.data_dir, "import"):
        report = import_bundle(file, settings)
    manifest = report.manifest
    print(f"Imported {file} (written {manifest.created_at} by Kazma {manifest.kazma_version}, "
          f"format {manifest.format_version}) into {stored_in(settings)}")
    print(f"  {counted(report.chats, 'chat')}, {counted(report.checkpoints, 'checkpoint')}, "
          f"{counted(report.audit_rows, 'audit row')}, {counted(len(report.overrides), 'settings override')}")
    for why in report.dropped.values():
        print(f"  Setting left out: {why}")
    print("  Saved steps do not travel: Time Travel starts empty here.")
    return 0
