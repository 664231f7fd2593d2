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
from kazma_core.errors import KazmaError
from kazma_core.maintenance import Maintenance, PassReport
from kazma_core.migration import export_bundle, import_bundle
from kazma_core.replicas.datalock import DataFolderLock, taken_back_on_failure
from kazma_core.settings import Settings, load_settings, prepare_data_dir
from kazma_core.sizes import human_size
from kazma_core.stores import pg_copy
from kazma_core.stores.backends import APP_SCHEMA, AUDIT_SCHEMA, STEPS_SCHEMA, database_url, opened
from kazma_core.stores.postgres import SETTING, check_url, redact
from kazma_server.cli_words import cli_lang, count, refused, say

T = TypeVar("T")


def register(sub: Any, shared: argparse.ArgumentParser) -> None:
    """Add the data commands to the `kazma` parser's subcommands."""
    maintain = sub.add_parser("maintain", parents=[shared], help=say("help_maintain"))
    maintain.set_defaults(func=cmd_maintain)

    backup = sub.add_parser("backup", help=say("help_backup"))
    backups = backup.add_subparsers(dest="backup_command", required=True)
    create = backups.add_parser("create", parents=[shared], help=say("help_backup_create"))
    create.add_argument("--out", help=say("help_backup_create_out"))
    create.set_defaults(func=cmd_backup_create)
    restore = backups.add_parser("restore", parents=[shared], help=say("help_backup_restore"))
    restore.add_argument("path", help=say("help_backup_restore_path"))
    restore.set_defaults(func=cmd_backup_restore)

    migrate = sub.add_parser("migrate", help=say("help_migrate"))
    bundles = migrate.add_subparsers(dest="migrate_command", required=True)
    export = bundles.add_parser("export", parents=[shared], help=say("help_migrate_export"))
    export.add_argument("file", help=say("help_migrate_file"))
    export.set_defaults(func=cmd_migrate_export)
    load = bundles.add_parser("import", parents=[shared], help=say("help_migrate_import"))
    load.add_argument("file", help=say("help_migrate_file"))
    load.set_defaults(func=cmd_migrate_import)


def stored_in(settings: Settings) -> str:
    """Where the settings keep the chats: what an operator reads to know which deployment a command touched."""
    url = database_url(settings)
    if url:
        return say("stored_in_database", url=redact(url), app=APP_SCHEMA, audit=AUDIT_SCHEMA)
    return str(settings.data_dir)


def steps_in(settings: Settings) -> str:
    return say("steps_schema", schema=STEPS_SCHEMA) if database_url(settings) else NEVER_COPIED


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
    async with opened(settings) as stores:
        return await work(Maintenance(settings, stores.app, stores.snapshots, stores.conversation, **options))


# kazma maintain -------------------------------------------------------------------------
def cmd_maintain(args: argparse.Namespace) -> int:
    with data_folder(args) as settings, DataFolderLock.shared(settings.data_dir):
        report = asyncio.run(_with_stores(settings, lambda m: m.run_pass(by_hand=True)))
    print("\n".join(describe_pass(report, settings)))
    for alert in report.alerts:
        print(say("alert", id=alert.id, kind=alert.kind, message=alert.text(cli_lang())), file=sys.stderr)
    return 1 if report.alerts else 0


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def describe_pass(report: PassReport, settings: Settings) -> list[str]:
    live, lang = report.live, cli_lang()
    url = database_url(settings)
    lines = [
        say("cleanup_of_database", where=report.where, url=redact(url)) if url else say("cleanup_of_file", path=settings.snapshots_db),
        say("settings_now", days=live.retention_days, auto="on" if live.auto_maintain else "off"),
    ]
    if not live.auto_maintain and report.by_hand:
        lines.append(say("by_hand"))
    if report.cutoff is None:
        lines.append(say("old_steps_kept"))
    else:
        days = count("days", live.retention_days)
        lines.append(say("old_steps_deleted", days=days, when=_when(report.cutoff), count=report.expired_steps))
    if report.orphan_chats or report.orphan_threads:
        lines.append(say(
            "orphans_deleted", steps=count("steps", report.orphan_steps), chats=count("chats", report.orphan_chats),
            threads=count("chats", report.orphan_threads),
        ))
    else:
        lines.append(say("no_orphans"))
    lines.append(say(
        "history_pruned", checkpoints=count("checkpoints", report.checkpoints_pruned), kept=report.checkpoints_per_chat,
    ))
    freed = max(report.step_bytes_before - report.step_bytes_after, 0)
    lines.append(say(
        "step_bytes", before=human_size(report.step_bytes_before, lang), after=human_size(report.step_bytes_after, lang),
        freed=human_size(freed, lang),
    ))
    if report.compaction is None:
        lines.append(say("not_compacted_off"))
    elif report.compacted:
        lines.append(say("compacted", how=" (VACUUM FULL)" if url else "", reason=report.compaction.said(lang)))
    else:
        lines.append(say("not_compacted", reason=report.compaction.said(lang)))
    lines.append(say(
        "disk_bytes", where=report.where, before=human_size(report.disk_bytes_before, lang),
        after=human_size(report.disk_bytes_after, lang), freed=human_size(report.disk_bytes_freed, lang),
    ))
    check = report.verification
    if check is not None:
        verdict = say("checks_passed" if check.passed else "checks_failed")
        left = {"verdict": verdict, "left": check.rows_left, "deleted": check.steps_deleted}
        if not check.scanned:
            lines.append(say("checked_rows", **left, bodies=count("freed_messages", check.bodies_freed)))
        else:
            lines.append(say(
                "checked_files", **left, samples_left=check.samples_left, samples=check.samples,
                bodies=check.bodies_freed, shared=check.samples_shared,
            ))
    lines.append(say("took", seconds=f"{report.seconds:.2f}"))
    return lines


