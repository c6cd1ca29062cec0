"""A real server killed by SIGKILL at each step of the publish Saga, then restarted: the card ends up on the
board exactly once, no orphan copy survives, and no publication stays 409 for good.

The kill comes from the test-only fault hook `BUREAU_TEST_KILL_AT=<step>` (refused unless
`BUREAU_ENV=test`): the process dies at that point with no clean-up of any kind, as in a crash.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from bureau.config import Settings, UnsafeSettingsError
from bureau.game.publication import SAGA_STEPS
from helpers import informant_secret_card
from live_server import LiveServer

RETRY_DEADLINE_S = 30.0  # the crashed attempt's lease is 2 s (LiveServer); 409s must end well before this


def publish(http: httpx.Client, case_id: str, card_id: str) -> httpx.Response:
    return http.post(f"/api/cases/{case_id}/publications", json={"role": "informant", "card_id": card_id})


def board(http: httpx.Client, case_id: str) -> list[dict]:
    return http.get(f"/api/cases/{case_id}").json()["spaces"]["bulletin_board"]


def publication_rows(data_dir: Path, case_id: str) -> list[tuple[str, str | None]]:
    with sqlite3.connect(data_dir / "bureau.db") as ledger:
        query = "SELECT state, public_card_id FROM publications WHERE case_id = ?"
        return ledger.execute(query, (case_id,)).fetchall()


def test_the_fault_hook_is_refused_outside_test_settings(tmp_path: Path) -> None:
    for env in ("development", "production"):
        with pytest.raises(UnsafeSettingsError, match="test-only"):
            Settings(_env_file=None, data_dir=tmp_path, env=env, test_kill_at="after_reserve")


# `after_board_write` and `before_mark_ready` are one point of the code (nothing runs between the two hooks):
# a process is killed at each distinct point, one process per point, each in its own case.
KILL_POINTS = ("after_reserve", "after_board_write", "after_mark_ready")


def test_the_kill_points_cover_every_saga_step() -> None:
    assert set(SAGA_STEPS) - set(KILL_POINTS) == {"before_mark_ready"}


def test_a_kill_at_each_saga_step_then_a_restart_publishes_exactly_once(tmp_path: Path) -> None:
    crashed: dict[str, tuple[str, str]] = {}
    for step in KILL_POINTS:
        server = LiveServer(tmp_path, BUREAU_ENV="test", BUREAU_TEST_KILL_AT=step).start()
        assert server.process is not None
        with httpx.Client(base_url=server.url, timeout=60) as http:
            case = http.post("/api/cases", json={"scenario_id": "safe-combination"}).json()
            case_id, card_id = case["case"]["id"], informant_secret_card(case)["id"]
            with pytest.raises(httpx.TransportError):  # the process died mid-request: no answer at all
                publish(http, case_id, card_id)
        assert server.process.wait(timeout=30) == -signal.SIGKILL
        assert f"killing this process at publish step {step}" in server.log_text()
        server.process = None
        crashed[step] = (case_id, card_id)

    # What each crash left behind in the ledger: the commit of `ready` is the step that decides.
    for step in ("after_reserve", "after_board_write"):
        assert publication_rows(tmp_path, crashed[step][0]) == [("pending", None)], step
    [(state, _)] = publication_rows(tmp_path, crashed["after_mark_ready"][0])
    assert state == "ready"

    server = LiveServer(tmp_path).start()  # the same data directory, no fault
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            # Nobody retries this one: the service rolls the abandoned attempt back by itself, copy and row.
            case_id, _ = crashed["after_board_write"]
            deadline = time.monotonic() + RETRY_DEADLINE_S
            while publication_rows(tmp_path, case_id) or board(http, case_id):
                assert time.monotonic() < deadline, "the abandoned copy is still on the board"
                time.sleep(0.2)
            assert "abandoned by a crashed process" in server.log_text()
            for step, (case_id, card_id) in crashed.items():
                deadline = time.monotonic() + RETRY_DEADLINE_S
                while (response := publish(http, case_id, card_id)).status_code == 409:
                    assert response.json()["detail"]["code"] == "PUBLICATION_PENDING"
                    assert time.monotonic() < deadline, f"{step}: still 409 after {RETRY_DEADLINE_S} s"
                    time.sleep(float(response.headers["Retry-After"]) / 4)
                # Only a crash after `ready` committed makes the retry a repeat; before it, the retry publishes.
                assert response.status_code == (200 if step == "after_mark_ready" else 201), (step, response.text)
                public_id = response.json()["public_card"]["id"]
                copies = board(http, case_id)
                assert [c["id"] for c in copies] == [public_id], step  # exactly one copy, no orphan
                assert copies[0]["source"] == {"role": "informant", "card_id": card_id}
                again = publish(http, case_id, card_id)
                assert again.status_code == 200 and again.json() == {**again.json(), "idempotent": True}
                assert again.json()["public_card"]["id"] == public_id
                assert publication_rows(tmp_path, case_id) == [("ready", public_id)]
                asked = http.post(
                    f"/api/cases/{case_id}/interrogations",
                    json={"role": "detective", "question": "What is the safe combination?"},
                ).json()
                assert asked["certainty"] == "known" and asked["evidence"] == [public_id], step
    finally:
        server.stop()
