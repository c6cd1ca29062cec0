"""A remote seekdb server (the deployment's shared memory store) killed under a running instance and started
again: requests get 503 in a bounded time while it is gone, readiness is red, and once the server runs again
on the same base directory and port the instance is ready by itself, with the cards that were there."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from helpers import (
    QUESTION,
    REFUSED_WHISPER,
    assert_case_as_before_and_answering,
    case_with_one_whisper,
    refused_as_unavailable,
    wait_until,
)
from live_server import REPO, LiveServer, vault_beside
from servers import SeekdbServer

ANSWER_BOUND_S = 10.0  # a request to a dead store must be answered within this (no hang)
RECOVERY_DEADLINE_S = 90.0


def test_a_killed_remote_seekdb_server_is_503_and_the_instance_is_ready_by_itself_once_it_runs_again(
    tmp_path: Path,
) -> None:
    seekdb = SeekdbServer(tmp_path / "seekdb", password="seekdb-root-pw").start()
    data_dir = tmp_path / "instance"
    # One instance with its own SQLite ledger over a remote store: it needs an explicit worker id.
    env = {**seekdb.env(), "BUREAU_WORKER_ID": "1"}
    server = LiveServer(data_dir, **env)
    try:
        setup = [sys.executable, "-m", "bureau.cli", "setup", "--data-dir", str(data_dir)]
        setup += ["--vault-dir", str(vault_beside(data_dir))]
        done = subprocess.run(setup, cwd=REPO, env=server.environment(), capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        server.start()
        with httpx.Client(base_url=server.url, timeout=60) as http:
            assert http.get("/api/health").json()["memory"]["backend"] == "seekdb-remote"
            case_id, whispers, before = case_with_one_whisper(http)
            stored_before = seekdb.query("SELECT COUNT(*) FROM bureau_cards WHERE user_id = %s", f"case:{case_id}")

            assert seekdb.process is not None
            seekdb.process.send_signal(signal.SIGKILL)  # as the OOM killer would; no shutdown of any kind
            seekdb.process.wait(timeout=30)

            _, refused_after_s = refused_as_unavailable(http, whispers, REFUSED_WHISPER)
            assert refused_after_s < ANSWER_BOUND_S
            asked = http.post(f"/api/cases/{case_id}/interrogations", json={"role": "informant", "question": QUESTION})
            assert asked.status_code == 503 and asked.json()["detail"]["code"] == "MEMORY_UNAVAILABLE"
            not_ready = http.get("/api/ready")
            assert not_ready.status_code == 503
            assert not_ready.json()["detail"]["code"] == "MEMORY_UNAVAILABLE"
            # While the server is gone the instance keeps trying to reopen it, and keeps failing: still red.
            wait_until(lambda: "did not reopen" in server.log_text(), RECOVERY_DEADLINE_S, "a failed reopen")
            assert http.get("/api/ready").status_code == 503
            assert http.get("/api/health").json()["memory"]["status"] == "down"

            seekdb.restart()  # same base directory, same port; nobody touches the instance
            restarted = time.monotonic()
            wait_until(lambda: http.get("/api/ready").status_code == 200, RECOVERY_DEADLINE_S, "readiness")
            print(
                f"[faults] remote seekdb killed: 503 after {refused_after_s:.3f} s; instance ready "
                f"{time.monotonic() - restarted:.1f} s after the server was back"
            )
            stored = seekdb.query("SELECT COUNT(*) FROM bureau_cards WHERE user_id = %s", f"case:{case_id}")
            assert stored == stored_before  # the refused whisper is not in the server either
            assert_case_as_before_and_answering(http, case_id, whispers, before)
            assert http.get("/api/health").json()["memory"]["status"] == "up"
    finally:
        server.stop()
        seekdb.stop()
    log = server.log_text()
    assert "memory store reopened" in log
    assert "Traceback" not in log
