"""Soak: a real `bureau serve` (passcode mode, loopback) for a bounded time with S stage screens watching one
case (each its own session) while the operator asks R interrogations a second, sent at a steady rate
whatever the answers take (at most 64 in flight). At the end the case is erased, which ends every stream;
then: errors, every screen's missed and duplicated frames, delivery lag, and the server's memory before
and after. Self-stopping: the load runs for --seconds, every wait has a deadline.

    .venv/bin/python bench/soak.py --seconds 60 --subscribers 200 --rate 20
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from typing import Any

import httpx
from harness import (
    PASSCODE_MODE,
    Server,
    load_line,
    markdown_table,
    passcode_case,
    percentile,
    progress,
)
from screens import Screens, commit_times, delivery

MAX_IN_FLIGHT = 64
QUESTIONS = ["What is the safe combination?", "Where is the safe?", "Who changed the lock?", "Is the vault open?"]
ROLES = ["detective", "informant", "suspect"]


async def interrogate(
    server: Server, case_id: str, operator: dict[str, str], seconds: float, rate: float
) -> dict[str, Any]:
    """Send `rate` interrogations a second for `seconds`; never more than MAX_IN_FLIGHT at once."""
    statuses: Counter[int] = Counter()
    latencies: list[float] = []
    skipped = 0
    slots = asyncio.Semaphore(MAX_IN_FLIGHT)
    limits = httpx.Limits(max_connections=MAX_IN_FLIGHT + 4)
    async with httpx.AsyncClient(base_url=server.url, timeout=60, headers=operator, limits=limits) as http:

        async def ask(n: int) -> None:
            body = {"role": ROLES[n % len(ROLES)], "question": QUESTIONS[n % len(QUESTIONS)]}
            started = time.perf_counter()
            try:
                response = await http.post(f"/api/cases/{case_id}/interrogations", json=body)
                statuses[response.status_code] += 1
            except httpx.HTTPError as exc:
                statuses[-1] += 1  # a transport error: no answer at all
                progress(f"request failed: {type(exc).__name__}")
            finally:
                latencies.append((time.perf_counter() - started) * 1000)
                slots.release()

        tasks: list[asyncio.Task[None]] = []
        start = time.perf_counter()
        sent = 0
        next_report = 0.0
        while (due := time.perf_counter() - start) < seconds:
            for _ in range(int(due * rate) - sent):
                sent += 1
                if slots.locked():
                    skipped += 1  # the server is behind: counted, not queued without bound
                    continue
                await slots.acquire()
                tasks.append(asyncio.create_task(ask(sent)))
            if due >= next_report:
                progress(f"{due:.0f}/{seconds:.0f} s: {sent} sent, {sum(statuses.values())} answered")
                next_report += 10
            await asyncio.sleep(1 / rate / 2)
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - start
    answered = sum(statuses.values())
    return {"statuses": statuses, "latencies": latencies, "skipped": skipped, "rate": answered / elapsed}


def soak(seconds: float, subscribers: int, rate: float, workers: int) -> dict[str, Any]:
    server = Server(env=PASSCODE_MODE)
    progress(f"starting bureau serve (passcode mode) in {server.data_dir}")
    server.start()
    try:
        operator, stages, case_id = passcode_case(server, subscribers)
        screens = Screens(server, case_id, [s["Cookie"] for s in stages], workers)  # until the case is erased
        screens.connect()
        live_after = max(asyncio.run(commit_times(server, case_id)))
        rss_before = server.rss_mb()
        load = asyncio.run(interrogate(server, case_id, operator, seconds, rate))
        rss_after = server.rss_mb()
        committed = asyncio.run(commit_times(server, case_id))  # read before the erase removes them
        erased = httpx.delete(f"{server.url}/api/cases/{case_id}", headers=operator, timeout=60)
        erased.raise_for_status()
        streams = screens.results()
        last = max(committed)
        # The erase's own tombstone came after `last`: every stream must have ended on it.
        ended = sum(1 for got in streams if got and got[-1][0] > last)
        result = delivery([[f for f in got if f[0] <= last] for got in streams], committed, live_after)
        return {
            **load,
            "subscribers": subscribers,
            "events": len(committed),
            "delivery": result,
            "ended": ended,
            "rss_before": rss_before,
            "rss_after": rss_after,
        }
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--subscribers", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20.0, help="interrogations per second")
    parser.add_argument("--workers", type=int, default=2, help="screen processes")
    args = parser.parse_args()
    print(f"before: {load_line()}")
    row = soak(args.seconds, args.subscribers, args.rate, args.workers)
    print(f"after:  {load_line()}")
    result = row["delivery"]
    errors = sum(n for status, n in row["statuses"].items() if status != 200)
    header = ["seconds", "screens", "asked/s (target)", "answered", "errors", "not sent (behind)"]
    header += ["answer p50 ms", "answer p99 ms", "events", "frames", "missed", "duplicated"]
    header += ["lag p50 ms", "lag p99 ms", "streams ended by erase", "RSS before MB", "RSS after MB"]
    cells = [f"{args.seconds:g}", str(args.subscribers), f"{row['rate']:.1f} ({args.rate:g})"]
    cells += [f"{sum(row['statuses'].values()):,}", str(errors), str(row["skipped"])]
    cells += [f"{percentile(row['latencies'], q):.1f}" for q in (0.5, 0.99)]
    cells += [f"{row['events']:,}", f"{result.frames:,}", str(result.missed), str(result.duplicated)]
    cells += [f"{percentile(result.lags_ms, q):.1f}" for q in (0.5, 0.99)]
    cells += [f"{row['ended']}/{args.subscribers}", f"{row['rss_before']:.0f}", f"{row['rss_after']:.0f}"]
    print(markdown_table(header, [cells]))
    print(f"statuses: {dict(sorted(row['statuses'].items()))}")
    clean = errors == 0 and result.missed == 0 and result.duplicated == 0 and row["ended"] == args.subscribers
    print("no errors, no event lost or repeated" if clean else "PROBLEMS: see the table")
    kept_up = row["skipped"] == 0 and row["rate"] >= 0.95 * args.rate
    behind = f"did NOT keep up: {row['skipped']} sends skipped while {MAX_IN_FLIGHT} were in flight"
    verdict = "kept up" if kept_up else behind
    print(f"rate: {row['rate']:.1f} interrogations/s answered of {args.rate:g}/s asked ({verdict})")


if __name__ == "__main__":
    main()
