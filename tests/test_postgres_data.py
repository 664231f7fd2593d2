"""Backups, migration bundles and the daily clean-up on PostgreSQL, and moving between the engines."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from kazma_core.core import Core
from kazma_core.maintenance import DAY, MIN_FREE_BYTES
from kazma_core.settings import Settings, load_settings
from kazma_core.stores.pg_copy import row_counts
from tests.conftest import make_settings
from tests.test_backup import AUDIT, CHATS, CHECKPOINTS, WRITES, backup, rows, run, seed
from tests.test_maintenance import NOW, fill, new_chat, put_steps

TRANSCRIPT = "SELECT * FROM transcript ORDER BY id"
OVERRIDES = "SELECT key, value FROM settings_overrides ORDER BY key"
# What a move between engines must carry whole, table by table.
CARRIED = [("kazma", CHATS), ("kazma", CHECKPOINTS), ("kazma", WRITES), ("kazma", TRANSCRIPT),
           ("kazma", OVERRIDES), ("kazma", "SELECT id, name, role FROM users ORDER BY id"), ("kazma_audit", AUDIT)]
FILE_OF = {"kazma": "kazma.db", "kazma_audit": "time_travel_audit.db"}


def pg_rows(url: str, schema: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        conn.execute(f"SET search_path TO {schema}")
        return [tuple(r) for r in conn.execute(query).fetchall()]


def on_pg(tmp_path: Path, url: str, name: str = "data") -> Settings:
    return make_settings(tmp_path / name, database={"url": url})


async def send(settings: Settings, chat_id: str, text: str) -> str:
    core = await Core.open(settings)
    try:
        return (await core.turns.send(chat_id, text)).reply
    finally:
        await core.close()


# backups ---------------------------------------------------------------------------------------------
def test_a_backup_on_postgres_is_the_same_archive_made_from_the_schemas_never_the_steps(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = on_pg(tmp_path, pg_url)
    asyncio.run(seed(settings))
    assert pg_rows(pg_url, "kazma_steps", "SELECT count(*) FROM steps")[0][0] > 0
    monkeypatch.setenv("KAZMA_DATABASE__URL", pg_url)
    path = backup(settings.data_dir, tmp_path / "backups", capsys)
    assert sorted(p.name for p in path.iterdir()) == ["kazma.db", "manifest.json", "time_travel_audit.db"]
    for schema, query in CARRIED:
        assert rows(path / FILE_OF[schema], query) == pg_rows(pg_url, schema, query) != [], query
    with contextlib.closing(sqlite3.connect(path / "kazma.db")) as conn:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    # Nothing of the data folder's own (empty) SQLite files was copied instead.
    assert not (settings.data_dir / "kazma.db").exists()


def test_a_restore_on_postgres_puts_the_backup_back_and_a_chat_goes_on(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = on_pg(tmp_path, pg_url)
    ids = asyncio.run(seed(settings))
    monkeypatch.setenv("KAZMA_DATABASE__URL", pg_url)
    path = backup(settings.data_dir, tmp_path / "backups", capsys)

    async def change() -> str:
        core = await Core.open(settings)
        try:
            owner = await core.store.users.user_by_id(ids["owner"])
            assert owner is not None
            await core.chats.delete(owner, ids["gone"])
            later = await core.chats.create(owner, "later")
            await core.turns.send(later.id, "hello")
            return later.id
        finally:
            await core.close()

    later = asyncio.run(change())
    code, out, err = run(["backup", "restore", str(path), "--data-dir", str(settings.data_dir)], capsys)
    assert code == 0, err
    assert "into the PostgreSQL database" in out.splitlines()[0]
    assert out.splitlines()[1] == "  Saved steps of chats the backup does not have: 1 step of 1 chat deleted"
    for schema, query in CARRIED:
        assert pg_rows(pg_url, schema, query) == rows(path / FILE_OF[schema], query), query
    left = f"SELECT count(*) FROM steps WHERE chat_id IN ('{later}', '{ids['gone']}')"
    assert pg_rows(pg_url, "kazma_steps", left) == [(0,)]
    before = max(r[0] for r in pg_rows(pg_url, "kazma", TRANSCRIPT))
    # The chat deleted after the backup is back with its memory, and its transcript goes on past the loaded ids.
    assert "4711-XK" in asyncio.run(send(settings, ids["gone"], "what is the code?"))
    assert min(r[0] for r in pg_rows(pg_url, "kazma", TRANSCRIPT) if r[0] > before) == before + 1


def test_a_restore_on_postgres_waits_for_a_turn_another_replica_holds(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = on_pg(tmp_path, pg_url)
    ids = asyncio.run(seed(settings))
    monkeypatch.setenv("KAZMA_DATABASE__URL", pg_url)
    path = backup(settings.data_dir, tmp_path / "backups", capsys)
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "INSERT INTO kazma.leases (chat_id, holder, purpose, expires_at) VALUES (%s, 'other-host:1:x', 'turn', 4e9)",
            (ids["tea"],),
        )
        conn.execute("DELETE FROM kazma.chats WHERE id = %s", (ids["gone"],))
    code, _, err = run(["backup", "restore", str(path), "--data-dir", str(settings.data_dir)], capsys)
    assert code == 1 and f"A turn is still running in chat {ids['tea']}" in err and "Nothing was changed." in err
    assert len(err.strip().splitlines()) == 1
    assert ids["gone"] not in {r[0] for r in pg_rows(pg_url, "kazma", CHATS)}  # the refused restore wrote nothing


# moving between the engines ------------------------------------------------------------------------
def test_a_deployment_moves_from_sqlite_to_postgresql_and_back(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old = make_settings(tmp_path / "data")
    ids = asyncio.run(seed(old))
    bundle = tmp_path / "to-pg.tar.gz"
    code, out, err = run(["migrate", "export", str(bundle), "--data-dir", str(old.data_dir)], capsys)
    assert code == 0, err

    # The same data folder, now with the setting: the old SQLite files there are left alone.
    monkeypatch.setenv("KAZMA_DATABASE__URL", pg_url)
    code, out, err = run(["migrate", "import", str(bundle), "--data-dir", str(old.data_dir)], capsys)
    assert code == 0, err
    assert "into the PostgreSQL database" in out.splitlines()[0]
    assert out.splitlines()[1].startswith("  3 chats, ")
    for schema, query in CARRIED:
        assert pg_rows(pg_url, schema, query) == rows(old.data_dir / FILE_OF[schema], query), query
    assert not any(row_counts(pg_url, ["kazma_steps"]).values())  # steps do not travel
    on_postgres = load_settings(data_dir=str(old.data_dir))
    assert on_postgres.database.url.get_secret_value() == pg_url
    assert on_postgres.time_travel.retention_days == 7  # read from the overrides, now in PostgreSQL
    assert "tea is green" in asyncio.run(send(on_postgres, ids["tea"], "and now?"))
    moved = pg_rows(pg_url, "kazma", TRANSCRIPT)
    assert len(moved) > len(rows(old.kazma_db, TRANSCRIPT))

    back = tmp_path / "to-sqlite.tar.gz"
    code, _, err = run(["migrate", "export", str(back), "--data-dir", str(old.data_dir)], capsys)
    assert code == 0, err
    monkeypatch.delenv("KAZMA_DATABASE__URL")
    new = tmp_path / "back"
    code, _, err = run(["migrate", "import", str(back), "--data-dir", str(new)], capsys)
    assert code == 0, err
    for schema, query in CARRIED:
        assert rows(new / FILE_OF[schema], query) == pg_rows(pg_url, schema, query), query
    assert "tea is green" in asyncio.run(send(load_settings(data_dir=str(new)), ids["tea"], "and again?"))
    assert rows(new / "kazma.db", TRANSCRIPT)[len(moved)][0] == moved[-1][0] + 1


def test_an_import_into_a_database_that_holds_a_kazma_is_refused_in_one_line(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    old = make_settings(tmp_path / "old")
    asyncio.run(seed(old))
    bundle = tmp_path / "kazma.tar.gz"
    assert run(["migrate", "export", str(bundle), "--data-dir", str(old.data_dir)], capsys)[0] == 0
    asyncio.run(seed(on_pg(tmp_path, pg_url)))
    chats = pg_rows(pg_url, "kazma", CHATS)
    monkeypatch.setenv("KAZMA_DATABASE__URL", pg_url)
    code, out, err = run(["migrate", "import", str(bundle), "--data-dir", str(tmp_path / "new")], capsys)
    assert code == 1 and out == ""
    assert err.startswith("kazma: The database of KAZMA_DATABASE__URL (database.url) already holds a Kazma (")
    assert err.strip().endswith("Nothing was changed.") and len(err.strip().splitlines()) == 1
    assert pg_rows(pg_url, "kazma", CHATS) == chats


# the daily clean-up ----------------------------------------------------------------------------------
async def test_a_clean_up_pass_on_postgres_deletes_sweeps_and_vacuums(tmp_path: Path, pg_url: str) -> None:
    from kazma_core.maintenance import Maintenance

    core = await Core.open(on_pg(tmp_path, pg_url))
    try:
        owner = await core.store.users.add_user("olga", "owner")
        chat = await new_chat(core, owner)
        older = await put_steps(core, chat, saved_at=NOW - 40 * DAY, steps=3, tag="older")
        kept = await put_steps(core, chat, saved_at=NOW, steps=1, tag="kept")
        await put_steps(core, "no-such-chat", saved_at=NOW, steps=2, tag="orphan")
        report = await Maintenance.of(core, now=lambda: NOW, orphan_grace=0.0).run_pass(by_hand=True)
    finally:
        await core.close()
    assert report.where == "PostgreSQL schema kazma_steps"
    assert (report.expired_steps, report.orphan_steps, report.orphan_chats) == (3, 2, 1)
    assert {r[0] for r in pg_rows(pg_url, "kazma_steps", "SELECT id FROM steps")} == set(kept)
    assert not set(older) & {r[0] for r in pg_rows(pg_url, "kazma_steps", "SELECT id FROM steps")}
    check = report.verification
    assert check is not None and check.passed and not check.scanned and check.samples == 0
    assert report.disk_bytes_before > 0 and report.file_bytes > 0
    vacuumed = pg_rows(pg_url, "kazma_steps", "SELECT count(*) FROM pg_stat_user_tables "
                       "WHERE schemaname = 'kazma_steps' AND last_vacuum IS NOT NULL")
    assert vacuumed[0][0] > 0


async def test_a_pass_on_postgres_compacts_the_steps_schema_when_a_quarter_and_8_mb_are_free(
    tmp_path: Path, pg_url: str
) -> None:
    from kazma_core.maintenance import Maintenance

    core = await Core.open(on_pg(tmp_path, pg_url))
    try:
        owner = await core.store.users.add_user("olga", "owner")
        await fill(core, owner, 10, NOW - 40 * DAY)
        await fill(core, owner, 4, NOW)
        report = await Maintenance.of(core, now=lambda: NOW, orphan_grace=0.0).run_pass()
    finally:
        await core.close()
    assert report.free_bytes >= MIN_FREE_BYTES and report.compacted
    assert report.disk_bytes_freed >= MIN_FREE_BYTES
    assert report.verification is not None and report.verification.passed


def test_kazma_maintain_on_postgres_says_what_it_did_and_what_it_cannot_check(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = on_pg(tmp_path, pg_url)
    asyncio.run(seed(settings))
    monkeypatch.setenv("KAZMA_DATABASE__URL", pg_url)
    code, out, err = run(["maintain", "--data-dir", str(settings.data_dir)], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Clean-up of PostgreSQL schema kazma_steps in postgresql://")
    assert any(line.startswith("  PostgreSQL schema kazma_steps on disk: ") for line in lines)
    assert any(line.startswith("  Checks passed: 0 of 0 deleted steps left") and line.endswith(
        "and VACUUM ran. The text of deleted messages is not looked for in the files: they are the PostgreSQL server's"
    ) for line in lines), out
    assert "snapshots.db" not in out
