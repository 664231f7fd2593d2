"""Backups and migration bundles: what they hold (never the steps), what they refuse, what they bring back."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import sqlite3
import tarfile
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest

from kazma_core.core import Core
from kazma_core.settings import Settings, load_settings
from kazma_server.cli import main
from kazma_ui.thread_rewind import RewindService
from tests.conftest import make_settings
from tests.http_server import serve_kazma

DATABASES = ["kazma.db", "time_travel_audit.db"]
CHATS = "SELECT id, owner_id, title, created_at, last_turn, forked_from_chat, forked_from_step FROM chats ORDER BY id"
CHECKPOINTS = "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints ORDER BY 1, 2, 3"
WRITES = "SELECT thread_id, checkpoint_id, task_id, idx, channel, value FROM writes ORDER BY 1, 2, 3, 4"
AUDIT = "SELECT * FROM audit ORDER BY id"


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute(sql).fetchall()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folder_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


async def seed(settings: Settings, *, delete_gone: bool = False, forget_tea: bool = False) -> dict[str, str]:
    """Two chats with turns, a fork (an audit row), a stored setting; optionally a chat deleted, one forgotten."""
    core = await Core.open(settings)
    try:
        owner = await core.store.users.add_user("olga", "owner")
        tea = await core.chats.create(owner, "tea")
        await core.turns.send(tea.id, "remember: tea is green")
        await core.turns.send(tea.id, "calc 6*7")
        gone = await core.chats.create(owner, "gone")
        await core.turns.send(gone.id, "remember: the door code is 4711-XK")
        step = (await core.snapshots.list_steps(tea.id))[1].id
        fork = await RewindService(core).fork(owner, "test", tea.id, step)
        await core.store.settings.set_override("time_travel.retention_days", 7)
        if delete_gone:
            await core.chats.delete(owner, gone.id)
        if forget_tea:
            await core.chats.forget(owner, tea.id)
        return {"tea": tea.id, "gone": gone.id, "fork": fork.chat_id, "owner": owner.id}
    finally:
        await core.close()


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def backup(data: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    code, stdout, _ = run(["backup", "create", "--out", str(out), "--data-dir", str(data)], capsys)
    assert code == 0
    return Path(stdout.splitlines()[0].removeprefix("Backup written to "))


# backups --------------------------------------------------------------------------------------------
def test_a_backup_holds_the_three_databases_and_never_the_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = make_settings(tmp_path / "data")
    asyncio.run(seed(settings))
    assert rows(settings.snapshots_db, "SELECT count(*) FROM steps")[0][0] > 0
    path = backup(settings.data_dir, tmp_path / "backups", capsys)
    assert path.parent == tmp_path / "backups" and path.name.startswith("kazma-backup-")
    assert sorted(p.name for p in path.iterdir()) == [DATABASES[0], "manifest.json", DATABASES[1]]
    assert not list((tmp_path / "backups").rglob("snapshots.db*"))
    manifest = orjson.loads((path / "manifest.json").read_bytes())
    assert manifest["kind"] == "kazma-backup" and manifest["format_version"] == 2
    assert manifest["kazma_version"] == "0.1.0" and manifest["created_at"].endswith("Z")
    assert {name: e["sha256"] for name, e in manifest["files"].items()} == {n: sha(path / n) for n in DATABASES}
    data = settings.data_dir
    assert rows(path / "kazma.db", CHATS) == rows(data / "kazma.db", CHATS)
    assert rows(path / "kazma.db", CHECKPOINTS) == rows(data / "kazma.db", CHECKPOINTS) != []
    assert rows(path / "time_travel_audit.db", AUDIT) == rows(data / "time_travel_audit.db", AUDIT) != []


async def test_a_backup_is_taken_while_the_server_runs_but_a_restore_is_refused(
    settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with serve_kazma(settings) as server:
        owner, _ = await server.add_user("olga", "owner")
        chat = await server.core.chats.create(owner, "busy")
        data = str(settings.data_dir)
        turn = asyncio.create_task(server.core.turns.send(chat.id, "steps 30"))
        code = await asyncio.to_thread(main, ["backup", "create", "--out", str(tmp_path / "b"), "--data-dir", data])
        await turn
        assert code == 0
        path = Path(capsys.readouterr().out.splitlines()[0].removeprefix("Backup written to "))
        assert [c[2] for c in rows(path / "kazma.db", CHATS)] == ["busy"]
        assert await asyncio.to_thread(main, ["backup", "restore", str(path), "--data-dir", data]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"kazma: Kazma is running on {settings.data_dir} (process ")
        assert "Stop it first" in err


def test_a_restore_puts_the_backup_back_and_drops_the_steps_of_chats_it_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = make_settings(tmp_path / "data")
    ids = asyncio.run(seed(settings))
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
    code, out, _ = run(["backup", "restore", str(path), "--data-dir", str(settings.data_dir)], capsys)
    assert code == 0
    assert out.splitlines()[1] == "  Saved steps of chats the backup does not have: 1 step of 1 chat deleted"
    assert rows(settings.kazma_db, CHATS) == rows(path / "kazma.db", CHATS)
    assert rows(settings.kazma_db, CHECKPOINTS) == rows(path / "kazma.db", CHECKPOINTS)
    left = f"SELECT count(*) FROM steps WHERE chat_id IN ('{later}', '{ids['gone']}')"
    assert rows(settings.snapshots_db, left) == [(0,)]

    async def resume() -> str:
        core = await Core.open(load_settings(data_dir=str(settings.data_dir)))
        try:
            return (await core.turns.send(ids["gone"], "what is the code?")).reply
        finally:
            await core.close()

    assert "4711-XK" in asyncio.run(resume())  # the chat deleted after the backup is back, with its memory


@pytest.mark.parametrize("damage", ["changed byte", "missing file", "no manifest", "newer format"])
def test_a_restore_refuses_a_damaged_backup(tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    settings = make_settings(tmp_path / "data")
    asyncio.run(seed(settings))
    path = backup(settings.data_dir, tmp_path / "backups", capsys)
    if damage == "changed byte":
        raw = bytearray((path / "kazma.db").read_bytes())
        raw[len(raw) // 2] ^= 0x01
        (path / "kazma.db").write_bytes(bytes(raw))
        expected = "is damaged: kazma.db does not match the checksum in its manifest. Nothing was restored"
    elif damage == "missing file":
        (path / "time_travel_audit.db").unlink()
        expected = "is damaged: time_travel_audit.db is missing. Nothing was restored"
    elif damage == "no manifest":
        (path / "manifest.json").unlink()
        expected = "has no manifest.json: it is not a Kazma backup folder, or it is incomplete."
    else:
        manifest = orjson.loads((path / "manifest.json").read_bytes())
        (path / "manifest.json").write_bytes(orjson.dumps({**manifest, "format_version": 3, "kazma_version": "9.0.0"}))
        expected = "was written by a newer Kazma (9.0.0, format 3); this Kazma (0.1.0) reads format 2 or older."
    before = {name: sha(settings.data_dir / name) for name in DATABASES}
    code, _, err = run(["backup", "restore", str(path), "--data-dir", str(settings.data_dir)], capsys)
    assert code == 1
    assert err.startswith(f"kazma: The backup {path} ") and expected in err
    assert {name: sha(settings.data_dir / name) for name in DATABASES} == before


def test_a_restore_waits_for_a_turn_that_still_holds_its_chat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = make_settings(tmp_path / "data")
    ids = asyncio.run(seed(settings))
    path = backup(settings.data_dir, tmp_path / "backups", capsys)
    with contextlib.closing(sqlite3.connect(settings.kazma_db)) as conn, conn:
        conn.execute(
            "INSERT INTO leases (chat_id, holder, purpose, expires_at) VALUES (?, 'other-host:1:x', 'turn', 4e9)",
            (ids["tea"],),
        )
    code, _, err = run(["backup", "restore", str(path), "--data-dir", str(settings.data_dir)], capsys)
    assert code == 1 and f"A turn is still running in chat {ids['tea']}" in err and "Nothing was changed." in err


# migration bundles -----------------------------------------------------------------------------------
def export(data: Path, file: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run(["migrate", "export", str(file), "--data-dir", str(data)], capsys)
    assert code == 0, err
    return out


def test_a_migration_round_trip_brings_chats_checkpoints_and_audit_but_no_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = make_settings(tmp_path / "old")
    ids = asyncio.run(seed(old))
    bundle = tmp_path / "kazma.tar.gz"
    out = export(old.data_dir, bundle, capsys)
    assert out.startswith(f"Migration bundle written to {bundle}")
    with tarfile.open(bundle) as tar:
        assert tar.getnames() == ["manifest.json", "time_travel_audit.db", "kazma.db", "settings.json"]
    new = tmp_path / "new"
    code, out, _ = run(["migrate", "import", str(bundle), "--data-dir", str(new)], capsys)
    assert code == 0
    assert out.splitlines()[1] == f"  3 chats, {len(rows(old.kazma_db, CHECKPOINTS))} checkpoints, 1 audit row, 1 settings override"
    assert out.splitlines()[-1] == "  Saved steps do not travel: Time Travel starts empty here."
    for name, sql in (("kazma.db", CHATS), ("kazma.db", CHECKPOINTS), ("kazma.db", WRITES),
                      ("time_travel_audit.db", AUDIT), ("kazma.db", "SELECT * FROM transcript ORDER BY id"),
                      ("kazma.db", "SELECT key, value FROM settings_overrides")):
        assert rows(new / name, sql) == rows(old.data_dir / name, sql), (name, sql)
    assert not (new / "snapshots.db").exists()
    settings = load_settings(data_dir=str(new))
    assert settings.time_travel.retention_days == 7

    async def use() -> tuple[list[Any], str]:
        core = await Core.open(settings)
        try:
            threads = await core.snapshots.threads()
            return threads, (await core.turns.send(ids["tea"], "and now?")).reply
        finally:
            await core.close()

    threads, reply = asyncio.run(use())
    assert threads == [] and "tea is green" in reply


def test_a_chat_deleted_or_forgotten_before_export_stays_gone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = make_settings(tmp_path / "old")
    ids = asyncio.run(seed(old, delete_gone=True, forget_tea=True))
    bundle = tmp_path / "kazma.tar.gz"
    export(old.data_dir, bundle, capsys)
    new = tmp_path / "new"
    assert run(["migrate", "import", str(bundle), "--data-dir", str(new)], capsys)[0] == 0
    assert ids["gone"] not in {c[0] for c in rows(new / "kazma.db", CHATS)}
    assert rows(new / "kazma.db", f"SELECT count(*) FROM transcript WHERE chat_id = '{ids['gone']}'") == [(0,)]
    assert ids["gone"] not in {c[0] for c in rows(new / "kazma.db", CHECKPOINTS)}
    assert rows(new / "kazma.db", f"SELECT text FROM facts WHERE chat_id = '{ids['tea']}'") == []
    # Not a trace of the deleted chat in the bundle or the new folder, free pages included.
    assert b"4711-XK" not in bundle.read_bytes() and b"4711-XK" not in folder_bytes(new)
    with tarfile.open(bundle) as tar:
        assert all(b"4711-XK" not in tar.extractfile(m).read() for m in tar.getmembers())  # type: ignore[union-attr]


def repack(bundle: Path, change: dict[str, bytes]) -> None:
    """Rewrite a bundle with some members' bytes replaced (the manifest left as it was unless replaced)."""
    with tarfile.open(bundle) as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar.getmembers()]  # type: ignore[union-attr]
    with tarfile.open(bundle, "w:gz") as tar:
        for name, given in members:
            data = change.get(name, given)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_import_refuses_a_bundle_from_a_newer_kazma(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = make_settings(tmp_path / "old")
    asyncio.run(seed(old))
    bundle = tmp_path / "kazma.tar.gz"
    export(old.data_dir, bundle, capsys)
    with tarfile.open(bundle) as tar:
        manifest = orjson.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
    repack(bundle, {"manifest.json": orjson.dumps({**manifest, "format_version": 9, "kazma_version": "2.4.0"})})
    new = tmp_path / "new"
    code, _, err = run(["migrate", "import", str(bundle), "--data-dir", str(new)], capsys)
    assert code == 1
    assert err.strip() == (
        f"kazma: The bundle {bundle} was written by a newer Kazma (2.4.0, format 9); this Kazma (0.1.0) reads "
        "format 2 or older. Upgrade Kazma, then try again. Nothing was changed."
    )
    assert not (new / "kazma.db").exists()


@pytest.mark.parametrize("damage", ["flipped byte", "cut short", "member changed", "not a bundle"])
def test_import_refuses_a_damaged_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    old = make_settings(tmp_path / "old")
    asyncio.run(seed(old))
    bundle = tmp_path / "kazma.tar.gz"
    export(old.data_dir, bundle, capsys)
    raw = bytearray(bundle.read_bytes())
    if damage == "flipped byte":
        raw[len(raw) // 2] ^= 0x20
        bundle.write_bytes(bytes(raw))
    elif damage == "cut short":
        bundle.write_bytes(bytes(raw[: len(raw) * 2 // 3]))
    elif damage == "member changed":
        changed = bytearray((old.data_dir / "kazma.db").read_bytes())
        repack(bundle, {"kazma.db": bytes(changed[:-1]) + bytes([changed[-1] ^ 1])})
    else:
        bundle.write_bytes(b"just some text, not a bundle\n")
    new = tmp_path / "new"
    code, _, err = run(["migrate", "import", str(bundle), "--data-dir", str(new)], capsys)
    assert code == 1
    assert err.startswith(f"kazma: The bundle {bundle} is damaged")
    if damage == "member changed":
        assert "kazma.db does not match the checksum in its manifest" in err
    assert not new.exists()  # the folder the import made for it is taken back, lock file and workspace too


def test_import_goes_into_an_empty_data_folder_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = make_settings(tmp_path / "old")
    asyncio.run(seed(old))
    bundle = tmp_path / "kazma.tar.gz"
    export(old.data_dir, bundle, capsys)
    before = sha(old.kazma_db)
    code, _, err = run(["migrate", "import", str(bundle), "--data-dir", str(old.data_dir)], capsys)
    assert code == 1 and f"{old.data_dir} already holds a Kazma (kazma.db)" in err
    assert sha(old.kazma_db) == before


def test_import_leaves_out_a_setting_this_kazma_does_not_know(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A bundle from a Kazma with a setting this one lacks: stored, it would stop this Kazma from starting,
    so it is left out, and named."""
    old = make_settings(tmp_path / "old")
    asyncio.run(seed(old))
    bundle = tmp_path / f"{uuid.uuid4().hex}.tar.gz"
    export(old.data_dir, bundle, capsys)
    with tarfile.open(bundle) as tar:
        manifest = orjson.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
        stored = orjson.loads(tar.extractfile("settings.json").read())  # type: ignore[union-attr]
    settings_json = orjson.dumps({**stored, "time_travel.warp": 9})
    manifest["files"]["settings.json"] = {"sha256": hashlib.sha256(settings_json).hexdigest(), "bytes": len(settings_json)}
    repack(bundle, {"settings.json": settings_json, "manifest.json": orjson.dumps(manifest)})
    new = tmp_path / "new"
    code, out, _ = run(["migrate", "import", str(bundle), "--data-dir", str(new)], capsys)
    assert code == 0 and "  Setting left out: unknown setting time_travel.warp" in out
    assert rows(new / "kazma.db", "SELECT key FROM settings_overrides") == [("time_travel.retention_days",)]
    assert load_settings(data_dir=str(new)).time_travel.retention_days == 7
