"""SSE fan-out: N stage screens, each with its own stage session, on one case of a real `bureau serve`
(passcode mode, loopback). The operator commits whispers one after another; every screen must receive every
public event exactly once. Lag is measured from the event's commit (its `created_at` in the ledger) to its
receipt by each screen (wall clock, same machine); the screens run in worker processes (bench/screens.py).

    .venv/bin/python bench/sse_fanout.py --subscribers 500 --events 20 [--chart]
    .venv/bin/python bench/sse_fanout.py --events 200 --probe --slowest 10   # what delayed the slowest

`--slowest N` lists the N events whose last screen got them latest (first, median and last screen). With
`--probe` the server runs with bench/stall_probe loaded, and each of those events is shown with what the
server did while it was delivered (garbage collections, store calls, event-loop stalls, maintenance jobs),
followed by a summary of the whole live phase.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
from harness import (
    CHART_DIR,
    PASSCODE_MODE,
    Server,
    bar_chart,
    load_line,
    markdown_table,
    passcode_case,
    percentile,
    progress,
    verdict,
)
from screens import Screens, commit_times, delivery
from stalls import SLOWEST_HEADER, SUMMARY_HEADER, loop_cpu, probe_env, read, slowest_rows, summary

TARGET_P99_MS = 100.0


def measure(
    subscribers: int, events: int, gap_s: float, workers: int, probe: bool = False, heartbeat_s: float | None = None
) -> dict[str, Any]:
    server = Server(env=dict(PASSCODE_MODE))
    probe_file = server.data_dir / "stall-probe.jsonl"
    if probe:
        server.env |= probe_env(probe_file)
    if heartbeat_s is not None:
        server.env["BUREAU_HEARTBEAT_S"] = str(heartbeat_s)
    progress(f"starting bureau serve (passcode mode{', probed' if probe else ''}) in {server.data_dir}")
    server.start()
    try:
        row = _run(server, subscribers, events, gap_s, workers)
    finally:
        server.stop()
    row["probe"] = read(probe_file) if probe else []
    return row


def _run(server: Server, subscribers: int, events: int, gap_s: float, workers: int) -> dict[str, Any]:
    operator, stages, case_id = passcode_case(server, subscribers)
    # Each screen replays case.created, then gets one memory.written per whisper.
    screens = Screens(server, case_id, [s["Cookie"] for s in stages], workers, expected=1 + events)
    screens.connect()
    live_after = max(asyncio.run(commit_times(server, case_id)))
    rss = server.rss_mb()

    async def play() -> None:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            for i in range(events):
                body = {"role": "suspect", "text": f"Field note {i}: the courier changed trains at platform {i}."}
                response = await http.post(f"/api/cases/{case_id}/whispers", json=body, headers=operator)
                response.raise_for_status()
                if (i + 1) % 5 == 0 or i + 1 == events:
                    progress(f"whispered {i + 1}/{events}")
                await asyncio.sleep(gap_s)

    asyncio.run(play())
    committed = asyncio.run(commit_times(server, case_id))
    result = delivery(screens.results(), committed, live_after)
    return {
        "subscribers": subscribers,
        "events": events,
        "frames": len(result.lags_ms),
        "missed": result.missed,
        "duplicated": result.duplicated,
        "p50": percentile(result.lags_ms, 0.5),
        "p95": percentile(result.lags_ms, 0.95),
        "p99": percentile(result.lags_ms, 0.99),
        "max": max(result.lags_ms),
        "last_screen_p50": percentile(list(result.slowest_ms.values()), 0.5),
        "arrival_p50": percentile(result.arrival_lags_ms, 0.5),
        "arrival_p99": percentile(result.arrival_lags_ms, 0.99),
        "rss_mb": rss,
        "by_event": result.by_event,
        "arrival_by_event": result.arrival_by_event,
        "committed": committed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subscribers", type=int, default=500)
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--gap", type=float, default=0.25, help="seconds between whispers")
    parser.add_argument("--workers", type=int, default=2, help="subscriber processes")
    parser.add_argument("--chart", action="store_true", help=f"write {CHART_DIR / 'sse-fanout.svg'}")
    parser.add_argument("--probe", action="store_true", help="load bench/stall_probe into the server")
    parser.add_argument("--slowest", type=int, default=0, metavar="N", help="list the N slowest events")
    parser.add_argument("--save", type=Path, metavar="FILE", help="write every event's lags and commit time (JSON)")
    parser.add_argument(
        "--heartbeat",
        type=float,
        metavar="S",
        help="the server's BUREAU_HEARTBEAT_S (a little under --gap: "
        "every stream's heartbeat, and its sign-in check, falls just before each event)",
    )
    args = parser.parse_args()
    load_before = load_line()
    row = measure(args.subscribers, args.events, args.gap, args.workers, args.probe, args.heartbeat)
    print(f"before: {load_before}\nafter:  {load_line()}")
    header = ["screens", "events", "frames", "missed", "duplicated", "p50 ms", "p95 ms", "p99 ms", "max ms"]
    header += ["last screen p50 ms", "arrival p50 ms", "arrival p99 ms", "server RSS MB"]
    cells = [f"{row[k]:,}" for k in ("subscribers", "events", "frames", "missed", "duplicated")]
    keys = ("p50", "p95", "p99", "max", "last_screen_p50", "arrival_p50", "arrival_p99", "rss_mb")
    cells += [f"{row[k]:.1f}" for k in keys]
    print(markdown_table(header, [cells]))
    print(verdict("p99", row["p99"], TARGET_P99_MS, "ms"))
    if args.save:
        keys = ("by_event", "arrival_by_event", "committed", "probe")
        args.save.write_text(json.dumps({"load": [load_before, load_line()], **{k: row[k] for k in keys}}))
    if args.slowest:
        print(f"\nslowest {args.slowest} events (by their last screen):")
        rows = slowest_rows(row["by_event"], row["arrival_by_event"], row["committed"], row["probe"], args.slowest)
        print(markdown_table(SLOWEST_HEADER, rows))
    if args.probe:
        times = [row["committed"][i][1] for i in row["by_event"]]
        end = max(times) + max(row["max"], 0) / 1000
        print("\nserver while the screens were live (bench/stall_probe):")
        print(markdown_table(SUMMARY_HEADER, summary(row["probe"], min(times), end)))
        if (cpu := loop_cpu(row["probe"], set(row["by_event"]))) is not None:
            print(f"event loop thread per event (median): ran {cpu[0]:.1f} ms, waited for a CPU {cpu[1]:.1f} ms")
    if args.chart:
        title = f"SSE delivery lag, commit → receipt, {row['subscribers']} stage screens"
        names = (("p50", "p50"), ("p95", "p95"), ("p99", "p99"), ("max", "max"))
        names += (("arrival p50 (screen's socket)", "arrival_p50"), ("arrival p99 (screen's socket)", "arrival_p99"))
        bars = [(name, row[key]) for name, key in names]
        print(f"chart: {bar_chart(CHART_DIR / 'sse-fanout.svg', title, bars, 'ms', TARGET_P99_MS)}")


if __name__ == "__main__":
    main()
