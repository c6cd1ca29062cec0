"""The store's files removed under a running server. seekdb keeps answering from the deleted files, and a
reopen would create a fresh, empty store: the server would say "up" with every card gone while the ledger still
lists the cases. Instead it says STORE_MISSING, refuses every call, creates nothing, and says why once."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import httpx

from bureau.bootstrap.runtime import MAINTENANCE_INTERVAL_S
from helpers import REFUSED_WHISPER, case_with_one_whisper, refused_as_unavailable, wait_until
from live_server import LiveServer
from process_tree import is_gone, seekdb_child

NOTICE_DEADLINE_S = 3 * MAINTENANCE_INTERVAL_S


def memory_health(http: httpx.Client) -> dict[str, object]:
    return http.get("/api/health").json()["memory"]


def test_a_store_removed_under_the_server_is_reported_missing_and_never_recreated(tmp_path: Path) -> None:
    server = LiveServer(tmp_path).start()
    assert server.process is not None
    store = tmp_path / "seekdb"
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            _, whispers, _ = case_with_one_whisper(http)
            assert memory_health(http) == {**memory_health(http), "status": "up", "reason": None}

            shutil.rmtree(store)
            wait_until(lambda: memory_health(http)["reason"] == "STORE_MISSING", NOTICE_DEADLINE_S, "STORE_MISSING")
            assert memory_health(http)["status"] == "down"
            assert http.get("/api/health").json()["status"] == "degraded"
            assert http.get("/api/ready").status_code == 503
            refused_as_unavailable(http, whispers, REFUSED_WHISPER)
            refused_as_unavailable(http, "/api/cases", {"scenario_id": "mole"})

            # The embedded server dies too: the supervisor's reopen must still not create a new store.
            child = seekdb_child(server.process.pid)
            os.kill(child, signal.SIGKILL)
            wait_until(lambda: is_gone(child), 10, "the seekdb child's death")
            watched_until = time.monotonic() + 2 * MAINTENANCE_INTERVAL_S
            while time.monotonic() < watched_until:
                assert not store.exists(), "a new, empty store was created in place of the removed one"
                assert memory_health(http)["reason"] == "STORE_MISSING"
                time.sleep(0.5)
    finally:
        server.stop(signal.SIGTERM)
    log = server.log_text()
    assert log.count("are gone (removed while the server ran)") == 1, log[-3000:]
    assert str(store) in log
    assert "reopening it" not in log
