"""`BUREAU_DATABASE_URL` beyond SQLite: the ledger on a throwaway PostgreSQL cluster (Debian's postgresql)."""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine

from bureau.ledger.database import create_ledger_engine, migrate
from bureau.ledger.events import append_event
from bureau.ledger.repository import Ledger, PendingEvent
from helpers import informant_secret_card, play_four_acts
from live_server import LiveServer, free_port


def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _as_postgres(command: list[str]) -> list[str]:
    """The server refuses to run as root; CI runs as root."""
    return ["su", "postgres", "-c", " ".join(command)] if os.geteuid() == 0 else command


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not (initdb and pg_ctl):
        pytest.skip("PostgreSQL server binaries not installed (.ci/run installs Debian's postgresql)")
    # Not under pytest's temp tree: that is private to root, and the server runs as `postgres`.
    base = Path(tempfile.mkdtemp(prefix="bureau-pg-"))
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
    data, port = base / "data", free_port()
    subprocess.run(
        _as_postgres([initdb, "-D", str(data), "-A", "trust", "-U", "postgres"]), check=True, capture_output=True
    )
    options = f"'-p {port} -k {base} -c listen_addresses=127.0.0.1'"
    start = [pg_ctl, "-D", str(data), "-o", options, "-l", str(base / "log"), "-w", "start"]
    subprocess.run(_as_postgres(start), check=True, capture_output=True)
    try:
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c", "CREATE DATABASE bureau"],
            check=True,
            capture_output=True,
        )
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/bureau"
    finally:
        subprocess.run(_as_postgres([pg_ctl, "-D", str(data), "-m", "fast", "stop"]), capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def engine(postgres_url: str) -> Iterator[Engine]:
    engine = create_ledger_engine(postgres_url)
    migrate(engine)
    migrate(engine)  # idempotent
    yield engine
    engine.dispose()


async def test_a_visible_event_means_every_earlier_event_is_visible(engine: Engine) -> None:
    """The cursor invariant live streams rely on: ids commit in order, so none is skipped."""
    ledger = Ledger(engine)
    case_id = "pgorder" + os.urandom(4).hex()
    await ledger.create_case(case_id, "safe-combination", "en")

    def slow_commit(session) -> None:
        append_event(session, case_id, PendingEvent("memory.written", {}), 1)
        time.sleep(0.5)  # this transaction holds a lower event id, uncommitted, for a while

    slow = asyncio.ensure_future(ledger._run(slow_commit))
    await asyncio.sleep(0.1)  # let the slow transaction take its id first
    await ledger.change_case(case_id, [PendingEvent("case.created", {})], status="active")
    seen = [e.type for e in await ledger.events_after(case_id, 0)]
    await slow
    assert seen == ["memory.written", "case.created"]  # the earlier id was already committed


def test_the_game_runs_on_a_postgresql_ledger(tmp_path_factory: pytest.TempPathFactory, postgres_url: str) -> None:
    server = LiveServer(tmp_path_factory.mktemp("pg-data"), BUREAU_DATABASE_URL=postgres_url).start()
    try:
        play_four_acts(server, "seekdb-embedded")
        with httpx.Client(base_url=server.url, timeout=60) as http:
            case = http.post("/api/cases", json={"scenario_id": "safe-combination"}).json()
            case_id, secret = case["case"]["id"], informant_secret_card(case)
            body = {"role": "informant", "card_id": secret["id"]}
            statuses = [http.post(f"/api/cases/{case_id}/publications", json=body).status_code for _ in range(3)]
            assert statuses == [201, 200, 200]
            assert not (server.data_dir / "bureau.db").exists()  # the ledger really is elsewhere
    finally:
        server.stop()
    assert "Traceback" not in server.log_text()


def test_postgres_binaries_are_where_ci_expects_them() -> None:
    """Guards .ci/run: if this machine has no server binaries, the tests above silently skip."""
    if os.environ.get("CI") != "true":
        pytest.skip("only meaningful in CI")
    assert _pg_bin("initdb") and _pg_bin("pg_ctl"), "install Debian's postgresql in .ci/run"
    assert Path("/usr/bin/psql").exists() or shutil.which("psql")
