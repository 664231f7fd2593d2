"""One SQLite file, one connection, one thread: a whole transaction runs in a single hop.

The thread and its queue are aiosqlite's (one thread per connection, requests run in the order
they were asked for). Its public calls send one statement per hop; a capture or a restore is
several statements that must commit together, and the stores write them as one function of the
connection, so each function is handed to the connection's thread whole (``Connection._execute``,
what every aiosqlite call goes through) and the event loop waits once. ``bench/sqlite_engine.py``
times a turn's transactions on it and on the standard library's one-thread executor it replaced.

The stores' statements number their parameters (``$1 … $n``, stores/engine.py). SQLite reads
``$1`` as a parameter named "1", which sqlite3 binds from a mapping only (a sequence for named
parameters is deprecated since Python 3.12): the connection (:class:`Connection`) binds the
stores' sequence of values as ``{"1": v1, "2": v2, …}``, and that is all it changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from kazma_core.catalogue.errors import Said
from kazma_core.errors import without_paths
from kazma_core.stores.engine import DatabaseError, NewerSchema, Params, ddl

T = TypeVar("T")
log = logging.getLogger(__name__)
BUSY_SECONDS = 10.0  # how long a statement waits for another connection's lock
PURGE_WAIT_MS = 200  # how long a purge of the write-ahead log waits for readers to let go
# The write-ahead log is folded into the file beside the store's work (SqliteDB._fold), at most this
# often while writes come; the store's own connection folds it only past FOLD_GUARD_PAGES (40 MB of
# 4 KB pages), should the folds beside it fall behind.
FOLD_SECONDS = 0.5
FOLD_GUARD_PAGES = 10_000
FOLD_PASSES = 4
# The log's file is cut back to this once written from its start again (SQLite leaves it at its
# largest otherwise: a folder that held one large write would keep a log that size).
WAL_KEEP_BYTES = 4 << 20

Migration = str
# A migration's column types on SQLite (engine.ddl): the words its first scripts were written with.
TYPES = {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "int": "INTEGER", "real": "REAL", "blob": "BLOB", "text": "TEXT"}
_NUMBERS = tuple(str(k) for k in range(1, 1001))


def _numbered(parameters: Params) -> dict[str, Any]:
    """The values of $1 … $n as sqlite3 binds named parameters: by name, "1" … "n"."""
    if isinstance(parameters, dict):
        raise TypeError("a statement's parameters are a sequence, the values of $1 … $n in order")
    if len(parameters) > len(_NUMBERS):
        return {str(k): v for k, v in enumerate(parameters, start=1)}
    return dict(zip(_NUMBERS, parameters))  # noqa: B905  # as many names as values, fewer than _NUMBERS


class Connection(sqlite3.Connection):
    """A sqlite3 connection that takes the stores' statements: ``$1 … $n`` bound from a sequence."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return _execute(self, sql, _numbered(parameters))

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        return _executemany(self, sql, map(_numbered, parameters))


_execute = sqlite3.Connection.execute
_executemany = sqlite3.Connection.executemany


def statements(script: str) -> list[str]:
    """A migration's statements, split where SQLite says a statement is complete (a ';' inside
    a string or a trigger does not end one)."""
    out: list[str] = []
    current = ""
    for piece in script.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):
            out.append(current)
            current = ""
    out.append(current.rstrip(";"))
    return [s for s in out if s.strip()]


