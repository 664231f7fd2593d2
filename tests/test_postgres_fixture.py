"""The PostgreSQL the tests run against (tests/postgres.py): both ways of getting one, and never a skip."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.postgres import (
    DATABASE_PREFIX,
    ENV_URL,
    PostgresUnavailable,
    database_url,
    find_bindir,
    free_port,
    fresh_database,
    postgres_for_tests,
    private_server,
)

REPO = Path(__file__).resolve().parent.parent


def user_tables(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY table_name"
        ).fetchall()
    return [row[0] for row in rows]


def database_exists(admin_url: str, name: str) -> bool:
    with psycopg.connect(admin_url) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


def test_a_test_gets_an_empty_database_of_its_own(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        name = conn.execute("SELECT current_database()").fetchone()
    assert name is not None and name[0].startswith(DATABASE_PREFIX)
    assert user_tables(pg_url) == []


def test_two_fresh_databases_share_no_tables(pg_url: str, postgres_admin_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE TABLE chats (id text PRIMARY KEY)")
    with fresh_database(postgres_admin_url) as other:
        assert other != pg_url
        assert user_tables(other) == []
    assert user_tables(pg_url) == ["chats"]


def test_a_test_on_postgresql_gets_a_copy_of_kazmas_schema_of_its_own(
    pg_kazma_url: str, postgres_admin_url: str, kazma_template: str
) -> None:
    assert "users" in user_tables(pg_kazma_url)
    with psycopg.connect(pg_kazma_url) as conn:
        conn.execute("CREATE TABLE kazma.mine (id text PRIMARY KEY)")
        assert conn.execute("SELECT count(*) FROM kazma.users").fetchone() == (0,)
    with fresh_database(postgres_admin_url, template=kazma_template) as other:
        assert other != pg_kazma_url
        assert "users" in user_tables(other) and "mine" not in user_tables(other)
    assert "mine" in user_tables(pg_kazma_url)


def test_a_database_is_dropped_even_with_a_connection_left_open(postgres_admin_url: str) -> None:
    with fresh_database(postgres_admin_url) as url:
        name = url.rsplit("/", 1)[1]
        leftover = psycopg.connect(url)  # what a test that forgot to close its pool leaves behind
        assert database_exists(postgres_admin_url, name)
    try:
        assert not database_exists(postgres_admin_url, name)
        with pytest.raises(psycopg.OperationalError):
            leftover.execute("SELECT 1")
    finally:
        leftover.close()


def test_a_private_server_runs_when_no_server_is_named() -> None:
    """The path of a machine without KAZMA_TEST_DATABASE_URL, taken even where this run has it set."""
    with postgres_for_tests(None) as url:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT current_setting('listen_addresses'), current_setting('port')").fetchone()
        assert row is not None and row[0] == "127.0.0.1"
        port = int(row[1])
        with fresh_database(url) as fresh:
            assert user_tables(fresh) == []
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=5)
    assert port != 5432  # not the machine's own server


def test_a_private_server_leaves_no_folder_behind() -> None:
    with private_server() as server:
        assert (server.folder / "data" / "PG_VERSION").exists()
    assert not server.folder.exists()


def test_a_private_server_goes_when_the_test_run_is_killed() -> None:
    """A killed run (a timeout, SIGKILL) runs no teardown: its server was left holding a port and a folder."""
    run = ("import time\nfrom tests.postgres import private_server\n"
           "with private_server() as server:\n    print(server.folder, server.port, flush=True)\n    time.sleep(300)")
    child = subprocess.Popen([sys.executable, "-c", run], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    folder, port = child.stdout.readline().split()
    child.kill()
    child.wait()
    deadline = time.monotonic() + 30
    while Path(folder).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(folder).exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", connect_timeout=5)


def test_the_named_server_is_used_as_it_is(postgres_admin_url: str) -> None:
    with postgres_for_tests(postgres_admin_url) as url:
        assert url == postgres_admin_url


def test_a_named_server_that_does_not_answer_is_an_error_naming_the_variable() -> None:
    silent = f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"
    with pytest.raises(PostgresUnavailable, match=ENV_URL), postgres_for_tests(silent):
        pass


def test_no_binaries_is_an_error_saying_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(PostgresUnavailable, match="postgresql` package"):
        find_bindir(tmp_path)


def test_the_newest_installed_version_is_chosen(tmp_path: Path) -> None:
    for version in ("9.6", "15", "16"):
        (tmp_path / version / "bin").mkdir(parents=True)
        (tmp_path / version / "bin" / "initdb").touch()
    assert find_bindir(tmp_path) == tmp_path / "16" / "bin"


def test_a_database_url_keeps_everything_but_the_database() -> None:
    assert (database_url("postgresql://kazma:pw@db.internal:6432/kazma?sslmode=require", "kazma_t_1")
            == "postgresql://kazma:pw@db.internal:6432/kazma_t_1?sslmode=require")


def test_a_test_needing_postgres_fails_rather_than_skips_when_there_is_none() -> None:
    """Run in a pytest of its own, pointed at a server that does not answer."""
    env = {**os.environ, ENV_URL: f"postgresql://postgres@127.0.0.1:{free_port()}/postgres"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"tests/{Path(__file__).name}::test_a_test_gets_an_empty_database_of_its_own"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert run.returncode == 1, run.stdout
    assert "1 error" in run.stdout and "skipped" not in run.stdout
    assert f"{ENV_URL} names a PostgreSQL server the tests cannot use" in run.stdout
