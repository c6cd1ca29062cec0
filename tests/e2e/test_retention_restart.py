"""The retention sweeper in real `bureau serve` processes: a record that expired while no process was
running is removed by the next process's start-up sweep (seen in the audit trail, before anything reads it)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from helpers import QUESTION
from live_server import LiveServer


def purged_by_retention(base: str, case_id: str) -> list[dict]:
    response = httpx.get(f"{base}/api/cases/{case_id}/policy-decisions", params={"limit": 500}, timeout=30)
    assert response.status_code == 200, response.text
    return [d for d in response.json()["decisions"] if d["action"] == "retention_purged"]


def test_a_restarted_process_sweeps_what_expired_while_it_was_down(tmp_path: Path) -> None:
    # Session records live 1 s here; the schedule is an hour, so only the start-up sweep can purge them.
    server = LiveServer(tmp_path, BUREAU_SESSION_RETENTION_S="1", BUREAU_RETENTION_SWEEP_S="3600")
    server.start()
    try:
        created = httpx.post(f"{server.url}/api/cases", json={"scenario_id": "safe-combination"}, timeout=60)
        assert created.status_code == 201, created.text
        case_id = created.json()["case"]["id"]
        asked = httpx.post(
            f"{server.url}/api/cases/{case_id}/interrogations",
            json={"role": "detective", "question": QUESTION},
            timeout=60,
        )
        assert asked.status_code == 200, asked.text
        assert purged_by_retention(server.url, case_id) == []
    finally:
        server.stop()

    time.sleep(1.5)  # let the 1 s retention pass while no process runs (waiting for time, not for a task)
    restarted = LiveServer(tmp_path, port=server.port, BUREAU_SESSION_RETENTION_S="1")
    restarted.start()
    try:
        deadline = time.monotonic() + 60
        while not (rows := purged_by_retention(restarted.url, case_id)):
            if time.monotonic() > deadline:
                pytest.fail("the start-up sweep did not purge the expired session record")
            time.sleep(0.2)  # poll the audit trail until the background sweep has run
        assert [(r["code"], r["memory_type"], r["creator"], r["space"], r["count"]) for r in rows] == [
            ("expired", "session", "system", "detective", 1)
        ]
    finally:
        restarted.stop()