def open_sqlite(path: Path, *, secure_delete: bool = False) -> Connection:
    conn = sqlite3.connect(
        path, isolation_level=None, check_same_thread=False, timeout=BUSY_SECONDS, factory=Connection
    )
    conn.row_factory = sqlite3.Row
    if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
        # A new file: pages freed by deletions can go back to the disk (see SqliteDB.close).
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    if secure_delete:
        conn.execute("PRAGMA secure_delete=ON")
    return conn


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration], label: str = "this database") -> None:
    """Apply the numbered migrations this file has not seen yet (PRAGMA user_version)."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > len(migrations):
        raise NewerSchema(version, len(migrations), where_id="newer_file", label=label)
    for number, script in enumerate(migrations[version:], start=version + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in statements(ddl(script, TYPES)):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def copy_database(src: Path, dst: Path) -> None:
    """One consistent copy of a live SQLite file (online backup API), as a standalone file.

    The backup API copies every page, free ones too, and a database need not have zeroed
    what it deleted: the copy is vacuumed so that the text of a chat deleted before
    the backup is not in it."""
    source = sqlite3.connect(src, timeout=30.0)
    try:
        target = sqlite3.connect(dst)
        try:
            source.backup(target)
            # The copy is a single file: no -wal beside it, readable by any SQLite tool.
            target.execute("PRAGMA journal_mode=DELETE")
            target.execute("VACUUM")
        finally:
            target.close()
    finally:
        source.close()


def open_reader(path: Path, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection that only reads an existing file, of its own, and leaves nothing beside it.

    Not SQLite's read-only mode: a read-only connection to a WAL database makes its -wal and
    -shm files and cannot remove them, so one that closed last (a health check as a server stopped,
    before its store had opened the file) left them in the data folder. Opened read-write (never
    creating the file) and made query-only, the last connection to close removes them, as the
    store's own does."""
    conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=timeout)
    conn.execute("PRAGMA query_only=ON")
    return conn


def probe_file(path: Path) -> str | None:
    """None when the file reads back as a database: its schema and the first page of every table,
    read through a connection of its own (the store's may still serve pages from memory)."""
    if not path.exists():
        return "the file is missing"
    try:
        conn = open_reader(path)
        try:
            tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for table in tables:
                conn.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchall()
        finally:
            conn.close()
    except sqlite3.OperationalError as err:
        if "locked" in str(err) or "busy" in str(err):
            return None  # busy with a write of its own (a clean-up, a compaction): not damaged
        return _reason(err)
    except sqlite3.Error as err:
        return _reason(err)
    return None


def read_rows(path: Path, statement: str) -> list[tuple[Any, ...]]:
    """The rows of one query of a file opened read only; none when it is missing or cannot be read."""
    if not path.exists():
        return []
    try:
        with contextlib.closing(open_reader(path)) as conn:
            return [tuple(row) for row in conn.execute(statement).fetchall()]
    except sqlite3.Error:
        return []


def _reason(err: sqlite3.Error) -> str:
    return without_paths(str(err)) or type(err).__name__


async def _on_thread(link: aiosqlite.Connection, fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) on the connection's thread. Queued as soon as called (nothing is awaited before),
    so requests reach the thread in the order they were made."""
    result: T = await link._execute(fn, *args)  # type: ignore[no-untyped-call]  # aiosqlite leaves it untyped
    return result


def _nothing() -> None:
    """Run on the probes' thread to wait for what it runs now (a fold)."""


# A mistake in Kazma's own SQL is a bug (a 500), not a file that cannot be used.
_BUGS = (sqlite3.IntegrityError, sqlite3.ProgrammingError)
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class _Busy(Exception):
    """A request run at once found the file locked (SqliteDB._at_once): it goes to the thread."""


