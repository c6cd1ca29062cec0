"""`bureau preflight`'s model check, against answers an OpenAI-compatible server can give (no network)."""

from __future__ import annotations

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
