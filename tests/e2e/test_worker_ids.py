"""Snowflake worker ids: instances sharing a store never share one, and a process that loses its lease stops
writing (the notes measured 390/400 acknowledged writes surviving when two writers shared an id)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bureau.config import Settings, UnsafeSettingsError
from bureau.ledger.database import create_ledger_engine, migrate
from bureau.ledger.repository import Ledger, LedgerConflictError
from live_server import REPO, LiveServer

REMOTE = {"seekdb_host": "127.0.0.1", "seekdb_port": 1}  # never contacted: settings alone decide


def test_a_shared_remote_store_with_a_local_ledger_needs_an_explicit_worker_id(tmp_path: Path) -> None:
    with pytest.raises(UnsafeSettingsError) as refused:
        Settings(_env_file=None, data_dir=tmp_path, **REMOTE)
    message = str(refused.value)
    assert "BUREAU_WORKER_ID" in message and "BUREAU_DATABASE_URL" in message
    assert Settings(_env_file=None, data_dir=tmp_path, worker_id=7, **REMOTE).worker_id == 7
    shared = Settings(_env_file=None, data_dir=tmp_path, database_url="postgresql+psycopg2://db/bureau", **REMOTE)
    assert shared.worker_id is None  # a shared ledger leases distinct ids by itself
    assert Settings(_env_file=None, data_dir=tmp_path).worker_id is None  # embedded: one data directory


def test_bureau_serve_refuses_with_the_reason_and_exit_code_2(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "BUREAU_SEEKDB_HOST": "127.0.0.1", "BUREAU_SEEKDB_PORT": "1"}
    command = [sys.executable, "-m", "bureau.cli", "serve", "--data-dir", str(tmp_path)]
    result = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "silently overwrite" in result.stderr and "BUREAU_WORKER_ID" in result.stderr
    assert not (tmp_path / "bureau.db").exists()  # refused before touching anything


async def test_a_configured_worker_id_is_leased_so_two_live_instances_cannot_share_it(tmp_path: Path) -> None:
    engine = create_ledger_engine(f"sqlite:///{tmp_path / 'bureau.db'}")
    migrate(engine)
    ledger = Ledger(engine)
    try:
        assert await ledger.slots.claim_slot("instance-a", wanted=5) == 5
        with pytest.raises(LedgerConflictError):
            await ledger.slots.claim_slot("instance-b", wanted=5)
        assert await ledger.slots.claim_slot("instance-b") == 0  # leasing a free one still works
        # A lease nobody renewed is reclaimable: its holder is gone (or fenced itself, see below).
        assert await ledger.slots.claim_slot("instance-c", wanted=5, stale_after_s=0.0) == 5
        assert not await ledger.slots.heartbeat_slot(5, "instance-a")  # what tells the old holder it lost it
    finally:
        engine.dispose()


def _wait_for(predicate, timeout_s: float = 20.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


def test_an_instance_that_loses_its_worker_id_fails_readiness_and_refuses_writes(tmp_path: Path) -> None:
    server = LiveServer(tmp_path, BUREAU_WORKER_HEARTBEAT_S="0.2").start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            assert http.get("/api/ready").status_code == 200
            case = http.post("/api/cases", json={"scenario_id": "safe-combination"}).json()
            case_id = case["case"]["id"]
            whisper = {"role": "detective", "text": "The butler left at nine."}
            assert http.post(f"/api/cases/{case_id}/whispers", json=whisper).status_code == 201
            before = http.get(f"/api/cases/{case_id}").json()

            with sqlite3.connect(tmp_path / "bureau.db") as ledger:  # another process takes the slot over
                ledger.execute("UPDATE process_slots SET owner = 'another-instance'")

            not_ready = _wait_for(lambda: (r := http.get("/api/ready")).status_code == 503 and r)
            assert not_ready.json()["detail"]["code"] == "WORKER_ID_LOST"
            refused = http.post(f"/api/cases/{case_id}/whispers", json=whisper)
            assert refused.status_code == 503
            assert refused.json()["detail"]["code"] == "WORKER_ID_LOST"
            assert http.post(f"/api/cases/{case_id}/reset").status_code == 503  # reset writes cards too
            after = http.get(f"/api/cases/{case_id}")  # reads keep working
            assert after.status_code == 200
            assert after.json()["spaces"] == before["spaces"]  # nothing half-done survived
            assert http.get("/api/health").status_code == 200  # alive, just not ready
    finally:
        server.stop()
    assert "lost worker id" in server.log_text()
