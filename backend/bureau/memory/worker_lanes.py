"""The memory worker's two lanes: a player's command goes before a screen's refresh.

Embedded seekdb runs every call on one thread (store_runner.py), first come first served. When fifty players
publish within the same few seconds, every publish makes its case's screens read the case again, and a
question asked then waited behind those reads: the answers' p99 followed the burst (docs/performance.md, "The
tail at fifty players"). So the worker takes a command's call first. A screen's read waits while commands are queued;
once the oldest has waited `patience_s`, the screens' reads take every other turn until none is overdue, so
neither lane starves the other however busy it is. A screen has its live events already; its refetch only
completes them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from bureau.scope.vocabulary import Purpose

PATIENCE_S = 1.0  # the longest a screen's read yields to commands


class Lane(IntEnum):
    COMMAND = 0  # a whisper, a question, a publish, the store's upkeep: someone waits for it
    REFRESH = 1  # a screen's view of the case: yields to commands, up to PATIENCE_S


# The screens' grants (vault/grants.py). The operator's also reads a card before deleting it, and the snapshot a
# create or a reset answers with: those wait with the screens.
_REFRESH_PURPOSES = frozenset({Purpose.OPERATOR, Purpose.STAGE})


def lane_for(purpose: Purpose) -> Lane:
    return Lane.REFRESH if purpose in _REFRESH_PURPOSES else Lane.COMMAND


@dataclass(slots=True)
class _Job:
    future: Future[Any]
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    queued_at: float = field(default_factory=time.monotonic)

    def run(self) -> None:
        if not self.future.set_running_or_notify_cancel():
            return
        try:
            result = self.fn(*self.args)
        except BaseException as exc:  # handed to whoever awaits the future, as ThreadPoolExecutor does
            self.future.set_exception(exc)
            del self  # the traceback holds this frame: no cycle through the job to its arguments
        else:
            self.future.set_result(result)


class LaneWorkers(Executor):
    """`workers` threads that take the command lane's next job before the refresh lane's; an overdue refresh
    (queued `patience_s` ago) every other turn. `submit` (and `loop.run_in_executor`) queues a command."""

    def __init__(self, workers: int, thread_name_prefix: str, patience_s: float = PATIENCE_S) -> None:
        self._lanes: dict[Lane, deque[_Job]] = {lane: deque() for lane in Lane}
        self._ready = threading.Condition()
        self._closing = False
        self._patience_s = patience_s
        self._last_taken = Lane.COMMAND
        # Daemon threads: a store that hangs must not hold the process at exit. `close` shuts them down first.
        self._threads = [
            threading.Thread(target=self._work, name=f"{thread_name_prefix}_{n}", daemon=True) for n in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if kwargs:
            raise TypeError("a store call takes positional arguments only")
        return self.submit_in(Lane.COMMAND, fn, *args)

    def submit_in(self, lane: Lane, fn: Callable[..., Any], /, *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        with self._ready:
            if self._closing:
                raise RuntimeError("cannot schedule new calls after shutdown")
            self._lanes[lane].append(_Job(future, fn, args))
            self._ready.notify()
        return future

    def _next(self) -> _Job | None:
        """The next job to run; None once shut down and every queued job has been taken."""
        commands, refreshes = self._lanes[Lane.COMMAND], self._lanes[Lane.REFRESH]
        with self._ready:
            while not (commands or refreshes or self._closing):
                self._ready.wait()
            overdue = bool(refreshes) and time.monotonic() - refreshes[0].queued_at >= self._patience_s
            lane = (
                Lane.REFRESH
                if refreshes and (not commands or (overdue and self._last_taken is Lane.COMMAND))
                else Lane.COMMAND
            )
            if not self._lanes[lane]:
                return None
            self._last_taken = lane
            return self._lanes[lane].popleft()

    def _work(self) -> None:
        while (job := self._next()) is not None:
            job.run()
            del job  # the future holds the result now; this thread lets go of it before it waits again

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._ready:
            self._closing = True
            if cancel_futures:
                for jobs in self._lanes.values():
                    while jobs:
                        jobs.popleft().future.cancel()
            self._ready.notify_all()
        if wait:
            for thread in self._threads:
                if thread is not threading.current_thread():
                    thread.join()
