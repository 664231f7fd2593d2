"""A database Kazma cannot use stops every command with one line naming KAZMA_DATABASE__URL, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from kazma_core.stores.app_schema import MIGRATIONS
from tests.postgres import free_port

KAZMA = str(Path(sys.executable).with_name("kazma"))
SETTING = "KAZMA_DATABASE__URL (database.url)"


def kazma(url: str, tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KAZMA_DATABASE__URL": url, "KAZMA_CONFIG": str(tmp_path / "none.toml")}
    return subprocess.run([KAZMA, *argv, "--data-dir", str(tmp_path / "data")], env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def assert_one_line(done: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kazma: ") and SETTING in lines[0], done.stderr
    assert all(part in lines[0] for part in expected), lines[0]
    assert "Traceback" not in done.stderr + done.stdout and "Kazma is starting" not in done.stdout


@pytest.mark.parametrize(("url", "expected"), [
    ("mysql://kazma@db/kazma", "must start with postgresql:// (it is 'mysql://kazma@db/kazma')"),
    ("postgresql://a b@db:x/kazma", "is not a valid PostgreSQL URL (unexpected spaces found in"),
])
def test_serve_refuses_a_malformed_url(tmp_path: Path, url: str, expected: str) -> None:
    assert_one_line(kazma(url, tmp_path, "serve", "--port", str(free_port())), expected)


def test_serve_stops_when_the_server_does_not_answer(tmp_path: Path) -> None:
    url = f"postgresql://kazma:secret@127.0.0.1:{free_port()}/kazma"
    done = kazma(url, tmp_path, "serve", "--port", str(free_port()))
    assert_one_line(done, "Kazma cannot use the PostgreSQL server of", "kazma:***@127.0.0.1", "Connection refused")
    assert "secret" not in done.stderr


def test_serve_stops_when_the_server_refuses_the_login(tmp_path: Path, pg_url: str) -> None:
    """The tests' server trusts every password, so the refusal here is of a role it does not know: the
    same path as a wrong password (the server ends the connection at login, with its reason)."""
    parts = urlsplit(pg_url)
    url = f"postgresql://nobody:wrong@{parts.hostname}:{parts.port}{parts.path}"
    done = kazma(url, tmp_path, "serve", "--port", str(free_port()))
    assert_one_line(done, "Kazma cannot use the PostgreSQL server of", 'role "nobody" does not exist')
    assert "wrong" not in done.stderr


def test_serve_refuses_a_database_made_by_a_newer_kazma(tmp_path: Path, pg_url: str) -> None:
    newer = len(MIGRATIONS) + 1
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE SCHEMA kazma")
        conn.execute("CREATE TABLE kazma.kazma_version (version BIGINT NOT NULL)")
        conn.execute("INSERT INTO kazma.kazma_version VALUES (%s)", (newer,))
    done = kazma(pg_url, tmp_path, "serve", "--port", str(free_port()))
    assert_one_line(done, f"PostgreSQL schema kazma of the database {SETTING} names is at schema version {newer}",
                    "Run that newer Kazma, or restore a backup made by this version.")


@pytest.mark.parametrize("argv", [
    ["maintain"], ["backup", "create"], ["migrate", "export", "bundle.tar.gz"], ["users", "add", "ann"],
])
def test_every_data_command_stops_in_one_line_when_the_server_does_not_answer(tmp_path: Path, argv: list[str]) -> None:
    url = f"postgresql://kazma@127.0.0.1:{free_port()}/kazma"
    assert_one_line(kazma(url, tmp_path, *argv), "Kazma cannot use the PostgreSQL server of", "Connection refused")
