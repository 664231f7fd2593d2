"""A store's database on PostgreSQL (psycopg 3 and its pool), shared by every replica.

Each store keeps its tables in its own schema of the one database (``kazma``,
``kazma_steps``, ``kazma_audit``), as each has its own file on SQLite, and the same
numbered migrations: the SQLite script of each, with its types spelled for PostgreSQL
(:func:`pg_ddl`). A store's statements are the SQLite ones, with their ``?`` and
``:name`` parameters given to psycopg as ``%s`` and ``%(name)s``.

Several worker threads and pooled connections per store and process (CONNECTIONS), so one
chat's transactions never wait for another chat's round trips. What must stay in order is a
chat's own writes (a turn's checkpoints, their task writes, its saved steps, sent off one
after another without waiting): every transaction of a task that holds the chat's lease
(replicas/fence.py) joins the chat's lane, and starts only once the one asked for before it in
that lane has ended. The lease itself is what keeps two turns of one chat apart, in a process
and between replicas. Transactions are
SERIALIZABLE, so two replicas writing the same chat behave as if one wrote after the
other: the one PostgreSQL refuses runs again, and a connection lost before its commit is
replaced and the transaction run again, a few times before the error is given up.

The server away (stopped, the network cut) is bounded in time everywhere: a connection is
given up after CONNECT_SECONDS, a dead peer is noticed by TCP keepalives within a few seconds,
a statement or a lock wait ends after STATEMENT_SECONDS, and the retries stop after
RETRY_SECONDS, so a request answers 503 (DatabaseError) well within 10 s. The pool makes a
new connection when one is asked for, so the first request after the server is back works.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from functools import lru_cache
from typing import Any, TypeVar

import psycopg
from psycopg import errors, sql
from psycopg.adapt import Loader
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from kazma_core.catalogue import sentence
from kazma_core.catalogue.errors import Said
from kazma_core.replicas import fence
from kazma_core.retry import Backoff, retried
from kazma_core.stores.engine import Conn, Cursor, DatabaseError, NewerSchema, Params

T = TypeVar("T")
log = logging.getLogger(__name__)

ATTEMPTS = 10  # a transaction another replica keeps beating is run again this many times, pauses doubling
AGAIN = Backoff(first=0.01, most=0.5)
CONNECTIONS = 4  # per store and process: as many transactions at once, each on its own thread
CONNECT_SECONDS = 3
STATEMENT_SECONDS = 8
RETRY_SECONDS = 2.0  # a lost connection is not tried again after this; an attempt ends within CONNECT_SECONDS
CHECK_IDLE_SECONDS = 1.0  # a pooled connection idle longer is checked before it is used
CONFLICT_SECONDS = 6.0  # nor a transaction another replica keeps beating
# Every connection of the pool: a server gone silent is noticed within about 4 s (keepalives
# idle 2 s, then two probes 1 s apart; unacknowledged data after 4 s), not at the OS's 2 hours.
BOUNDED: dict[str, Any] = {
    "connect_timeout": CONNECT_SECONDS,
    "keepalives": 1, "keepalives_idle": 2, "keepalives_interval": 1, "keepalives_count": 2,
    "tcp_user_timeout": 4000,
    "options": f"-c statement_timeout={STATEMENT_SECONDS * 1000} -c lock_timeout={STATEMENT_SECONDS * 1000}",
}
# What says the server cannot be used right now; a mistake in Kazma's SQL is a bug (a 500).
_AWAY = (psycopg.OperationalError, psycopg.InterfaceError, psycopg.InternalError, PoolTimeout)
SETTING = "KAZMA_DATABASE__URL (database.url)"
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_MIGRATE_LOCK = 0x6B617A6D61  # "kazma": one replica migrates at a time


class DatabaseUnreachable(DatabaseError):
    """The PostgreSQL server named by the setting cannot be used: one line that names the setting
    (``line``, for a command), and a 503 with what to do for a request that needed it."""

    def __init__(self, *, reason_id: str, **params: Any) -> None:
        super().__init__("PostgreSQL", reason_id=reason_id, setting=SETTING, **params)
        self.args = (self.said("en"),)

    def line(self, lang: str) -> str:
        return self.said(lang)


def _slow(err: BaseException) -> bool:
    """A statement or a lock wait that ran out of time (STATEMENT_SECONDS): the server is there."""
    return isinstance(err, errors.QueryCanceled | errors.LockNotAvailable)


def _conflict(err: BaseException | None) -> bool:
    """A transaction PostgreSQL refused for a concurrent one (SERIALIZABLE, a deadlock): run it again.
    Also when it surfaces as another error (a pipeline of executemany aborted by it, a rollback after it)."""
    for _ in range(4):
        if err is None:
            return False
        if isinstance(err, errors.TransactionRollback) or getattr(err, "sqlstate", None) in ("40001", "40P01"):
            return True
        err = err.__cause__ or err.__context__
    return False


def unreachable(url: str, err: BaseException) -> DatabaseUnreachable:
    """The server of the setting refused a connection: its URL (without the password) and psycopg's first line."""
    return DatabaseUnreachable(reason_id="pg_unreachable", url=redact(url), reason=str(err).strip().splitlines()[0])


