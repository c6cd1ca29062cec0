"""The memory worker's lanes (memory/worker_lanes.py): a command's store call before a screen's refresh, an
overdue refresh every other turn, and the executor's contract (results, errors, shutdown). The wiring is
checked on the real gateway: which of its calls go in which lane."""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Future

import pytest

from bureau.api.deps import Services
from bureau.memory.store_runner import StoreRunner
from bureau.memory.types import CardDraft, MemoryUnavailableError
from bureau.memory.worker_lanes import Lane, LaneWorkers, lane_for
from bureau.scope.vocabulary import Purpose
from helpers import grant_of

DEADLINE_S = 10.0


@pytest.fixture
def workers() -> Iterator[LaneWorkers]:
    pool = LaneWorkers(1, thread_name_prefix="lanes-test", patience_s=60.0)
    yield pool
    pool.shutdown(wait=True, cancel_futures=True)


def blocked(pool: LaneWorkers) -> tuple[threading.Event, Future[None]]:
    """The one worker busy until the returned event is set, so that what is queued meanwhile is ordered by
    the lanes alone."""
    started, release = threading.Event(), threading.Event()

    def hold() -> None:
        started.set()
        release.wait(DEADLINE_S)

    held = pool.submit(hold)
    assert started.wait(DEADLINE_S)
    return release, held


def recorder(order: list[str], name: str) -> Callable[[], str]:
    def record() -> str:
        order.append(name)
        return name

    return record


def test_a_command_queued_after_the_screens_reads_runs_before_them(workers: LaneWorkers) -> None:
    release, _ = blocked(workers)
    order: list[str] = []
    queued = [workers.submit_in(Lane.REFRESH, recorder(order, f"refresh {n}")) for n in (1, 2)]
    queued += [workers.submit_in(Lane.COMMAND, recorder(order, "command"))]
    release.set()
    assert [job.result(DEADLINE_S) for job in queued] == ["refresh 1", "refresh 2", "command"]
    assert order == ["command", "refresh 1", "refresh 2"]


def test_overdue_reads_take_every_other_turn_so_neither_lane_starves() -> None:
    pool = LaneWorkers(1, thread_name_prefix="lanes-test", patience_s=0.0)  # every refresh is overdue at once
    try:
        release, _ = blocked(pool)  # a command ran last
        order: list[str] = []
        jobs = [pool.submit_in(Lane.REFRESH, recorder(order, f"R{n}")) for n in (1, 2)]
        jobs += [pool.submit_in(Lane.COMMAND, recorder(order, f"C{n}")) for n in (1, 2, 3)]
        release.set()
        for job in jobs:
            job.result(DEADLINE_S)
        assert order == ["R1", "C1", "R2", "C2", "C3"]
    finally:
        pool.shutdown()


def test_a_call_s_result_and_error_reach_its_caller_and_the_worker_goes_on(workers: LaneWorkers) -> None:
    def fail() -> None:
        raise ValueError("no such row")

    failed = workers.submit_in(Lane.REFRESH, fail)
    with pytest.raises(ValueError, match="no such row"):
        failed.result(DEADLINE_S)
    assert workers.submit(lambda a, b: a + b, 2, 3).result(DEADLINE_S) == 5


async def test_run_in_executor_queues_in_the_command_lane(workers: LaneWorkers) -> None:
    release, _ = blocked(workers)
    order: list[str] = []
    refresh = workers.submit_in(Lane.REFRESH, recorder(order, "refresh"))
    command = asyncio.get_running_loop().run_in_executor(workers, recorder(order, "command"))
    release.set()
    assert await command == "command"
    assert refresh.result(DEADLINE_S) == "refresh"
    assert order == ["command", "refresh"]


def test_shutdown_cancels_what_is_queued_and_refuses_new_calls() -> None:
    pool = LaneWorkers(1, thread_name_prefix="lanes-test")
    release, held = blocked(pool)
    queued = pool.submit_in(Lane.REFRESH, lambda: "never")
    closing = threading.Thread(target=pool.shutdown, kwargs={"cancel_futures": True})
    closing.start()
    with pytest.raises(CancelledError):
        queued.result(DEADLINE_S)
    assert closing.is_alive()  # it waits for the job that is running
    release.set()
    closing.join(DEADLINE_S)
    assert not closing.is_alive() and held.done()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(lambda: None)


def test_only_the_screens_views_yield() -> None:
    assert {purpose for purpose in Purpose if lane_for(purpose) is Lane.REFRESH} == {Purpose.OPERATOR, Purpose.STAGE}


async def test_the_gateway_queues_a_screen_s_read_behind_a_command_s(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the real store: the snapshot's and the stage's listings in the refresh lane, a question's search, a
    publish's read and every write in the command lane."""
    gateway, case = services.gateway, "t" + secrets.token_hex(8)
    operator = await grant_of(services, case, reads=["detective"], writes=["detective"])
    stage = await grant_of(services, case, reads=["bulletin_board"], purpose="stage")
    asked = await grant_of(services, case, reads=["detective", "bulletin_board"], purpose="interrogation")
    publish = await grant_of(services, case, reads=["detective"], purpose="publish")
    ours = {id(grant) for grant in (operator, stage, asked, publish)}
    lanes: list[tuple[str, Lane]] = []
    submit_in = gateway.runner.executor.submit_in

    def noted(lane: Lane, fn: Callable[..., object], /, *args: object) -> Future[object]:
        if args and id(args[0]) in ours:  # not the house's maintenance, which runs meanwhile
            lanes.append((getattr(fn, "__name__", "?"), lane))
        return submit_in(lane, fn, *args)

    monkeypatch.setattr(gateway.runner.executor, "submit_in", noted)
    await gateway.write(operator, CardDraft(content="The vault code is 7319.", topic="vault", kind="secret"))
    await gateway.list_spaces(operator)
    await gateway.listing(stage)
    await gateway.search(asked, "What is the vault code?", 5)
    await gateway.get(publish, "1")
    assert lanes == [
        ("write_many", Lane.COMMAND),
        ("list_spaces", Lane.REFRESH),
        ("listing", Lane.REFRESH),
        ("search", Lane.COMMAND),
        ("get", Lane.COMMAND),
    ]


async def test_a_screen_s_read_that_waited_its_deadline_in_the_queue_does_not_stall_the_store(
    services: Services,
) -> None:
    """A read that spent its whole deadline behind commands answers 503 and says the worker is busy: the
    store is not marked stalled (which would refuse every call until the next ping). A command's call that
    times out still stalls it. A runner of its own, never started: `run` needs only its worker."""
    runner = StoreRunner(services.settings, services.gateway.embedder, prepare=False)
    runner.call_timeout_s = 0.2
    ran: list[str] = []
    try:
        release, held = blocked(runner.executor)
        with pytest.raises(MemoryUnavailableError):
            await runner.run(ran.append, "read", lane=Lane.REFRESH)
        assert not runner.stalled
        with pytest.raises(MemoryUnavailableError):
            await runner.run(ran.append, "command")
        assert runner.stalled
        release.set()
        held.result(DEADLINE_S)
        assert ran == []  # both were cancelled in the queue: neither ran
    finally:
        runner.executor.shutdown(cancel_futures=True)
