"""The ledger refusing writes under a running server: locked by another writer, read-only, a full disk.
Each is a 503 with its own code, reads keep working, and nothing half-done survives: the store and the
ledger say the same thing afterwards, and the same command succeeds once the fault is gone."""

from __future__ import annotations

import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from contract import OpenApiContract
from filesystems import fill, immutable, tmpfs
from helpers import QUESTION, informant_secret_card
from live_server import LiveServer

BUSY_TIMEOUT_S = 1.0
ANSWER_BOUND_S = 15.0
CONCURRENT_READS = 8


def refused_writes(http: httpx.Client, case: dict[str, Any]) -> list[httpx.Response]:
    """One of each kind of command: a whisper, an interrogation (it records a session card) and a publish."""
    case_id = case["case"]["id"]
    base = f"/api/cases/{case_id}"
    calls = [
        (f"{base}/whispers", {"role": "detective", "text": "The butler left by the kitchen door."}),
        (f"{base}/interrogations", {"role": "informant", "question": QUESTION}),
        (f"{base}/publications", {"role": "informant", "card_id": informant_secret_card(case)["id"]}),
    ]
    answers = []
    for path, body in calls:
        started = time.monotonic()
        answers.append(http.post(path, json=body))
        assert time.monotonic() - started < ANSWER_BOUND_S, path
    return answers


def assert_refused(http: httpx.Client, answers: list[httpx.Response], code: str) -> None:
    contract = OpenApiContract(http.get("/openapi.json").json())
    for answer in answers:
        contract.check(answer)  # a declared status with the declared body
        assert answer.status_code == 503, answer.text
        assert answer.json()["detail"]["code"] == code
        assert answer.headers["Retry-After"] == "2"


def assert_consistent_and_writable(http: httpx.Client, case: dict[str, Any], ledger: Path) -> None:
    """Nothing of the refused commands is left, in the store or the ledger, and the same commands now work."""
    case_id = case["case"]["id"]
    now = http.get(f"/api/cases/{case_id}").json()
    assert now["spaces"] == case["spaces"]
    assert now["case"]["version"] == case["case"]["version"]
    with sqlite3.connect(ledger) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("SELECT count(*) FROM publications WHERE case_id = ?", (case_id,)).fetchone() == (0,)
        assert db.execute("SELECT count(*) FROM cleanup_tasks").fetchone() == (0,)
    answers = refused_writes(http, case)
    assert [a.status_code for a in answers] == [201, 200, 201], [a.text for a in answers]


def new_case(http: httpx.Client) -> dict[str, Any]:
    response = http.post("/api/cases", json={"scenario_id": "safe-combination"})
    assert response.status_code == 201
    return response.json()


def test_a_ledger_locked_by_another_writer_is_503_ledger_busy(tmp_path: Path) -> None:
    server = LiveServer(tmp_path, BUREAU_LEDGER_BUSY_TIMEOUT_S=str(BUSY_TIMEOUT_S)).start()
    ledger = tmp_path / "bureau.db"
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            case = new_case(http)
            holder = sqlite3.connect(ledger, isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock and does not let go
            try:
                assert_refused(http, refused_writes(http, case), "LEDGER_BUSY")
                assert http.get(f"/api/cases/{case['case']['id']}").status_code == 200  # reads do not wait
            finally:
                holder.execute("ROLLBACK")
                holder.close()
            assert_consistent_and_writable(http, case, ledger)
    finally:
        server.stop()


def test_a_read_only_ledger_is_503_ledger_read_only(tmp_path: Path) -> None:
    server = LiveServer(tmp_path).start()
    ledger = tmp_path / "bureau.db"
    try:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            case = new_case(http)
            # The database and its write-ahead log refuse writes (not the shared-memory index: SQLite maps
            # it, and a mapping that cannot be written is a crash, not a fault the service can answer).
            with immutable(ledger, ledger.with_name("bureau.db-wal")):
                assert_refused(http, refused_writes(http, case), "LEDGER_READ_ONLY")
                # Reads at once: the pool opens connections now, which SQLite opens read-only for good
                # (sqlite_files.py replaces them once the file is writable again; the commands below need it).
                with ThreadPoolExecutor(CONCURRENT_READS) as readers:
                    reads = list(readers.map(lambda _: http.get(f"/api/cases/{case['case']['id']}"), range(16)))
                assert {r.status_code for r in reads} == {200}
            assert_consistent_and_writable(http, case, ledger)
    finally:
        server.stop()


def test_a_full_disk_under_the_ledger_is_503_storage_full(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "ledger-disk", "32m") as disk:
        ledger = disk / "bureau.db"
        server = LiveServer(tmp_path, BUREAU_DATABASE_URL=f"sqlite:///{ledger}").start()
        try:
            with httpx.Client(base_url=server.url, timeout=60) as http:
                case = new_case(http)
                filler = fill(disk)
                try:
                    assert_refused(http, refused_writes(http, case), "STORAGE_FULL")
                    assert http.get(f"/api/cases/{case['case']['id']}").status_code == 200
                finally:
                    filler.unlink()
                assert_consistent_and_writable(http, case, ledger)
        finally:
            server.stop()