def why(err: BaseException) -> tuple[str, dict[str, Any]]:
    """What is wrong, as a catalogue sentence that names no host: a person may read it (/healthz, a 503)."""
    if _slow(err):
        return "pg_slow", {}
    if isinstance(err, psycopg.OperationalError | psycopg.InterfaceError | PoolTimeout):
        return "pg_away", {}
    return "pg_failed", {"kind": type(err).__name__}


def away(label: str, err: BaseException) -> DatabaseError:
    """The request's refusal, worded in the language of whoever reads it."""
    reason_id, params = why(err)
    return DatabaseError(label, reason_id=reason_id, **params)


def words(err: BaseException) -> str:
    """A probe's few words (English, as /healthz and the operator's log say them)."""
    reason_id, params = why(err)
    return sentence(f"errors.{reason_id}", "en", **params)


def check_url(url: str) -> None:
    """A URL psycopg can read, naming a database: else one clear line."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise DatabaseUnreachable(reason_id="pg_url_scheme", url=repr(redact(url)))
    try:
        port = conninfo_to_dict(url).get("port")
    except psycopg.ProgrammingError as err:
        reason = str(err).strip().splitlines()[0]
        raise DatabaseUnreachable(reason_id="pg_url_invalid", reason=reason) from err
    if port is not None and not str(port).isdigit():
        raise DatabaseUnreachable(reason_id="pg_url_invalid", reason=f"port {port!r}")


def read_rows(url: str, statement: str) -> list[tuple[Any, ...]]:
    """The rows of one query, on a connection of its own; none when the server cannot answer it."""
    try:
        with psycopg.connect(url, **BOUNDED) as conn:
            return [tuple(row) for row in conn.execute(statement).fetchall()]
    except psycopg.Error:
        return []


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


@lru_cache(maxsize=4096)
def to_pg(statement: str) -> str:
    """A statement written for sqlite3 (``?``, ``:name``), in psycopg's parameter style."""
    return _NAMED.sub(r"%(\1)s", statement.replace("%", "%%")).replace("?", "%s")


def pg_ddl(script: str) -> str:
    """A SQLite migration with its types spelled for PostgreSQL (text compared byte by byte, as SQLite does)."""
    out = re.sub(r"INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", script)
    out = re.sub(r"\bINTEGER\b", "BIGINT", out)
    out = re.sub(r"\bREAL\b", "DOUBLE PRECISION", out)
    out = re.sub(r"\bBLOB\b", "BYTEA", out)
    return re.sub(r"\bTEXT\b", 'TEXT COLLATE "C"', out)