# kazma backup ---------------------------------------------------------------------------
def _files(files: dict[str, Any]) -> None:
    for name, entry in files.items():
        print(say("file_entry", name=name, size=human_size(entry.bytes, cli_lang()), sha256=entry.sha256))


def cmd_backup_create(args: argparse.Namespace) -> int:
    with data_folder(args) as settings, DataFolderLock.shared(settings.data_dir):
        out = Path(args.out).expanduser().resolve() if args.out else settings.data_dir / "backups"
        asyncio.run(ensure_databases(settings))
        report = create_backup(settings, out)
    print(say("backup_written", path=report.path))
    print(say("from", where=stored_in(settings)))
    _files(report.manifest.files)
    print(say("steps_not_backed_up", steps=steps_in(settings)))
    print(say("restore_with", path=report.path))
    return 0


def cmd_backup_restore(args: argparse.Namespace) -> int:
    path = Path(args.path).expanduser().resolve()
    verify_backup(path)  # a damaged backup is refused before anything else is looked at
    with data_folder(args) as settings, DataFolderLock.exclusive(settings.data_dir, "restore"):
        report = restore_backup(path, settings)
        swept = asyncio.run(_with_stores(settings, lambda m: m.sweep_orphans(), orphan_grace=0.0))
    manifest = report.manifest
    print(say("restored", path=path, created=manifest.created_at, version=manifest.kazma_version, where=stored_in(settings)))
    steps = sum(len(d.step_ids) for d in swept.deletions)
    print(say("restore_swept", steps=count("steps", steps), chats=count("chats", len(swept.chats))))
    return 0


# kazma migrate --------------------------------------------------------------------------
def cmd_migrate_export(args: argparse.Namespace) -> int:
    file = Path(args.file).expanduser().resolve()
    if file.exists():
        raise KazmaError(message_id="file_exists", file=str(file))
    with data_folder(args) as settings, DataFolderLock.shared(settings.data_dir):
        asyncio.run(ensure_databases(settings))
        report = export_bundle(settings, file)
    print(say("bundle_written", file=file, size=human_size(file.stat().st_size, cli_lang())))
    print(say("from", where=stored_in(settings)))
    _files(report.manifest.files)
    print(say("bundle_leaves_out", overrides=count("overrides", len(report.overrides)), steps=steps_in(settings)))
    print(say("bundle_private"))
    print(say("load_with", file=file.name, setting=SETTING))
    return 0


def cmd_migrate_import(args: argparse.Namespace) -> int:
    file = Path(args.file).expanduser().resolve()
    with data_folder(args) as settings, DataFolderLock.exclusive(settings.data_dir, "import"):
        report = import_bundle(file, settings)
    manifest = report.manifest
    print(say(
        "imported", file=file, created=manifest.created_at, version=manifest.kazma_version,
        format=manifest.format_version, where=stored_in(settings),
    ))
    print(say(
        "imported_counts", chats=count("chats", report.chats), checkpoints=count("checkpoints", report.checkpoints),
        audit_rows=count("audit_rows", report.audit_rows), overrides=count("overrides", len(report.overrides)),
    ))
    for why in report.dropped.values():
        print(say("setting_left_out", why=refused(why)))
    print(say("steps_stay"))
    return 0
