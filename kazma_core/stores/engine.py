"""What every store runs on: a database that runs a whole function in one transaction.

Kazma's stores are written once, in the SQL that SQLite and PostgreSQL both speak
(``ON CONFLICT``, ``RETURNING``, parameters numbered ``$1 … $n``, bound from a sequence, the same
number where one value is used twice; :func:`marks` numbers a list of them). Both engines take
such a statement as written: nothing translates it. Where the two really differ, the engine says
it: the column types a migration's ``{text}``, ``{int}`` … slots stand for (:func:`ddl`), and the
few attributes and methods of :class:`Database` below. The engine under them is chosen by
one setting, ``database.url``: empty means the SQLite files of the data folder
(``stores/sqlite.py``), ``postgresql://...`` means one PostgreSQL database shared by any
number of replicas (``stores/postgres.py``). A store hands a whole function to
:meth:`Database.tx`; on PostgreSQL that function may run again when a concurrent
transaction of another replica conflicts with it, so it must not change anything
outside the connection that a second run would not set the same way.

A database that cannot be used (a file unreadable, its disk gone, the server away) is one
case on both engines: each engine raises its driver's errors of that kind as
:class:`DatabaseError`, a 503 ``store_unavailable`` that tells a person what to do, and
answers :meth:`Database.probe` for the health check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from kazma_core.catalogue import sentence
from kazma_core.catalogue.errors import Said
from kazma_core.errors import StoreUnavailable

T = TypeVar("T")
Params = Sequence[Any]  # the values of $1, $2 … in order
Row = Any  # sqlite3.Row, or postgres.Row: by position and by column name


class DatabaseError(StoreUnavailable):
    """A store's database cannot be used right now (a file unreadable, a disk gone, a server away).

    ``message`` is for the person whose request needed it; ``line(lang)`` (the database and why)
    is for a command's one line, ``str(err)`` that line in English for the operator's log. Why is
    either a catalogue sentence (``reason_id`` and its parameters) or the engine's own few words
    (``words``: the driver's text, what a probe found)."""

    def __init__(
        self, label: str, words: str | None = None, /, *, reason_id: str | None = None, needed: bool = False, **params: Any
    ) -> None:
        super().__init__(sentence("errors.store_down", "en"), message_id="store_down")
        self.label = label
        self.reason_id = reason_id or "db_problem"
        self.params = params if reason_id else {"problem": words}
        self.needed = needed  # kazma.db at start: nothing can run without it
        self.reason = self.said("en")
        self.args = (self.line("en"),)

    def said(self, lang: str) -> str:
        """Why it cannot be used, in this language (with what to do when the start needs it)."""
        why = sentence(f"errors.{self.reason_id}", lang, **self.params)
        return sentence("errors.db_needed", lang, reason=why) if self.needed else why

    def line(self, lang: str) -> str:
        return f"{self.label}: {self.said(lang)}"


class Cursor(Protocol):
    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    """A connection inside one transaction: rows read by position or by column name."""

    def execute(self, sql: str, parameters: Params = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Any, /) -> Cursor: ...


# What a small request (Database.run and tx, `small`) stores at most, about: its encoding, hashing and
# compressing cost little enough to be done on the event loop (a fraction of a millisecond).
SMALL_BYTES = 64 << 10


class Database(Protocol):
    """One store's database (a SQLite file, or a schema of a PostgreSQL database)."""

    dialect: str  # "sqlite" | "postgresql": for people and logs; the stores ask the engine below instead
    label: str  # how an operator knows it: "kazma.db", "PostgreSQL schema kazma"
    # Found wrong, it leaves the other stores usable (SQLite's files of their own), so an alert can
    # be stored in kazma.db; not so for schemas of one PostgreSQL server.
    alone: bool
    # Its transactions run one at a time, each holding the only write lock (SQLite): what one reads
    # cannot conflict with another's writes. Else (PostgreSQL, SERIALIZABLE) reads can conflict.
    serial: bool
    # What a SELECT ends with to lock the rows it read until the transaction ends ("" where `serial`).
    share_lock: str

    def octets(self, column: str) -> str:
        """SQL for the length of a text column in bytes (UTF-8)."""
        ...

    def json_equals(self, column: str, key: str, value: str) -> str:
        """SQL that is true when the JSON object in text `column` holds, at the top-level key the
        placeholder `key` names, the JSON value the placeholder `value` holds (as JSON text)."""
        ...

    async def run(self, fn: Callable[[Conn], T], *, small: bool = False) -> T:
        """Run fn with a connection (reads; a write here commits on its own).

        `small`: fn reads a few rows, or writes them in one statement, and may be run again whole
        if the engine finds the database locked before it could (SQLite runs such a request at
        once when its thread is idle: stores/sqlite.py)."""
        ...

    async def tx(self, fn: Callable[[Conn], T], *, small: bool = False) -> T:
        """Run fn in one transaction: all of it commits, or none of it. `small`: as for run,
        a transaction of a few rows."""
        ...

    async def purge_wal(self) -> None:
        """Make deleted rows unreadable from the database's files now (secure deletion)."""
        ...

    async def probe(self) -> str | None:
        """Read the database afresh, beside the store's own connection: None when it reads back
        and answers (within a few seconds), else what is wrong, in a few words. While a probe
        finds it wrong, the store's requests are refused with DatabaseError too."""
        ...

    def found_wrong(self, role: str, problem: str) -> Said:
        """What the operator reads (the log, the alert) when a probe finds it wrong: which, what the
        probe found, and what to do (a catalogue sentence); role is the store's, "chats", "steps" or "audit"."""
        ...

    async def close(self) -> None: ...


def marks(count: int, first: int = 1) -> str:
    """`count` placeholders numbered from `first`, ``$1, $2, $3``: an IN list or a row of VALUES
    whose length is known only when the statement runs."""
    return ", ".join([f"${k}" for k in range(first, first + count)])


def ddl(script: str, types: Mapping[str, str]) -> str:
    """A migration with its column types spelled by one engine: each slot (``{id}``, ``{int}``,
    ``{real}``, ``{blob}``, ``{text}``) filled from the engine's own words for it."""
    return script.format_map(types)


class NewerSchema(RuntimeError):
    """The database was made by a newer Kazma: this one would not know its tables."""

    def __init__(self, found: int, known: int, *, where_id: str, **where: Any) -> None:
        # where_id names the database: errors.newer_file (a SQLite file) or errors.newer_pg_schema
        self.where_id, self.where, self.found, self.known = where_id, where, found, known
        super().__init__(self.line("en"))

    def line(self, lang: str) -> str:
        """One line for a command, in its language."""
        where = sentence(f"errors.{self.where_id}", lang, **self.where)
        return sentence("errors.newer_schema", lang, where=where, found=self.found, known=self.known)