class Row(tuple):  # type: ignore[type-arg]
    """A row readable by position and by column name, as sqlite3.Row is."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        return super().__getitem__(self._index[key] if isinstance(key, str) else key)

    def keys(self) -> list[str]:
        return list(self._index)


def _rows(cursor: Any) -> Callable[[Sequence[Any]], Row]:
    # Asked of every statement: the result's column names straight from libpq (cursor.description
    # would make a Column object of each), and one index per set of names, shared by its rows.
    result = cursor.pgresult
    names = tuple(result.fname(i) for i in range(result.nfields)) if result is not None else ()
    index = _index(names)
    return lambda values: Row(values, index)


@lru_cache(maxsize=1024)
def _index(names: tuple[bytes | None, ...]) -> dict[str, int]:
    return {(name or b"").decode(): i for i, name in enumerate(names)}


class _Numeric(Loader):
    """sum() of whole numbers is numeric in PostgreSQL: a whole number here, as on SQLite."""

    def load(self, data: Any) -> int | float:
        value = Decimal(bytes(data).decode())
        return int(value) if value == value.to_integral_value() else float(value)


def _params(parameters: Params) -> Params:
    # SQLite stores a bool as 0/1; the columns are whole numbers on PostgreSQL too.
    if isinstance(parameters, dict):
        return {k: int(v) if isinstance(v, bool) else v for k, v in parameters.items()}
    return [int(v) if isinstance(v, bool) else v for v in parameters]


class PgConn:
    """A psycopg connection that takes sqlite3's statements."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.raw = conn

    def execute(self, statement: str, parameters: Params = (), /) -> Cursor:
        return self.raw.execute(to_pg(statement), _params(parameters))

    def executemany(self, statement: str, parameters: Any, /) -> Cursor:
        cur = self.raw.cursor()
        cur.executemany(to_pg(statement), [_params(p) for p in parameters])
        return cur


