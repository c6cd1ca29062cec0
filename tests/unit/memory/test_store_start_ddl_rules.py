"""The rules of a store's start around seekdb's own start-up DDL, without a store: which errors are a DDL lock
wait timeout (retried) and when seekdb's start-up DDL counts as done. The real store's side is
tests/faults/test_store_start_ddl.py."""

from __future__ import annotations

from typing import Any

import pylibseekdb
import pytest
from sqlalchemy.exc import OperationalError

from bureau.memory import embedded_seekdb
from bureau.memory.embedded_seekdb import is_ddl_lock_timeout, retrying_ddl_lock_timeouts, start_up_ddl_done

LOCK_WAIT = "Lock wait timeout exceeded; try restarting transaction failed: code=1205"


def test_a_1205_is_recognised_raw_wrapped_or_chained() -> None:
    raw = pylibseekdb.SeekdbError(LOCK_WAIT)
    assert is_ddl_lock_timeout(raw)
    assert is_ddl_lock_timeout(OperationalError("CREATE VECTOR INDEX", {}, raw))
    try:
        try:
            raise raw
        except RuntimeError as inner:
            raise ValueError("PowerMem's own wrapper") from inner
    except ValueError as chained:
        assert is_ddl_lock_timeout(chained)
    remote = OperationalError("CREATE VECTOR INDEX", {}, Exception(1205, "Lock wait timeout exceeded"))
    assert is_ddl_lock_timeout(remote)


@pytest.mark.parametrize(
    "error",
    [
        pylibseekdb.SeekdbError("Table 'bureau.x' doesn't exist failed: code=1146"),
        RuntimeError("code=1205"),  # not seekdb's
        TimeoutError("Lock wait timeout exceeded"),
    ],
)
def test_other_errors_are_not_a_1205(error: Exception) -> None:
    assert not is_ddl_lock_timeout(error)


def test_retries_are_bounded_and_only_for_a_1205(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedded_seekdb, "_DDL_RETRY_PAUSE_S", 0.0)
    calls: list[int] = []

    def always_locked() -> None:
        calls.append(1)
        raise pylibseekdb.SeekdbError(LOCK_WAIT)

    settled: list[int] = []
    with pytest.raises(pylibseekdb.SeekdbError):
        retrying_ddl_lock_timeouts("a step", always_locked, lambda: settled.append(1))
    assert len(calls) == embedded_seekdb.DDL_ATTEMPTS
    assert len(settled) == embedded_seekdb.DDL_ATTEMPTS - 1  # seekdb settles before each retry, not after the last

    calls.clear()

    def missing_table() -> None:
        calls.append(1)
        raise pylibseekdb.SeekdbError("Table 'bureau.x' doesn't exist failed: code=1146")

    with pytest.raises(pylibseekdb.SeekdbError):
        retrying_ddl_lock_timeouts("a step", missing_table, lambda: settled.append(1))
    assert len(calls) == 1

    outcomes: list[Any] = [pylibseekdb.SeekdbError(LOCK_WAIT), "done"]

    def locked_once() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return str(outcome)

    settled.clear()
    assert retrying_ddl_lock_timeouts("a step", locked_once, lambda: settled.append(1)) == "done"
    assert settled == [1]


def test_a_step_that_meets_no_timeout_waits_for_nothing() -> None:
    settled: list[int] = []
    assert retrying_ddl_lock_timeouts("a step", lambda: "done", lambda: settled.append(1)) == "done"
    assert settled == []


class JobList:
    """A connection whose one query returns the given job statuses."""

    def __init__(self, statuses: list[str]) -> None:
        self.statuses = statuses

    def cursor(self) -> JobList:
        return self

    def execute(self, statement: str) -> None:
        assert "LOAD_MYSQL_SYS_PACKAGE" in statement

    def fetchall(self) -> list[tuple[str]]:
        return [(status,) for status in self.statuses]

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    ("statuses", "new_store", "done"),
    [
        ([], True, False),  # a new store registers the job a moment after it answers
        ([], False, True),  # an existing store without the job: nothing to wait for
        (["INPROGRESS"], False, False),
        (["SUCCESS"], True, True),
        (["FAILED"], True, True),  # over, if not well: the last attempt still runs
        (["SUCCESS", "INPROGRESS"], False, False),
    ],
)
def test_when_seekdbs_start_up_ddl_counts_as_done(statuses: list[str], new_store: bool, done: bool) -> None:
    assert start_up_ddl_done(JobList(statuses), new_store=new_store) is done
