"""A real PostgreSQL for the tests: the server KAZMA_TEST_DATABASE_URL names, or a private one.

The private server runs Debian's `postgresql` binaries (`make test` installs them when
missing) on a free port of 127.0.0.1, with trust authentication, in a temporary folder that
is removed when it stops, even when the test run is killed. PostgreSQL refuses to run as
root, so as root the binaries run as the user `postgres` (which Debian's package creates) on a
folder that user owns.

Each test that asks for one gets a fresh, empty database (`fresh_database`), dropped after it
with whatever connections it left open; or a copy of a database made once per run (`template`).
Nothing here skips: no server is an error saying why.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shlex
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

ENV_URL = "KAZMA_TEST_DATABASE_URL"
DEBIAN_ROOT = Path("/usr/lib/postgresql")
SUPERUSER = "postgres"
DATABASE_PREFIX = "kazma_t_"
# No test needs its data to survive a crash of the machine: the private server does not wait
# for the disk, so a commit costs what it costs in memory.
SPEED_OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
START_ATTEMPTS = 3


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL to test against; the message says what to install or set."""


@dataclass(frozen=True)
class PrivateServer:
    """A PostgreSQL started for this test run; `folder` holds data/, its socket and server.log."""

    folder: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres"


def find_bindir(root: Path = DEBIAN_ROOT) -> Path:
    """The bin folder of the newest PostgreSQL installed under Debian's versioned folders."""
    found = [initdb.parent for initdb in root.glob("*/bin/initdb")]
    if not found:
        raise PostgresUnavailable(
            f"No PostgreSQL binaries in {root}/*/bin: install Debian's `postgresql` package "
            f"(`make test` does), or set {ENV_URL}=postgresql://USER@HOST:PORT/DB to test against a running server."
        )
    return max(found, key=lambda bindir: _version(bindir.parent.name))


@contextlib.contextmanager
def postgres_for_tests(named: str | None) -> Iterator[str]:
    """A superuser's URL: the server `named` (the value of KAZMA_TEST_DATABASE_URL) if set, else a private one."""
    if named:
        check_reachable(named)
        yield named
    else:
        with private_server() as server:
            yield server.url


def check_reachable(url: str) -> None:
    try:
        with psycopg.connect(url, connect_timeout=10):
            pass
    except psycopg.Error as error:
        first_line = str(error).strip().splitlines()[0]
        raise PostgresUnavailable(
            f"{ENV_URL} names a PostgreSQL server the tests cannot use ({first_line}). "
            f"Start it, or unset {ENV_URL} so that the tests start a private one."
        ) from error


@contextlib.contextmanager
def private_server() -> Iterator[PrivateServer]:
    """Start a PostgreSQL of our own from Debian's binaries. It is stopped and its folder removed
    when the block ends, or when this process dies, however it dies (see `_watch`)."""
    bindir = find_bindir()
    owner = _server_owner()
    # Not pytest's tmp_path: it is private to root, and the server's user must reach the folder.
    folder = Path(tempfile.mkdtemp(prefix="kazma-pg-"))
    as_owner: list[str] = []
    if owner is not None:
        os.chown(folder, owner.pw_uid, owner.pw_gid)
        as_owner = ["runuser", "-u", SUPERUSER, "--"]
    watchdog = _watch(as_owner, bindir, folder)
    try:
        _run([*as_owner, str(bindir / "initdb"), "-D", str(folder / "data"), "-A", "trust", "-U", SUPERUSER,
              "-E", "UTF8", "--locale=C", "--no-sync"], "initdb")
        yield PrivateServer(folder, _start(as_owner, bindir, folder))
    finally:
        watchdog.communicate(timeout=120)  # closes its pipe: it stops the server and removes the folder
        if folder.exists():
            stop_log = folder / "stop.log"
            said = stop_log.read_text(errors="replace") if stop_log.exists() else "no stop.log"
            raise PostgresUnavailable(f"The private PostgreSQL in {folder} did not stop: {said}")


@contextlib.contextmanager
def fresh_database(admin_url: str, template: str | None = None) -> Iterator[str]:
    """Create an empty database (a copy of the database `template` names, when given), yield its URL,
    then drop it (connections left open are ended first)."""
    name = DATABASE_PREFIX + secrets.token_hex(6)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        # template0 by default, because copying template1 fails while anyone (another test run
        # sharing the server) is connected to it.
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {} ENCODING 'UTF8'").format(
            sql.Identifier(name), sql.Identifier(template or "template0")))
    try:
        yield database_url(admin_url, name)
    finally:
        drop_database(admin_url, name)


def close_to_connections(admin_url: str, name: str) -> None:
    """No connection to the database `name` from now on, those left open ended: it can then be dropped,
    or copied (only a database nobody is connected to can be)."""
    with psycopg.connect(admin_url, autocommit=True) as admin:
        # Closed to new connections first, so that a pool reconnecting cannot slip in between.
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(sql.Identifier(name)))
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))


def drop_database(admin_url: str, name: str) -> None:
    close_to_connections(admin_url, name)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(name)))


def database_url(url: str, name: str) -> str:
    """`url` with its database replaced by `name` (user, host, port and options kept)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(as_owner: list[str], bindir: Path, folder: Path) -> int:
    log = folder / "server.log"
    refused = ""
    # A free port can be taken by another process before the server binds it (other test runs
    # share this machine): try another.
    for _ in range(START_ATTEMPTS):
        port = free_port()
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 {SPEED_OPTIONS}"
        # -l: with its output on our pipe, the server would keep subprocess.run waiting until it stops.
        started = subprocess.run([*as_owner, str(bindir / "pg_ctl"), "-D", str(folder / "data"), "-l", str(log),
                                  "-o", options, "-w", "-t", "60", "start"],
                                 capture_output=True, text=True, check=False)
        if started.returncode == 0:
            return port
        refused = started.stderr.strip()
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else refused
    raise PostgresUnavailable(f"The private PostgreSQL in {folder} did not start ({START_ATTEMPTS} ports tried):\n{tail}")


def _server_owner() -> pwd.struct_passwd | None:
    """The user the server runs as when we are root (PostgreSQL refuses root); None otherwise."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SUPERUSER)
    except KeyError:
        raise PostgresUnavailable(
            f"PostgreSQL will not run as root, and there is no user `{SUPERUSER}` to run it as "
            f"(Debian's `postgresql` package creates it); or set {ENV_URL}."
        ) from None


def _watch(as_owner: list[str], bindir: Path, folder: Path) -> subprocess.Popen[bytes]:
    """A process, in a session of its own, that waits for its end of a pipe from us to close,
    then stops the server and removes its folder. The pipe closes when we close it, and also
    when this process dies: a test run killed by a timeout or SIGKILL runs no teardown, and
    would otherwise leave a server holding a port and a folder for good."""
    stop = shlex.join([*as_owner, str(bindir / "pg_ctl"), "-D", str(folder / "data"), "-m", "immediate", "-w", "stop"])
    quoted = shlex.quote(str(folder))
    # A server that never started makes pg_ctl complain: what counts is that no server is left.
    script = (f"cat >/dev/null; {stop} >{quoted}/stop.log 2>&1; "
              f"[ -e {quoted}/data/postmaster.pid ] || rm -rf {quoted}")
    return subprocess.Popen(["sh", "-c", script], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise PostgresUnavailable(f"{what} failed (exit {done.returncode}): {(done.stderr or done.stdout).strip()}")


def _version(folder_name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in folder_name.split(".") if part.isdigit())
