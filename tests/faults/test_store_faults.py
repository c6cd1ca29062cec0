"""The memory store going away or hanging under a running server: the embedded seekdb server is a child
process of `bureau serve` (`seekdb --embedded`, one per data directory), so it can die on its own (OOM
killer, crash) or stop answering (stopped, swapped out, stuck). Requests must then get a clear 503 in a
bounded time, readiness must go red, and the service must come back by itself, with every acknowledged
write still there and nothing half-done."""

from __future__ import annotations

import contextlib
import os
import signal
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
from live_server import LiveServer
from process_tree import is_gone, is_stopped, seekdb_child

ANSWER_BOUND_S = 10.0  # a request to a dead store must be answered within this (no hang)
RECOVERY_DEADLINE_S = 90.0
CALL_TIMEOUT_S = 4.0  # BUREAU_MEMORY_CALL_TIMEOUT_S for the hung-store test


def test_a_killed_seekdb_child_is_503_then_the_service_reopens_the_store_by_itself(tmp_path: Path) -> None:
    server = LiveServer(tmp_path).start()
    assert server.process is not None
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            case_id, whispers, before = case_with_one_whisper(http)

            child = seekdb_child(server.process.pid)
            os.kill(child, signal.SIGKILL)
            wait_until(lambda: is_gone(child), 10, "the seekdb child's death")

            started = time.monotonic()
            refused, refused_after_s = refused_as_unavailable(http, whispers, REFUSED_WHISPER)
            assert refused_after_s < ANSWER_BOUND_S
            assert refused.headers["Retry-After"] == "2"
            not_ready = http.get("/api/ready")
            assert not_ready.status_code == 503
            assert not_ready.json()["detail"]["code"] == "MEMORY_UNAVAILABLE"

            # Nobody restarts anything: the service reopens the store itself.
            wait_until(lambda: http.get("/api/ready").status_code == 200, RECOVERY_DEADLINE_S, "readiness")
            print(
                f"[faults] seekdb child killed: 503 after {refused_after_s:.3f} s, ready again "
                f"{time.monotonic() - started:.1f} s after that request"
            )
            assert seekdb_child(server.process.pid) != child  # a new embedded server
            assert_case_as_before_and_answering(http, case_id, whispers, before)
            assert http.get("/api/health").json()["memory"]["status"] == "up"
    finally:
        server.stop()
    log = server.log_text()
    assert "memory store reopened" in log
    assert "Traceback" not in log  # refused cleanly, not by an unexpected error


def test_a_hung_seekdb_child_is_503_in_bounded_time_and_the_service_recovers_when_it_answers(tmp_path: Path) -> None:
    server = LiveServer(tmp_path, BUREAU_MEMORY_CALL_TIMEOUT_S=str(CALL_TIMEOUT_S)).start()
    assert server.process is not None
    child = 0
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            case_id, whispers, before = case_with_one_whisper(http)

            child = seekdb_child(server.process.pid)
            os.kill(child, signal.SIGSTOP)  # alive and holding its socket, answering nothing
            wait_until(lambda: is_stopped(child), 10, "the seekdb child stopped")

            # Its card write hangs in the store.
            _, first_after_s = refused_as_unavailable(http, whispers, REFUSED_WHISPER)
            assert first_after_s < CALL_TIMEOUT_S + ANSWER_BOUND_S  # the call deadline, not a hang

            # The call is still stuck on the memory worker. Everything after it is refused at once instead
            # of queueing behind it: each answer comes before a call deadline could have passed.
            attempts = [
                lambda: http.post(whispers, json={"role": "detective", "text": "The van had no plates."}),
                lambda: http.post(
                    f"/api/cases/{case_id}/interrogations", json={"role": "informant", "question": QUESTION}
                ),
                lambda: http.get(f"/api/cases/{case_id}"),
                lambda: http.get("/api/ready"),
            ]
            fast = []
            for attempt in attempts:
                sent = time.monotonic()
                answer = attempt()
                fast.append(time.monotonic() - sent)
                assert answer.status_code == 503, answer.text
                assert answer.json()["detail"]["code"] == "MEMORY_UNAVAILABLE"
            assert max(fast) < CALL_TIMEOUT_S, fast
            assert http.get("/api/health").json()["memory"]["status"] == "down"
            assert http.get("/api/health").status_code == 200  # the process itself answers

            # A hung store is not restarted: the same child, still stopped, after several supervisor pings.
            hung_until = time.monotonic() + 3
            while time.monotonic() < hung_until:
                assert seekdb_child(server.process.pid) == child and is_stopped(child)
                time.sleep(0.5)

            os.kill(child, signal.SIGCONT)
            resumed = time.monotonic()
            wait_until(lambda: http.get("/api/ready").status_code == 200, RECOVERY_DEADLINE_S, "readiness")
            print(
                f"[faults] seekdb child stopped: first 503 after {first_after_s:.2f} s (call timeout "
                f"{CALL_TIMEOUT_S} s), later ones after at most {max(fast):.3f} s; ready again "
                f"{time.monotonic() - resumed:.2f} s after SIGCONT"
            )
            assert seekdb_child(server.process.pid) == child  # the same server, never reopened
            # The stuck whisper's write landed once the store ran again, and was undone: the ledger never
            # recorded it and the store does not hold it.
            assert_case_as_before_and_answering(http, case_id, whispers, before)
    finally:
        if child:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGCONT)  # never leave a stopped server behind a failed assertion
        server.stop()
    log = server.log_text()
    assert "timed out: refusing calls until it answers" in log
    assert "memory store answers again" in log
    assert "reopening" not in log
    assert "Traceback" not in log
