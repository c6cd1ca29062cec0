"""The ledger's SQLite writers of one process take turns in order (`WriterQueue`), holding no thread while
they wait, and a turn waited for longer than the busy timeout is LEDGER_BUSY. On a real SQLite file."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from bureau.ledger.database import BUSY_TIMEOUT_S, create_ledger_engine
from bureau.ledger.transactions import LedgerError, LedgerFault, TransactionRunner

WRITERS = 20
HOLD_S = 0.1  # each writer keeps the write lock this long


def a_runner(tmp_path: Path, busy_timeout_s: float = 15.0) -> TransactionRunner:
    engine = create_ledger_engine(f"sqlite:///{tmp_path / 'ledger.db'}", busy_timeout_s)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE notes (n INTEGER)"))
    return TransactionRunner(engine)


def writer(n: int, log: list[str], hold_s: float = HOLD_S):  # type: ignore[no-untyped-def]
    def write(session: Session) -> None:
        log.append(f"start {n}")
        session.execute(text("INSERT INTO notes VALUES (:n)"), {"n": n})
        time.sleep(hold_s)
        log.append(f"end {n}")

    return write


def starts(log: list[str]) -> list[str]:
    return [entry for entry in log if entry.startswith("start")]


def test_writers_take_turns_in_order_and_a_read_meanwhile_needs_no_turn(tmp_path: Path) -> None:
    runner = a_runner(tmp_path)
    log: list[str] = []

    async def read() -> None:
        await runner.read(lambda session: session.execute(text("SELECT count(*) FROM notes")).scalar())
        log.append("read")

    async def play() -> None:
        writes = [asyncio.create_task(runner.run_transaction(writer(n, log))) for n in range(WRITERS)]
        await asyncio.sleep(0)  # every writer has asked for its turn
        await read()
        await asyncio.gather(*writes)

    try:
        asyncio.run(play())
        assert starts(log) == [f"start {n}" for n in range(WRITERS)]  # in the order they asked
        # Waiting writers hold no worker thread: the read found one at once, while the first writers ran
        # (with every writer polling SQLite's lock on a thread of its own, it came after most of them).
        assert log.index("read") < log.index("start 3"), log
        with runner.engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM notes")).scalar() == WRITERS
    finally:
        runner.engine.dispose()


def test_a_turn_waited_for_longer_than_the_busy_timeout_is_ledger_busy_and_the_queue_goes_on(
    tmp_path: Path,
) -> None:
    """The queue's own timeout: SQLite's busy timeout is made longer here, so only the queue can refuse."""
    queue_timeout_s = 0.3
    runner = a_runner(tmp_path, busy_timeout_s=30.0)
    runner = TransactionRunner(runner.engine.execution_options(**{BUSY_TIMEOUT_S: queue_timeout_s}))
    log: list[str] = []

    async def play() -> None:
        holder = asyncio.create_task(runner.run_transaction(writer(0, log, hold_s=10 * queue_timeout_s)))
        await asyncio.sleep(0)
        started = time.monotonic()
        with pytest.raises(LedgerError) as refused:
            await runner.run_transaction(writer(1, log))
        waited = time.monotonic() - started
        assert refused.value.fault is LedgerFault.BUSY
        assert queue_timeout_s <= waited < 6 * queue_timeout_s  # the queue's timeout, not the holder's 3 s
        cancelled = asyncio.create_task(runner.run_transaction(writer(2, log)))
        await asyncio.sleep(0)
        cancelled.cancel()
        await holder
        await runner.run_transaction(writer(3, log))  # neither the refused nor the cancelled kept a turn

    try:
        asyncio.run(play())
        assert starts(log) == ["start 0", "start 3"]
    finally:
        runner.engine.dispose()


def test_a_cancelled_write_keeps_its_turn_until_its_transaction_ends(tmp_path: Path) -> None:
    """The caller gave up, but its thread may still commit: the next writer starts after it, not beside it."""
    runner = a_runner(tmp_path)
    log: list[str] = []

    async def play() -> None:
        first = asyncio.create_task(runner.run_transaction(writer(0, log, hold_s=5 * HOLD_S)))
        while "start 0" not in log:
            await asyncio.sleep(0.005)
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        await runner.run_transaction(writer(1, log))

    try:
        asyncio.run(play())
        assert log == ["start 0", "end 0", "start 1", "end 1"]
        with runner.engine.connect() as connection:  # the cancelled caller's transaction did commit
            assert connection.execute(text("SELECT count(*) FROM notes")).scalar() == 2
    finally:
        runner.engine.dispose()


def test_one_runner_serves_writers_on_several_event_loops(tmp_path: Path) -> None:
    """A lock belongs to the event loop it first waited on: each loop gets its own queue."""
    runner = a_runner(tmp_path)
    log: list[str] = []

    async def contend(first: int) -> None:
        await asyncio.gather(*(runner.run_transaction(writer(first + n, log, hold_s=0.01)) for n in range(3)))

    try:
        asyncio.run(contend(0))
        asyncio.run(contend(10))
        done: list[BaseException] = []
        thread = threading.Thread(target=lambda: asyncio.run(contend(20)) or done.append(StopIteration()))
        thread.start()
        thread.join(timeout=30)
        assert done, "the writers on a third loop, in another thread, did not finish"
        assert len(starts(log)) == 9
    finally:
        runner.engine.dispose()
