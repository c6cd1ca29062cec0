"""`bureau preflight`'s checks: the model (against answers an OpenAI-compatible server can give, no network) and
the vault (the data's own, opened by its KEK, never created by a check)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import httpx

from bureau.config import Settings
from bureau.preflight import check_llm, load_settings

KEY = "sk-preflight-secret"


def _settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path, llm_base_url="https://models.example/v1", llm_api_key=KEY)


def test_the_model_check_reports_each_answer_by_host_never_by_key(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    seen: list[dict[str, str]] = []

    def answering(status: int):  # type: ignore[no-untyped-def]
        def get(url: str, headers: dict[str, str], timeout: float) -> httpx.Response:
            assert url == "https://models.example/v1/models"
            seen.append(headers)
            return httpx.Response(status)

        return get

    ok, refused, broken = (check_llm(settings, answering(s)) for s in (200, 401, 500))
    assert ok is not None and ok.ok and "models.example" in ok.detail
    assert refused is not None and not refused.ok and "refused the key" in refused.detail
    assert broken is not None and not broken.ok and "HTTP 500" in broken.detail
    assert seen[0]["Authorization"] == f"Bearer {KEY}"  # sent to the server, never printed
    assert all(KEY not in check.detail for check in (ok, refused, broken))

    def unreachable(url: str, headers: dict[str, str], timeout: float) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    down = check_llm(settings, unreachable)
    assert down is not None and not down.ok and "unreachable" in down.detail
    assert check_llm(Settings(_env_file=None, data_dir=tmp_path)) is None  # no model configured: no check


def test_unsafe_settings_are_reported_as_a_failed_check(tmp_path: Path) -> None:
    settings, check = load_settings(lambda: Settings(_env_file=None, data_dir=tmp_path, seekdb_host="10.0.0.5"))
    assert settings is None and not check.ok and "BUREAU_WORKER_ID" in check.detail
    settings, check = load_settings(lambda: Settings(_env_file=None, data_dir=tmp_path, port=0))
    assert settings is None and not check.ok and check.detail == "invalid value for port"


def test_the_vault_check_finds_the_datas_own_vault_and_its_kek_and_creates_nothing(tmp_path: Path) -> None:
    from bureau.bootstrap.vault_binding import location_of
    from bureau.preflight import check_vault
    from bureau.vault.opening import create_vault

    settings = Settings(_env_file=None, data_dir=tmp_path / "data", vault_dir=tmp_path / "vault")
    before_start = check_vault(settings, None)
    assert before_start.ok and "does not exist yet" in before_start.detail
    assert not (tmp_path / "vault").exists()  # read-only: preflight never makes a vault
    lost = check_vault(settings, "vault-of-the-data")
    assert not lost.ok and "missing" in lost.detail and "vault-of-the-data" in lost.detail

    create_vault(location_of(settings), "vault-of-the-data").close()
    found = check_vault(settings, "vault-of-the-data")
    assert found.ok and "vault-of-the-data" in found.detail
    other = check_vault(settings, "another-vault")
    assert not other.ok and "another-vault" in other.detail and "vault-of-the-data" in other.detail

    kek = tmp_path / "vault" / "kek"
    kek.write_bytes(base64.b64encode(os.urandom(32)) + b"\n")  # someone else's KEK in its place
    foreign = check_vault(settings, "vault-of-the-data")
    assert not foreign.ok and str(kek) in foreign.detail and kek.read_text().strip() not in foreign.detail

    named = Settings(
        _env_file=None, data_dir=tmp_path / "data", vault_dir=tmp_path / "v2", vault_kek_file=tmp_path / "secret"
    )
    unprovided = check_vault(named, None)
    assert not unprovided.ok and str(tmp_path / "secret") in unprovided.detail


async def test_a_foreign_kek_refuses_the_start_naming_the_file_never_the_key(tmp_path: Path) -> None:
    import pytest

    from bureau.bootstrap.vault_binding import VaultBindingError, bind_vault
    from bureau.ledger.database import create_ledger_engine, migrate
    from bureau.ledger.repository import Ledger

    settings = Settings(_env_file=None, data_dir=tmp_path / "data", vault_dir=tmp_path / "vault")
    settings.data_dir.mkdir()
    engine = create_ledger_engine(settings.effective_database_url)
    migrate(engine)
    ledger = Ledger(engine)
    try:
        vault = await bind_vault(settings, ledger.vault_binding)
        vault.close()
        kek = tmp_path / "vault" / "kek"
        kek.write_bytes(base64.b64encode(os.urandom(32)) + b"\n")
        with pytest.raises(VaultBindingError) as refused:
            await bind_vault(settings, ledger.vault_binding)
        assert str(kek) in str(refused.value) and kek.read_text().strip() not in str(refused.value)
    finally:
        engine.dispose()
