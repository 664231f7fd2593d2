"""Settings: sources in order, every time_travel setting with its default, one-line refusals."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kazma_core.errors import SettingsError
from kazma_core.settings import is_live, load_settings, setting_names, validate_override
from kazma_core.stores.app_schema import MIGRATIONS
from kazma_core.stores.app_sql import AppStore
from kazma_core.stores.sqlite import SqliteDB
from kazma_server.cli import main


def test_time_travel_defaults_are_the_specs(tmp_path: Path) -> None:
    tt = load_settings(data_dir=str(tmp_path)).time_travel
    assert tt.model_dump() == {
        "enabled": True,
        "max_snapshots": 50,
        "max_global_snapshots": 2000,
        "max_snapshot_bytes": 2_097_152,
        "max_thread_bytes": 33_554_432,
        "max_total_bytes": 536_870_912,
        "max_per_turn": 30,
        "auto_maintain": True,
        "retention_days": 30,
        "undo_seconds": 3600,
    }


def test_only_the_clean_up_settings_are_read_live() -> None:
    live = {name for name in setting_names() if name.startswith("time_travel.") and is_live(name)}
    assert live == {"time_travel.auto_maintain", "time_travel.retention_days"}


def test_environment_beats_the_user_file_which_beats_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user_file = tmp_path / "kazma.toml"
    user_file.write_text("[time_travel]\nmax_snapshots = 7\nmax_per_turn = 9\n")
    monkeypatch.setenv("KAZMA_CONFIG", str(user_file))
    monkeypatch.setenv("KAZMA_TIME_TRAVEL__MAX_SNAPSHOTS", "11")
    monkeypatch.setenv("KAZMA_DATA_DIR", str(tmp_path / "d"))
    settings = load_settings()
    assert settings.time_travel.max_snapshots == 11
    assert settings.time_travel.max_per_turn == 9
    assert settings.time_travel.max_global_snapshots == 2000
    assert settings.data_dir == (tmp_path / "d").resolve()


async def test_overrides_stored_in_kazma_db_apply_at_next_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAZMA_TIME_TRAVEL__MAX_SNAPSHOTS", "11")
    store = AppStore(SqliteDB(tmp_path / "kazma.db", MIGRATIONS, secure_delete=True))
    await store.settings.set_override("time_travel.max_snapshots", 12)
    await store.settings.set_override("time_travel.retention_days", 3)
    await store.close()
    settings = load_settings(data_dir=str(tmp_path))
    assert settings.time_travel.max_snapshots == 12
    assert settings.time_travel.retention_days == 3


@pytest.mark.parametrize(
    ("env", "value", "named"),
    [
        ("KAZMA_TIME_TRAVEL__MAX_SNAPSHOTS", "0", "time_travel.max_snapshots = '0'"),
        ("KAZMA_TIME_TRAVEL__MAX_PER_TURN", "1", "time_travel.max_per_turn"),
        ("KAZMA_TIME_TRAVEL__RETENTION_DAYS", "-3", "time_travel.retention_days"),
        ("KAZMA_TIME_TRAVEL__ENABLED", "maybe", "time_travel.enabled"),
        ("KAZMA_SERVER__PORT", "70000", "server.port"),
        ("KAZMA_SERVER__LEADER_RENEW_SECONDS", "20", "server.leader_renew_seconds = '20'"),  # not under leader_seconds
        ("KAZMA_MODEL__PROVIDER", "gpt", "model.provider"),
    ],
)
def test_an_invalid_value_is_refused_naming_the_setting_and_what_is_allowed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: str, value: str, named: str
) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(SettingsError) as refused:
        load_settings(data_dir=str(tmp_path))
    assert named in refused.value.message
    assert "allowed:" in refused.value.message
    assert "\n" not in refused.value.message


def test_the_chat_apps_leader_renews_its_row_before_it_expires(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    settings = load_settings(data_dir=str(tmp_path))
    assert (settings.server.leader_seconds, settings.server.leader_renew_seconds, settings.server.leader_check_seconds) == (20, 10, 5)
    monkeypatch.setenv("KAZMA_SERVER__LEADER_SECONDS", "8")
    monkeypatch.setenv("KAZMA_SERVER__LEADER_RENEW_SECONDS", "8")
    with pytest.raises(SettingsError) as refused:
        load_settings(data_dir=str(tmp_path))
    assert refused.value.message_id == "setting_renew_not_shorter_range"
    assert refused.value.message.startswith("invalid setting server.leader_renew_seconds = '8':")
    assert "server.leader_seconds (8)" in refused.value.message
    monkeypatch.setenv("KAZMA_SERVER__LEADER_RENEW_SECONDS", "7")
    assert load_settings(data_dir=str(tmp_path)).server.leader_renew_seconds == 7


def test_an_override_is_checked_against_its_setting() -> None:
    assert validate_override("time_travel.max_snapshots", 5) == 5
    with pytest.raises(SettingsError, match="allowed: 1 to 100000"):
        validate_override("time_travel.max_snapshots", -5)
    with pytest.raises(SettingsError, match=r"unknown setting time_travel\.nope"):
        validate_override("time_travel.nope", 1)


def _kazma(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """The `kazma` command run in this process, as a shell would run it: a process of its own would
    spend seconds on imports before refusing the setting."""
    code = main(list(args))
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(["kazma", *args], code, captured.out, captured.err)


def test_serve_stops_with_one_line_on_an_invalid_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KAZMA_TIME_TRAVEL__MAX_SNAPSHOTS", "-1")
    done = _kazma(capsys, "serve", "--data-dir", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        (
            "kazma: invalid setting time_travel.max_snapshots = '-1': it is out of range; allowed: 1 to 100000"
        )
    ]


def test_a_refused_setting_is_said_in_the_locales_language(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal once carried pydantic's English ("input should be a valid integer") whatever the locale."""
    monkeypatch.setenv("KAZMA_TIME_TRAVEL__MAX_SNAPSHOTS", "many")
    monkeypatch.setenv("LC_ALL", "ar_EG.UTF-8")
    done = _kazma(capsys, "serve", "--data-dir", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "kazma: قيمة غير مقبولة للإعداد time_travel.max_snapshots = 'many': يأخذ عددًا صحيحًا؛ المسموح: من 1 إلى 100000"
    ]


def test_serve_stops_with_one_line_on_an_unwritable_data_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    done = _kazma(capsys, "serve", "--data-dir", str(blocker / "data"))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"kazma: invalid setting data_dir = '{blocker / 'data'}': the folder cannot be written")


def test_true_or_false_is_not_taken_for_a_number() -> None:
    """Regression: validate_override("time_travel.max_snapshots", True) stored 1."""
    with pytest.raises(SettingsError, match="a number is needed"):
        validate_override("time_travel.max_snapshots", True)
    assert validate_override("time_travel.enabled", False) is False
