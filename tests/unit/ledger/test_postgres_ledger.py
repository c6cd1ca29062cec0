"""`BUREAU_DATABASE_URL` beyond SQLite: the ledger on a throwaway PostgreSQL cluster (Debian's postgresql)."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine

from bureau.ledger.database import create_ledger_engine, migrate
from bureau.ledger.events import append_event
from bureau.ledger.repository import Ledger, PendingEvent, PolicyDecision
from helpers import informant_secret_card, play_four_acts
from live_server import LiveServer
from servers import pg_bin


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
    await ledger.cases.create_case(case_id, "safe-combination", "en")

    def slow_commit(session) -> None:
        append_event(session, case_id, PendingEvent("memory.written", {}), 1)
        time.sleep(0.5)  # this transaction holds a lower event id, uncommitted, for a while

    slow = asyncio.ensure_future(ledger.runner.run_transaction(slow_commit))
    await asyncio.sleep(0.1)  # let the slow transaction take its id first
    await ledger.cases.change_case(case_id, [PendingEvent("case.created", {})], status="active")
    seen = [e.type for e in await ledger.events.events_after(case_id, 0)]
    await slow
    assert seen == ["memory.written", "case.created"]  # the earlier id was already committed


async def test_appends_of_different_cases_do_not_wait_for_each_other(engine: Engine) -> None:
    """No global lock on the hot path: a case whose transaction is still open holds up only itself."""
    ledger = Ledger(engine)
    held, other = "pgheld" + os.urandom(4).hex(), "pgfree" + os.urandom(4).hex()
    for case_id in (held, other):
        await ledger.cases.create_case(case_id, "safe-combination", "en")
    release = threading.Event()

    def open_transaction(session) -> None:
        append_event(session, held, PendingEvent("memory.written", {}), 1)
        assert release.wait(30), "never released"  # stays uncommitted until the other case has committed

    holding = asyncio.ensure_future(ledger.runner.run_transaction(open_transaction))
    try:
        # With one global append lock this would wait for `release`, which is only set afterwards.
        await asyncio.wait_for(ledger.cases.change_case(other, [PendingEvent("case.created", {})]), 10)
        assert [e.type for e in await ledger.events.events_after(other, 0)] == ["case.created"]
        assert await ledger.events.events_after(held, 0) == []  # the open transaction is invisible meanwhile
    finally:
        release.set()
        await holding
    assert [e.type for e in await ledger.events.events_after(held, 0)] == ["memory.written"]


async def test_no_live_cursor_skips_an_event_under_concurrent_appends(engine: Engine) -> None:
    """Eight writers over three cases while a reader follows each case by cursor, as a live stream does:
    every event committed must be read, in id order, exactly once."""
    ledger = Ledger(engine)
    cases = ["pgmany" + os.urandom(4).hex() for _ in range(3)]
    for case_id in cases:
        await ledger.cases.create_case(case_id, "safe-combination", "en")
    writers_done = asyncio.Event()

    async def write(n: int) -> None:
        for i in range(25):
            await ledger.cases.change_case(cases[(n + i) % 3], [PendingEvent("memory.written", {"n": n, "i": i})])

    async def follow(case_id: str) -> list[int]:
        cursor, seen = 0, []
        while True:
            finished = writers_done.is_set()  # read once more after the writers finished
            batch = await ledger.events.events_after(case_id, cursor)
            seen += [e.id for e in batch]
            cursor = seen[-1] if seen else cursor
            if finished and not batch:
                return seen

    readers = [asyncio.ensure_future(follow(case_id)) for case_id in cases]
    await asyncio.gather(*(write(n) for n in range(8)))
    writers_done.set()
    followed = await asyncio.gather(*readers)
    for case_id, seen in zip(cases, followed, strict=True):
        everything = [e.id for e in await ledger.events.events_after(case_id, 0, limit=1000)]
        assert seen == everything  # nothing skipped, nothing twice, in order
    assert sum(len(seen) for seen in followed) == 8 * 25


async def test_a_commit_on_any_connection_is_pushed_to_listeners(engine: Engine) -> None:
    ledger = Ledger(engine)
    listener = ledger.events.commit_listener()
    assert listener is not None
    woken = threading.Event()
    listener.start(woken.set)
    try:
        assert await asyncio.to_thread(woken.wait, 10)  # the first wake-up: connected
        assert listener.connected
        woken.clear()
        case_id = "pgnotify" + os.urandom(4).hex()
        await ledger.cases.create_case(case_id, "safe-combination", "en")
        assert not woken.is_set()  # no event, no notification
        started = time.monotonic()
        await ledger.cases.change_case(case_id, [PendingEvent("case.created", {})], status="active")
        assert await asyncio.to_thread(woken.wait, 5)
        assert time.monotonic() - started < 1.0
    finally:
        await asyncio.to_thread(listener.stop)
    assert not listener.connected


async def test_one_lease_holder_at_a_time_and_the_audit_trail_goes_with_its_case(engine: Engine) -> None:
    """The retention sweeper's lease on PostgreSQL: many owners racing for a free lease, exactly one wins
    (a conditional UPDATE or an INSERT whose unique-key conflict is a loss); audit rows cascade on erase."""
    ledger = Ledger(engine)
    name = "pg-lease-" + os.urandom(4).hex()
    won = await asyncio.gather(*(ledger.policy_audit.acquire_lease(name, f"owner-{i}", 60) for i in range(8)))
    assert sum(won) == 1
    holder = f"owner-{won.index(True)}"
    assert await ledger.policy_audit.acquire_lease(name, holder, 60)  # the holder renews
    await ledger.policy_audit.release_lease(name, holder)
    assert await ledger.policy_audit.acquire_lease(name, "owner-next", 60)

    case_id = "pgaudit" + os.urandom(4).hex()
    await ledger.cases.create_case(case_id, "safe-combination", "en")
    await ledger.policy_audit.record_policy(
        case_id, [PolicyDecision("write_rejected", "UNSAFE_INPUT", "long_term_knowledge", "operator", "informant")]
    )
    assert [r.decision.code for r in await ledger.policy_audit.policy_decisions(case_id)] == ["UNSAFE_INPUT"]
    await ledger.cases.delete_case(case_id, tombstone=False)
    assert await ledger.policy_audit.policy_decisions(case_id) == []


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
    assert pg_bin("initdb") and pg_bin("pg_ctl"), "install Debian's postgresql in .ci/run"
    assert Path("/usr/bin/psql").exists() or shutil.which("psql")