class PostgresDB:
    """One store's schema in a PostgreSQL database, served by CONNECTIONS worker threads, a chat's in order."""

    dialect = "postgresql"
    alone = False

    def __init__(
        self, url: str, schema: str, migrations: Sequence[str], *, pool_timeout: float = CONNECT_SECONDS,
        one_writer: bool = False,
    ) -> None:
        check_url(url)
        self.url = url
        self.schema = schema
        self.label = f"PostgreSQL schema {schema}"
        self._migrations = migrations
        self._timeout = pool_timeout
        self._threads = ThreadPoolExecutor(max_workers=CONNECTIONS, thread_name_prefix=f"pg-{schema}")
        # Per chat whose lease a task holds: done once the last transaction asked for in its lane has ended.
        self._lanes: dict[str, asyncio.Future[None]] = {}
        # one_writer: the store's writes all touch one row (a total), so two at once would conflict every
        # time: its transactions (tx) take one lane, in the order asked; its reads still run side by side.
        self._one_writer = one_writer
        self._used: dict[int, float] = {}  # when each pooled connection was last taken (by id)
        self._pool: ConnectionPool[Any] | None = None
        self._opened = threading.Lock()
        self._away: str | None = None  # what the last probe found; requests are refused meanwhile

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.row_factory = _rows
        conn.adapters.register_loader("numeric", _Numeric)
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        conn.commit()

    def _open(self) -> ConnectionPool[Any]:
        with self._opened:
            if self._pool is None:
                try:
                    with psycopg.connect(self.url, connect_timeout=CONNECT_SECONDS, autocommit=True) as conn:
                        migrate(conn, self.schema, self._migrations)
                except psycopg.OperationalError as err:
                    raise unreachable(self.url, err) from err
                # reconnect_timeout: a connection the pool could not make is given up soon, so the next
                # request asks for a new one at once (rather than after the pool's backoff, minutes).
                pool: ConnectionPool[Any] = ConnectionPool(
                    self.url, min_size=1, max_size=CONNECTIONS, open=False, configure=self._configure, kwargs=BOUNDED,
                    check=self._check, timeout=self._timeout, name=f"kazma-{self.schema}",
                    reconnect_timeout=self._timeout,
                )
                try:
                    pool.open(wait=True, timeout=self._timeout)
                except PoolTimeout as err:
                    pool.close()
                    raise away(self.label, err) from err
                self._pool = pool
            return self._pool

    def _check(self, conn: psycopg.Connection[Any]) -> None:
        """A connection idle for a while is asked whether the server is still there before it is
        used (the server restarted meanwhile); one used a moment ago is not asked again."""
        if time.monotonic() - self._used.get(id(conn), 0.0) > CHECK_IDLE_SECONDS:
            ConnectionPool.check_connection(conn)

    def _once(self, fn: Callable[[Conn], T], serializable: bool, committed: list[bool]) -> T:
        with self._open().connection() as raw:
            self._used[id(raw)] = time.monotonic()
            raw.isolation_level = psycopg.IsolationLevel.SERIALIZABLE if serializable else None
            try:
                result = fn(PgConn(raw))
            except BaseException:
                raw.rollback()
                raise
            committed.append(True)
            raw.commit()
            return result

    def _attempts(self, fn: Callable[[Conn], T], serializable: bool) -> T:
        if self._away is not None:
            # Found away (by a probe, or the last request): ask the server again rather than wait out the pool.
            self._away = self._probe()
            if self._away is not None:
                raise DatabaseError(self.label, self._away)
        committing: list[bool] = []
        started = time.monotonic()

        def again(err: BaseException) -> bool:
            if _conflict(err):
                return True
            # A connection lost before its commit: run again on a new one, for a moment. Lost at the
            # commit, whether it happened is unknown: the caller is told, nothing is run twice. A
            # statement that timed out would only time out again.
            return isinstance(err, _AWAY) and not committing and not _slow(err) and time.monotonic() - started < RETRY_SECONDS

        def note(err: BaseException, pause: float) -> None:
            committing.clear()
            log.info("%s: transaction run again (%s%s)", self.label, type(err).__name__,
                     "" if isinstance(err, errors.TransactionRollback) else f": {str(err).strip()[:80]}")

        try:
            try:
                # The first attempt without tenacity's bookkeeping: nearly every transaction ends in it.
                return self._once(fn, serializable, committing)
            except BaseException as err:
                if not again(err):
                    raise
                note(err, AGAIN.pause(1))
                time.sleep(AGAIN.pause(1))
            return retried(AGAIN, ATTEMPTS - 1, CONFLICT_SECONDS, lambda: self._once(fn, serializable, committing),
                           again=again, note=note)
        except _AWAY as err:
            if _conflict(err):
                # Beaten by other transactions every time, for CONFLICT_SECONDS: not the server away,
                # but a 503 the person can send again (never a turn's failure, a 502).
                log.warning("%s: a transaction gave up after conflicts with others (%s)", self.label, type(err).__name__)
                raise DatabaseError(self.label, reason_id="pg_conflicts") from err
            log.warning("%s cannot be used: %s", self.label, str(err).strip() or type(err).__name__)
            if not _slow(err):
                self._away = words(err)  # the next request asks the server (a probe) rather than the pool
            raise away(self.label, err) from err

    def _probe(self) -> str | None:
        try:
            with psycopg.connect(self.url, autocommit=True, **BOUNDED) as conn:
                conn.execute(sql.SQL("SELECT 1 FROM {}.kazma_version").format(sql.Identifier(self.schema))).fetchall()
        except errors.UndefinedTable:
            # A store makes its schema on first use: one not made yet is fine, one that went is not.
            return None if self._pool is None else sentence("errors.pg_schema_missing", "en", schema=self.schema)
        except psycopg.Error as err:
            return words(err)
        return None

    async def probe(self) -> str | None:
        # In a thread of its own: a probe never waits behind the store's work.
        problem = await asyncio.to_thread(self._probe)
        self._away = problem
        return problem

    def found_wrong(self, role: str, problem: str) -> Said:
        return Said("pg_store_away", {"label": self.label, "problem": problem, "setting": SETTING})

    async def run(self, fn: Callable[[Conn], T]) -> T:
        return await self._submit(fn, False, fence.held_chat())

    async def tx(self, fn: Callable[[Conn], T]) -> T:
        return await self._submit(fn, True, "" if self._one_writer else fence.held_chat())

    async def _submit(self, fn: Callable[[Conn], T], serializable: bool, chat: str | None) -> T:
        """On a worker thread: at once, or in a lane (a chat whose lease the task holds: once every
        transaction it, or a task it started, asked for before in that chat has ended, as one thread did)."""
        loop = asyncio.get_running_loop()
        if chat is None:
            return await loop.run_in_executor(self._threads, self._attempts, fn, serializable)
        before = self._lanes.get(chat)
        mine: asyncio.Future[None] = loop.create_future()
        self._lanes[chat] = mine

        def ended(_: object = None) -> None:
            if not mine.done():
                mine.set_result(None)
            if self._lanes.get(chat) is mine:
                del self._lanes[chat]

        if before is not None and not before.done():
            try:
                await asyncio.shield(before)
            except BaseException:
                before.add_done_callback(ended)  # the ones after this stay behind the one before it
                raise
        job = self._threads.submit(self._attempts, fn, serializable)
        # Ended when the thread is done with it, even if whoever asked stopped waiting.
        job.add_done_callback(lambda _: loop.call_soon_threadsafe(ended))
        return await asyncio.wrap_future(job)

    async def purge_wal(self) -> None:
        """Deleted rows leave the tables' pages now (VACUUM), not at autovacuum's next pass."""

        def vacuum() -> None:
            with psycopg.connect(self.url, autocommit=True, **BOUNDED) as conn:
                tables = conn.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %s", (self.schema,)
                ).fetchall()
                for (table,) in tables:
                    conn.execute(sql.SQL("VACUUM {}.{}").format(sql.Identifier(self.schema), sql.Identifier(table)))

        # On a thread of its own, with a connection of its own: the store's threads go on
        # serving the chats' transactions meanwhile. The rows went in a transaction that
        # committed before: a server away now only leaves their pages to autovacuum.
        try:
            await asyncio.to_thread(vacuum)
        except psycopg.Error as err:
            log.warning("%s: the VACUUM after a deletion did not run (%s); autovacuum will free those pages", self.label, err)

    async def close(self) -> None:
        if self._pool is not None:
            await asyncio.get_running_loop().run_in_executor(self._threads, self._pool.close)
            self._pool = None
        self._threads.shutdown(wait=True)


def migrate(conn: psycopg.Connection[Any], schema: str, migrations: Sequence[str]) -> None:
    """Create the schema and apply its migrations not applied yet, one replica at a time."""
    name = sql.Identifier(schema)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(name))
        conn.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {}.kazma_version (version BIGINT NOT NULL)").format(name))
        row = conn.execute(sql.SQL("SELECT version FROM {}.kazma_version").format(name)).fetchone()
        version = int(row[0]) if row else 0
        if version > len(migrations):
            raise NewerSchema(version, len(migrations), where_id="newer_pg_schema", schema=schema, setting=SETTING)
        if version == len(migrations):
            return
        conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(name))
        for script in migrations[version:]:
            conn.execute(pg_ddl(script).encode())
        conn.execute(sql.SQL("DELETE FROM {}.kazma_version").format(name))
        conn.execute(sql.SQL("INSERT INTO {}.kazma_version VALUES (%s)").format(name), (len(migrations),))


def reset_sequences(conn: Conn, tables: Sequence[tuple[str, str]]) -> None:
    """After rows were copied in with their ids: each table's id sequence continues past them."""
    for table, column in tables:
        conn.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)"
        )
