"""Whole-process behaviour: `bureau serve` from the CLI, persistence across a hard kill, a clean working
directory, and the presenters' clean-up commands."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from helpers import informant_secret_card
from live_server import LiveServer, vault_beside

WHISPER = "The courier always parks behind the bakery."


def bureau_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bureau.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=180
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A working directory holding a hostile `.env` that PowerMem must never pick up."""
    cwd = tmp_path_factory.mktemp("cwd")
    (cwd / ".env").write_text(
        "LOGGING_FILE=./powermem-leak.log\nLOGGING_CONSOLE_ENABLED=true\nEMBEDDING_PROVIDER=mock\n"
    )
    return cwd


def test_writes_survive_a_hard_kill_and_the_working_directory_stays_clean(
    tmp_path_factory: pytest.TempPathFactory, workdir: Path
) -> None:
    data = tmp_path_factory.mktemp("persist-data")
    server = LiveServer(data, cwd=workdir).start()
    try:
        health = httpx.get(server.url + "/api/health").json()
        assert health["memory"] == {**health["memory"], "status": "up", "backend": "seekdb-embedded"}
        assert health["mode"] == "evidence"
        case = httpx.post(server.url + "/api/cases", json={"scenario_id": "safe-combination"}, timeout=60).json()
        case_id = case["case"]["id"]
        whisper = httpx.post(
            server.url + f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": WHISPER}, timeout=60
        )
        assert whisper.status_code == 201
        asked = httpx.post(
            server.url + f"/api/cases/{case_id}/interrogations",
            json={"role": "informant", "question": "What is the safe combination?"},
            timeout=60,
        ).json()
    finally:
        server.stop(signal.SIGKILL)

    server.start()
    try:
        snap = httpx.get(server.url + f"/api/cases/{case_id}", timeout=60).json()
        assert WHISPER in [c["content"] for c in snap["spaces"]["detective"]]
        assert snap["last_trace"] == asked["trace"]  # the X-ray survives a restart: it lives in the ledger
        answer = httpx.post(
            server.url + f"/api/cases/{case_id}/interrogations",
            json={"role": "detective", "question": "Where does the courier park?"},
            timeout=60,
        ).json()
        assert answer["certainty"] == "known"  # the real embedder, not the mock one from the hostile .env
        assert httpx.get(server.url + "/api/ready").status_code == 200
    finally:
        server.stop()
    assert sorted(p.name for p in workdir.iterdir()) == [".env"]


def test_erase_and_clear_commands(tmp_path_factory: pytest.TempPathFactory, workdir: Path) -> None:
    data = tmp_path_factory.mktemp("cleanup-data")
    server = LiveServer(data, cwd=workdir).start()
    try:
        cases = [
            httpx.post(server.url + "/api/cases", json={"scenario_id": sid}, timeout=60).json()
            for sid in ("safe-combination", "mole", "allergy")
        ]
        first = cases[0]
        secret = informant_secret_card(first)
        published = httpx.post(
            server.url + f"/api/cases/{first['case']['id']}/publications",
            json={"role": "informant", "card_id": secret["id"]},
            timeout=60,
        )
        assert published.status_code == 201
    finally:
        server.stop()

    at = ("--data-dir", str(data), "--vault-dir", str(vault_beside(data)))  # where the server had them
    bad = bureau_cli("erase", "--case", "../../etc", *at, cwd=workdir)
    assert bad.returncode == 2
    erased = bureau_cli("erase", "--case", first["case"]["id"], *at, cwd=workdir)
    assert erased.returncode == 0, erased.stderr
    dry = bureau_cli("clear", *at, cwd=workdir)
    assert dry.returncode == 0 and "2 case(s) would be erased" in dry.stdout

    server.start()
    try:
        assert httpx.get(server.url + f"/api/cases/{first['case']['id']}").status_code == 404
        for case in cases[1:]:
            assert httpx.get(server.url + f"/api/cases/{case['case']['id']}").status_code == 200
    finally:
        server.stop()

    cleared = bureau_cli("clear", "--confirm", *at, cwd=workdir)
    assert cleared.returncode == 0 and "Erased 2 case(s)" in cleared.stdout
    empty = bureau_cli("clear", *at, cwd=workdir)
    assert "0 case(s) would be erased" in empty.stdout
    assert sorted(p.name for p in workdir.iterdir()) == [".env"]