class SqliteDB:
    """A SQLite file served by one worker thread (an aiosqlite connection's).

    Every request, read or write, runs on that thread in the order it was asked for: one writer,
    and a chat's writes (a turn's, and the captures it started) commit in the order they were made,
    which the fence's ``one_writer`` reasoning relies on (replicas/fence.py)."""

    dialect = "sqlite"
    alone = True
    serial = True  # one connection, one thread, each transaction BEGIN IMMEDIATE
    share_lock = ""

    @staticmethod
    def octets(column: str) -> str:
        return f"length(CAST({column} AS BLOB))"

    @staticmethod
    def json_equals(column: str, key: str, value: str) -> str:
        # The key quoted in the path: a top-level key, dots and all, as PostgreSQL's -> reads one.
        return f"{column} -> ('$.\"' || {key} || '\"') = json({value})"

    def __init__(self, path: Path, migrations: Sequence[Migration], *, secure_delete: bool = False) -> None:
        self.path = path
        self.label = path.name
        self._migrations = migrations
        self._secure_delete = secure_delete
        # The thread, started by the first request; the file's connection is opened on it then (and
        # again there by the request after one whose error dropped it), as every request is served.
        self._link: aiosqlite.Connection | None = None
        self._gate = asyncio.Lock()  # the requests made while the thread starts: in order, one at a time
        self._waiting = 0  # ... how many there are: a request goes straight to the queue only behind none
        self._closed = False
        # The probes' own thread (they never wait behind the store's work), ended by close: no probe
        # has the file open once the store is closed (a failed start takes back what it made then).
        self._probes = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sqlite-probe-{path.name}")
        self._conn: Connection | None = None
        self._folding = False  # a fold of the write-ahead log is running or asked for
        self._held = 0  # blocks that need the log to themselves (folds_held): no fold is asked for meanwhile
        self._folded_at = 0.0  # when the last one was asked for (time.monotonic())
        self._seen = path.exists()  # a file not made yet is fine; one that was there and went is not
        self._damaged: str | None = None  # what the last probe found wrong; requests are refused meanwhile
        # Requests handed to the thread (counted on the event loop) and served by it (counted on the
        # thread, once a request's work is done): equal, the thread has nothing to do (see `small`).
        self._asked = 0
        self._served = 0

    def _open(self) -> Connection:
        if self._conn is None:
            if self._seen and not self.path.exists():
                # Made an empty one here, the store would answer as if its data never was.
                raise DatabaseError(self.label, reason_id="db_file_missing")
            conn = open_sqlite(self.path, secure_delete=self._secure_delete)
            # A commit that crosses SQLite's fold point (1,000 pages) would fold the log itself:
            # copy it into the file and sync both, tens of ms with every request of the store
            # queued behind it. The folds run on the probes' thread instead (_fold).
            conn.execute(f"PRAGMA wal_autocheckpoint={FOLD_GUARD_PAGES}")
            conn.execute(f"PRAGMA journal_size_limit={WAL_KEEP_BYTES}")
            try:
                migrate(conn, self._migrations, self.label)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
            self._seen = True
        return self._conn

    def _call(self, fn: Callable[[Connection], T]) -> T:
        if self._damaged is not None:
            # Found damaged: the store's connection may still serve what it cached, so nothing is
            # answered from it until the file reads back whole again (put back, or moved aside).
            self._damaged = self._probe()
            self._drop()  # whole again or not, what the connection cached from before is not to be trusted
            if self._damaged is not None:
                raise DatabaseError(self.label, self._damaged)
        try:
            return fn(self._open())
        except _BUGS:
            raise
        except sqlite3.Error as err:
            self._drop()  # the next request opens the file afresh (a disk back, a file put back)
            raise DatabaseError(self.label, _reason(err)) from err

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _probe(self) -> str | None:
        if not self._seen and not self.path.exists():
            return None
        self._seen = True
        return probe_file(self.path)

    def _idle(self) -> bool:
        """The thread has started, served every request it was handed, and none waits for it; the
        file is open and not found damaged: a request can run at once, on the caller's thread."""
        return (self._asked == self._served and self._link is not None and not self._waiting
                and self._conn is not None and self._damaged is None and not self._closed)

    @staticmethod
    def _at_once(fn: Callable[[Connection], T], conn: Connection) -> T:
        """fn on the caller's thread (the event loop's), never waiting for a lock: the file locked
        (another process's write, a fold's last pass) raises _Busy, with nothing written, and the
        request takes its turn on the store's thread instead, which waits for the lock there."""
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            return fn(conn)
        except sqlite3.OperationalError as err:
            if err.sqlite_errorcode in _BUSY:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise _Busy from err
            raise
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_SECONDS * 1000)}")

    async def run(self, fn: Callable[[Connection], T], *, small: bool = False) -> T:
        """Run fn with the connection on the store's thread (reads, or writes in autocommit).

        `small`: fn reads a few rows, or writes them with one statement. While the store's thread
        has nothing to do, it runs at once on the caller's thread: no hop to the thread and back
        (about a tenth of a turn's CPU, and the wait for the interpreter's lock while the event
        loop's work holds it). It still comes after every request asked for before it (none is
        waiting), and the file locked sends it to the thread (`_at_once`): a read run again there
        reads the same, and a statement that was refused wrote nothing."""
        if small and self._idle():
            with contextlib.suppress(_Busy):
                return self._call(functools.partial(self._at_once, fn))
        link = self._link
        if link is None or self._waiting:
            # The thread is not started yet (the first request), or requests made before this one
            # still wait for it: behind them, so that none overtakes one asked for earlier.
            self._waiting += 1
            try:
                async with self._gate:
                    return await self._hop(await self._started(), fn)
            finally:
                self._waiting -= 1
        return await self._hop(link, fn)

    async def _hop(self, link: aiosqlite.Connection, fn: Callable[[Connection], T]) -> T:
        self._asked += 1
        return await _on_thread(link, self._serve, fn)

    def _serve(self, fn: Callable[[Connection], T]) -> T:
        """A request on the store's thread, counted served once its work is done (even if whoever
        asked has stopped waiting: the thread went on with it meanwhile)."""
        try:
            return self._call(fn)
        finally:
            self._served += 1

    async def _started(self) -> aiosqlite.Connection:
        if self._closed:
            raise RuntimeError(f"{self.label} is closed")
        if self._link is None:
            # aiosqlite's connector runs on the new thread, through the same door as every request
            # (a file found damaged, missing, or of a newer Kazma is refused there): the connection
            # it opens is the one requests use, until an error drops it and the next one reopens.
            link = aiosqlite.Connection(lambda: self._call(lambda conn: conn), iter_chunk_size=64)
            # A store never closed (a command's error path) must not keep the process from ending,
            # as the executor's thread before did not: aiosqlite's thread would, waiting for work.
            link._thread.daemon = True
            try:
                self._link = await link
            except BaseException:
                # Refused (a damaged file): aiosqlite has queued its thread's stop, whose answer the
                # thread posts to this loop. Waited for, so that `kazma serve` starting without the
                # store (asyncio.run ends right after) never has the thread post to a closed loop,
                # a traceback in the log.
                await asyncio.to_thread(link._thread.join)
                raise
        return self._link

    async def probe(self) -> str | None:
        try:
            problem = await asyncio.get_running_loop().run_in_executor(self._probes, self._probe)
        except RuntimeError:  # closed (a check as the server stops): the file is not opened again
            return None
        if problem is not None:
            self._damaged = problem
        return problem

    def found_wrong(self, role: str, problem: str) -> Said:
        return Said(f"store_damaged_{role}", {"label": self.label, "problem": problem})

    async def tx(self, fn: Callable[[Connection], T], *, small: bool = False) -> T:
        """Run fn inside one IMMEDIATE transaction: all of it commits, or none of it.

        `small`: fn writes a few rows (see `run`). The file locked when it begins, nothing has
        been written, and the transaction takes its turn on the store's thread."""

        def job(conn: Connection) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        try:
            return await self.run(job, small=small)
        finally:
            self._fold_soon()

    def _fold_soon(self) -> None:
        """After a write: the log is folded into the file beside the store's work, unless a fold
        was asked for a moment ago (the next write asks again; closing folds what is left)."""
        now = time.monotonic()
        if self._folding or self._held or self._closed or self._damaged is not None or now - self._folded_at < FOLD_SECONDS:
            return
        self._folding, self._folded_at = True, now
        try:
            done = asyncio.get_running_loop().run_in_executor(self._probes, self._fold)
        except RuntimeError:  # the probes' thread has ended: the store is closing
            self._folding = False
            return
        done.add_done_callback(lambda _: setattr(self, "_folding", False))

    def _fold(self) -> None:
        # PASSIVE: what the log holds is copied into the file without waiting for the store's
        # connection, which goes on writing meanwhile (SQLite lets one fold run beside writes). The
        # log is written from its start again only by a write that begins once all of it is in
        # the file: what was written during a pass is folded by the next (a few, each shorter).
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=rw", uri=True, timeout=PURGE_WAIT_MS / 1000)
            try:
                before = -1
                for _ in range(FOLD_PASSES):
                    busy, logged, folded = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    if busy or (logged == before and folded >= logged):
                        return  # nothing was written during the last pass: all of it is in the file
                    before = logged
                # Written to all along (a busy moment): the last frames are folded with the writes
                # held for that moment only, so the next write begins the log again.
                conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()
            finally:
                conn.close()
        except sqlite3.Error as err:  # busy, or gone: the next write asks again, and the probes say what is wrong
            log.debug("%s: the write-ahead log was not folded (%s)", self.path.name, err)

    @contextlib.asynccontextmanager
    async def folds_held(self) -> AsyncIterator[None]:
        """No fold of the log runs in the block (one running is waited for): for what needs the log
        to itself, emptying it (purge_wal, the clean-up's check) or rewriting the file (VACUUM)."""
        self._held += 1
        try:
            with contextlib.suppress(RuntimeError):  # the probes' thread has ended: no fold runs any more
                await asyncio.get_running_loop().run_in_executor(self._probes, _nothing)
            yield
        finally:
            self._held -= 1

    async def purge_wal(self) -> None:
        """Fold the WAL into the file and empty it: old copies of deleted rows live on in WAL frames.

        A reader of another connection (a backup, the clean-up's check) holds the log: then it waits
        a moment only, not the connection's 10 s with every request of the store queued behind it,
        and the WAL stays for the next purge (each start runs one; the daily clean-up reports it)."""

        def purge(conn: Connection) -> None:
            conn.execute(f"PRAGMA busy_timeout={PURGE_WAIT_MS}")
            try:
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            finally:
                conn.execute(f"PRAGMA busy_timeout={int(BUSY_SECONDS * 1000)}")
            if busy:
                log.info("%s: a reader holds the write-ahead log; it is emptied by the next purge", self.path.name)

        # Folded beside the store's work first, the log leaves little for the purge to copy: the
        # store's thread is held for the last of it and the emptying (about 8 ms, not 50).
        async with self.folds_held():
            with contextlib.suppress(RuntimeError):  # the probes' thread has ended: the store is closing
                await asyncio.get_running_loop().run_in_executor(self._probes, self._fold)
            await self.run(purge)

    async def close(self) -> None:
        def shut(_: None) -> None:
            if self._conn is not None:
                try:
                    # Pages the chats freed go back to the disk when the server stops (a no-op for a
                    # file made before Kazma set auto_vacuum; the daily clean-up compacts that one).
                    self._conn.execute("PRAGMA incremental_vacuum").fetchall()
                except sqlite3.Error as err:  # busy with another process's write: the pages stay in the file
                    log.info("%s: free pages kept in the file at close (%s)", self.path.name, err)
                self._conn.close()
                self._conn = None

        await asyncio.to_thread(self._probes.shutdown, wait=True)
        self._closed = True
        async with self._gate:  # behind the requests still waiting for the thread to start
            link, self._link = self._link, None
        if link is not None:
            # After every request queued before (the thread serves them in order), then the thread
            # ends: aiosqlite's close has nothing left to close but a connection already closed.
            await _on_thread(link, shut, None)
            await link.close()
