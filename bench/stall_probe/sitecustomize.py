"""A stall probe loaded into `bureau serve` by `bench/sse_fanout.py --probe` (on PYTHONPATH, for the server
process only); nothing in the product imports it. It writes JSON lines to $BENCH_STALL_PROBE:

- `loop`: the event loop did not run a callback posted from another thread within 15 ms, with how much of
  that time its thread spent on a CPU and waiting for one (Linux schedstat): little of either means the
  thread was blocked, e.g. on the interpreter lock held by another thread;
- `held`: this probe's own thread could not run for more than 20 ms (the interpreter lock held without a
  break, e.g. by a C extension that does not release it);
- `gc`: each collection of generation 1 or 2, or longer than 5 ms, on which thread it ran, and for a full
  collection how many tracked objects it walked;
- `store`: each call on the memory worker (queued, ran), `ledger`: each ledger transaction (queued: from its
  submission until a thread of the default executor takes its `before` step, which the probe always gives it;
  ran: from then until its caller has the result: the vault's work, a writer's turn in `WriterQueue`, its
  statements, SQLite's write lock, the commit, the way back to the loop; the probe's own step costs every
  transaction one more thread hop), `job`:
  each maintenance job, `commit`: each batch of events handed to the live feeds, with the event loop thread's
  CPU time so far (ran, runnable = waited for a CPU), so the difference between two commits says how much CPU
  the loop got, and waited for, between.

Times are wall-clock seconds, comparable with the ledger's `created_at` and the screens' receipt times.
"""

from __future__ import annotations

import os
import sys

OUT = os.environ.get("BENCH_STALL_PROBE")
POLL_S = 0.003
LOOP_STALL_S = 0.015
HELD_S = 0.02


def _install() -> None:
    import asyncio.base_events
    import gc
    import json
    import threading
    import time

    out = open(OUT, "a", buffering=1)  # noqa: SIM115 - open for the life of the process
    lock = threading.Lock()

    def write(kind: str, **fields: object) -> None:
        with lock:
            out.write(json.dumps({"kind": kind, **fields}) + "\n")

    def cpu_ms(tid: int) -> tuple[float, float]:
        with open(f"/proc/self/task/{tid}/schedstat") as stat:
            ran, waited, _ = stat.read().split()
        return int(ran) / 1e6, int(waited) / 1e6

    def watch(loop: asyncio.AbstractEventLoop, tid: int) -> None:
        before_sleep = time.perf_counter()
        while not loop.is_closed():
            held = time.perf_counter() - before_sleep - POLL_S
            if held > HELD_S:
                write("held", t=time.time() - held, ms=round(held * 1000, 1))
            ran = threading.Event()
            posted, wall, cpu = time.perf_counter(), time.time(), cpu_ms(tid)
            try:
                loop.call_soon_threadsafe(ran.set)
            except RuntimeError:
                return  # the loop closed
            ran.wait()
            stalled = time.perf_counter() - posted
            if stalled > LOOP_STALL_S:
                after = cpu_ms(tid)
                ms = {"ran_ms": round(after[0] - cpu[0], 1), "runnable_ms": round(after[1] - cpu[1], 1)}
                write("loop", t=wall, ms=round(stalled * 1000, 1), **ms)
            before_sleep = time.perf_counter()
            time.sleep(POLL_S)

    started: dict[str, float] = {}

    def collections(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            if info["generation"] == 2:  # how many objects a full collection walks (counted before timing it)
                started["objects"] = sum(len(gc.get_objects(generation)) for generation in range(3))
            started["t"] = time.time()
            return
        took = time.time() - started.get("t", time.time())
        if info["generation"] > 0 or took > 0.005:
            name = threading.current_thread().name
            walked = {"objects": started.pop("objects")} if "objects" in started else {}
            write("gc", t=started["t"], ms=round(took * 1000, 1), gen=info["generation"], thread=name, **walked)

    def instrument() -> None:
        from bureau.api import events
        from bureau.bootstrap import runtime
        from bureau.ledger import transactions
        from bureau.memory import store_runner

        run_on_worker = store_runner.StoreRunner.run  # every store call of the gateway goes through it

        async def timed_store_call(self, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
            submitted, ran = time.time(), {}

            def timed(*inner):  # type: ignore[no-untyped-def]
                ran["t"] = time.time()
                try:
                    return fn(*inner)
                finally:
                    ran["end"] = time.time()

            try:
                return await run_on_worker(self, timed, *args, **kwargs)
            finally:
                if "end" in ran:
                    name = getattr(fn, "__name__", "call")
                    queued = round((ran["t"] - submitted) * 1000, 1)
                    write("store", t=ran["t"], ms=round((ran["end"] - ran["t"]) * 1000, 1), name=name, queued_ms=queued)

        store_runner.StoreRunner.run = timed_store_call
        run_transaction = transactions.TransactionRunner.run  # every ledger transaction (on the default executor)

        async def timed_transaction(self, fn, *, read_only=False, before=None):  # type: ignore[no-untyped-def]
            submitted, ran = time.time(), {}

            def started():  # type: ignore[no-untyped-def]
                ran["t"] = time.time()
                if before is not None:
                    before()

            try:
                return await run_transaction(self, fn, read_only=read_only, before=started)
            finally:
                if "t" in ran:
                    name = getattr(fn, "__qualname__", "transaction").replace(".<locals>", "")
                    queued = round((ran["t"] - submitted) * 1000, 1)
                    ms = round((time.time() - ran["t"]) * 1000, 1)
                    write("ledger", t=ran["t"], ms=ms, name=name, queued_ms=queued, read_only=read_only)

        transactions.TransactionRunner.run = timed_transaction
        guarded = runtime.run_guarded

        async def timed_job(job, name):  # type: ignore[no-untyped-def]
            began = time.time()
            try:
                return await guarded(job, name)
            finally:
                write("job", t=began, ms=round((time.time() - began) * 1000, 1), name=name)

        runtime.run_guarded = timed_job
        notify = events.EventHub.notify  # the ledger hands it each batch of committed events (api/app.py)

        def timed_notify(self, committed):  # type: ignore[no-untyped-def]
            if committed:
                ran, runnable = cpu_ms(threading.get_native_id())
                write("commit", t=time.time(), ids=[e.id for e in committed], ran_ms=ran, runnable_ms=runnable)
            return notify(self, committed)

        events.EventHub.notify = timed_notify

    run_forever = asyncio.base_events.BaseEventLoop.run_forever
    watched: set[int] = set()

    def run_forever_watched(self):  # type: ignore[no-untyped-def]
        if not watched:
            instrument()
            gc.callbacks.append(collections)
        if id(self) not in watched:
            watched.add(id(self))
            args = (self, threading.get_native_id())
            threading.Thread(target=watch, args=args, name="stall-probe", daemon=True).start()
        return run_forever(self)

    asyncio.base_events.BaseEventLoop.run_forever = run_forever_watched


if OUT and "serve" in sys.argv:
    _install()
