"""The deployment files that can be checked here (Docker cannot run on these machines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kazma_core.settings import load_settings

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"


def test_the_example_configuration_is_a_valid_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAZMA_CONFIG", str(DEPLOY / "kazma.example.toml"))
    monkeypatch.setenv("KAZMA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("KAZMA_SERVER__HOST", "0.0.0.0")  # as the image sets it
    settings = load_settings()
    assert settings.data_dir == (tmp_path / "data").resolve()
    assert (settings.server.host, settings.server.port) == ("0.0.0.0", 8765)
    assert settings.time_travel.auto_maintain and settings.time_travel.retention_days == 30
    assert settings.history.checkpoints_per_chat == 200
