"""Does a store call keep other Python threads from running? While the memory worker makes N calls of each
kind against a real embedded seekdb (PowerMem), a ticker thread sleeps 1 ms at a time and records every time
it woke late. If a call releases the interpreter lock while it waits for seekdb, the ticker keeps ticking; if
it holds the lock, the ticker is held off for the length of the call — and so is the event loop, i.e. every
HTTP request and every live stream of the process. On a busy machine a tick is also late when the ticker
waits for a CPU: that time (Linux schedstat, "runnable") is taken out, so what is left is time the ticker
was blocked although it could have run — on the interpreter lock. A control call that sleeps in a thread
(which releases the lock) shows what is left on this machine when nothing holds the lock. Python code on
another thread delays a tick by at most the switch interval (5 ms); a late tick longer than that means one
call kept the lock throughout. The garbage collector is off while measuring, so no collection is counted.

    .venv/bin/python bench/store_lock.py --calls 200
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import threading
import time
from collections.abc import Awaitable, Callable

from harness import grant_over, load_line, markdown_table, percentile, progress, scratch_dir, vault_beside

TICK_S = 0.001
LATE_S = 0.0005  # a tick this much later than asked counts as held off


class Ticker:
    """A thread that sleeps `TICK_S` at a time and keeps the spans during which it could not run."""

    def __init__(self) -> None:
        self.held: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ticker", daemon=True)
        self._started = threading.Event()
        self._tid = 0

    def runnable_s(self) -> float:
        """Seconds the ticker has spent waiting for a CPU so far (Linux schedstat)."""
        with open(f"/proc/self/task/{self._tid}/schedstat") as stat:
            return int(stat.read().split()[1]) / 1e9

    def _run(self) -> None:
        self._tid = threading.get_native_id()
        self._started.set()
        while not self._stop.is_set():
            asleep = time.perf_counter()
            time.sleep(TICK_S)
            woke = time.perf_counter()
            if woke - asleep - TICK_S > LATE_S:
                self.held.append((asleep + TICK_S, woke))

    def held_within(self, start: float, end: float) -> tuple[float, float]:
        """(total, longest) seconds held off inside [start, end]."""
        spans = [min(b, end) - max(a, start) for a, b in self.held if a < end and b > start]
        return sum(spans), max(spans, default=0.0)

    def __enter__(self) -> Ticker:
        self._thread.start()
        self._started.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def measure(calls: int) -> list[list[str]]:
    from bureau.bootstrap.runtime import running
    from bureau.config import Settings
    from bureau.memory.types import CardDraft
    from bureau.scope.keys import role_scope

    settings = Settings(_env_file=None, data_dir=(data := scratch_dir("bench-lock-")), vault_dir=vault_beside(data))
    progress(f"opening the store in {settings.data_dir}")
    async with running(settings) as runtime:
        gateway = runtime.gateway
        scope = role_scope("c0ffee0000000000000000aa", "detective", "")
        grant = await grant_over(runtime.vault, scope)  # the store below the game: a case of its own keys
        drafts = [
            CardDraft(content=f"Ledger line {i}: crates at dock {i}.", topic="dock", kind="fact") for i in range(200)
        ]
        await gateway.write_many(grant, drafts)
        kinds: list[tuple[str, Callable[[int], Awaitable[object]]]] = [
            ("control: a thread sleeps 5 ms", lambda i: asyncio.to_thread(time.sleep, 0.005)),
            ("store ping (PowerMem get_all, limit 1)", lambda i: gateway.probe()),
            ("search one space, 200 cards (embedding + seekdb)", lambda i: gateway.search(grant, "dock?", 5)),
            (
                "write one card (embedding + seekdb)",
                lambda i: gateway.write(
                    grant, CardDraft(content=f"Note {i}: a van at gate {i}.", topic="gate", kind="fact")
                ),
            ),
        ]
        rows = []
        gc.disable()
        with Ticker() as ticker:
            for name, call in kinds:
                spans, runnable = [], 0.0
                for i in range(calls):
                    start, waited = time.perf_counter(), ticker.runnable_s()
                    await call(i)
                    spans.append((start, time.perf_counter()))
                    runnable += ticker.runnable_s() - waited
                progress(f"{name}: {calls} calls")
                durations = [b - a for a, b in spans]
                held = [ticker.held_within(a, b) for a, b in spans]
                late = sum(total for total, _ in held)
                blocked = max(0.0, late - runnable) / sum(durations)
                ms = [percentile(durations, q) * 1000 for q in (0.5, 0.99)]
                longest = max(longest for _, longest in held) * 1000
                cells = [f"{late / sum(durations):.0%}", f"{blocked:.0%}", f"{longest:.1f}"]
                rows.append([name, str(calls), *(f"{v:.1f}" for v in ms), *cells])
        gc.enable()
        return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    before = load_line()
    rows = asyncio.run(measure(args.calls))
    print(f"before: {before}\nafter:  {load_line()}")
    header = ["call on the memory worker", "calls", "p50 ms", "p99 ms", "ticker late (share of call time)"]
    header += ["ticker blocked, not waiting for a CPU (share)", "longest late tick ms"]
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()
