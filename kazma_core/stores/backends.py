"""Which engine each store runs on, chosen by one setting: ``database.url``.

Empty (the default): three SQLite files in the data folder, one process. ``postgresql://``:
three schemas of one PostgreSQL database, shared by every replica that names it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from kazma_core.settings import Settings
from kazma_core.stores import app_schema, audit_sql, snapshots_sql
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.audit_sql import SqlAuditStore
from kazma_core.stores.conversation_sql import SqlConversationStore
from kazma_core.stores.engine import Database, DatabaseError
from kazma_core.stores.pg_copy import SchemaFile
from kazma_core.stores.postgres import DatabaseUnreachable, PostgresDB
from kazma_core.stores.snapshots_sql import SqlSnapshotStore
from kazma_core.stores.sqlite import SqliteDB

log = logging.getLogger(__name__)
APP_SCHEMA = "kazma"
STEPS_SCHEMA = "kazma_steps"
AUDIT_SCHEMA = "kazma_audit"


def database_url(settings: Settings) -> str:
    return settings.database.url.get_secret_value()


def app_db(settings: Settings) -> Database:
    """Users, chats, transcript, the conversation store, leases, settings, alerts."""
    url = database_url(settings)
    if url:
        return PostgresDB(url, APP_SCHEMA, app_schema.MIGRATIONS)
    # secure_delete: a deleted or forgotten chat leaves no text behind in free pages.
    return SqliteDB(settings.kazma_db, app_schema.MIGRATIONS, secure_delete=True)


def steps_db(settings: Settings) -> Database:
    """The saved steps: never in a backup (a copy would bring forgotten chats back)."""
    url = database_url(settings)
    if url:
        # Every step written counts in the steps' totals (one row): one write at a time per process.
        return PostgresDB(url, STEPS_SCHEMA, snapshots_sql.MIGRATIONS, one_writer=True)
    return SqliteDB(settings.snapshots_db, snapshots_sql.MIGRATIONS, secure_delete=True)


def audit_db(settings: Settings) -> Database:
    url = database_url(settings)
    if url:
        return PostgresDB(url, AUDIT_SCHEMA, audit_sql.MIGRATIONS)
    return SqliteDB(settings.audit_db, audit_sql.MIGRATIONS)


@dataclass
class Stores:
    """Every store of one deployment, on the engine its settings name."""

    app: AppStore
    snapshots: SqlSnapshotStore
    conversation: SqlConversationStore
    audit: SqlAuditStore

    @classmethod
    async def open(cls, settings: Settings) -> Stores:
        """The stores the server and every command work with: the one place they are opened.

        kazma.db is created and migrated now, not on first use; the others when first used (a
        command that never reads the steps leaves no snapshots.db behind)."""
        app = AppStore(app_db(settings))
        try:
            await app.users.count_users()
        except BaseException:
            await app.close()
            raise
        # On PostgreSQL the steps share the database with the leases: their writes are fenced there too.
        leases = f"{APP_SCHEMA}.leases" if database_url(settings) else None
        snapshots = SqlSnapshotStore(steps_db(settings), leases=leases)
        # The conversation shares kazma.db's database: a turn and its rows commit together.
        return cls(app, snapshots, SqlConversationStore(app.db), SqlAuditStore(audit_db(settings)))

    async def close(self) -> None:
        await self.snapshots.close()
        await self.audit.close()
        await self.app.close()


@contextlib.asynccontextmanager
async def opened(settings: Settings) -> AsyncIterator[Stores]:
    """`Stores.open`, closed when the block ends (a command's stores)."""
    stores = await Stores.open(settings)
    try:
        yield stores
    finally:
        await stores.close()


def archive_schemas(folder: Path) -> list[SchemaFile]:
    """The schemas a backup or a bundle holds, each as its SQLite file in folder; never the steps.

    The audit trail first and kazma.db last, in the order the SQLite files are copied."""
    return [
        SchemaFile(AUDIT_SCHEMA, audit_sql.MIGRATIONS, folder / "time_travel_audit.db"),
        SchemaFile(APP_SCHEMA, app_schema.MIGRATIONS, folder / "kazma.db"),
    ]


async def ensure_ready(settings: Settings, *, serving: bool = False) -> list[DatabaseError]:
    """Open (create, upgrade) every store's database now, so that one that cannot be used stops a
    command before it starts anything (a server unreachable, a schema newer than this Kazma, a
    damaged file), in one line.

    ``serving`` (kazma serve): the saved steps and the audit trail are not needed to serve chats,
    so one of them that cannot be read is returned rather than raised, and the server starts
    without it (its requests answer 503 and /healthz names it). kazma.db is needed for anything
    at all (the sign-in link, every chat): that one still stops the start."""
    down: list[DatabaseError] = []
    for db, needed in ((app_db(settings), True), (steps_db(settings), False), (audit_db(settings), False)):
        try:
            await db.run(lambda conn: None)
        except DatabaseUnreachable:
            raise
        except DatabaseError as err:
            if needed and serving:
                raise DatabaseError(err.label, reason_id=err.reason_id, needed=True, **err.params) from err
            if not serving:
                raise
            log.warning("%s; Kazma starts without it (its requests answer 503, /healthz names it)", err)
            down.append(err)
        finally:
            await db.close()
    return down
