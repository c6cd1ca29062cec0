"""Cold start: from launching `bureau serve` to `/api/ready` answering 200, and to the first answer (a case
created, one question asked), on a fresh data directory (and a fresh vault) and again on a restart over the
same ones. With several `--checkout`s, their runs alternate (A B A B ...), so a budget against another
checkout (issue 34: a first start within today's ready time + 0.5 s) is read off one machine at one time.

    .venv/bin/python bench/cold_start.py --runs 3 [--chart]
    .venv/bin/python bench/cold_start.py --runs 5 --checkout main=/work/baseline --checkout new=.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import httpx
from harness import (
    CHART_DIR,
    Checkout,
    Server,
    bar_chart,
    load_line,
    markdown_table,
    named,
    parse_checkout,
    progress,
    scratch_dir,
    verdict,
)

TARGET_READY_S = 10.0


def first_answer(server: Server) -> float:
    """Seconds from launch until the first interrogation has answered."""
    with httpx.Client(base_url=server.url, timeout=120) as http:
        created = http.post("/api/cases", json={"scenario_id": "safe-combination"})
        created.raise_for_status()
        case_id = created.json()["case"]["id"]
        body = {"role": "informant", "question": "What is the safe combination?"}
        http.post(f"/api/cases/{case_id}/interrogations", json=body).raise_for_status()
    return time.perf_counter() - server.started_at


def one_start(data_dir: Path, checkout: Checkout | None) -> tuple[float, float]:
    server = Server(data_dir=data_dir, checkout=checkout)
    try:
        ready = server.start()
        return ready, first_answer(server)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--chart", action="store_true", help=f"write {CHART_DIR / 'cold-start.svg'}")
    parser.add_argument("--checkout", action="append", type=parse_checkout, default=[], help="LABEL=PATH (repeat)")
    args = parser.parse_args()
    checkouts: list[Checkout | None] = [named(c) for c in args.checkout] or [None]
    print(f"before: {load_line()}")
    kinds = ("fresh data dir", "restart, same data dir")
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for run in range(args.runs):
        for checkout in checkouts:
            label = checkout.label if checkout is not None else "this"
            data_dir = scratch_dir("bureau-bench-start-")
            for kind in kinds:
                ready, answered = one_start(data_dir, checkout)
                results.setdefault((label, kind), []).append((ready, answered))
                progress(
                    f"run {run + 1}/{args.runs}, {label}, {kind}: ready {ready:.1f} s, first answer {answered:.1f} s"
                )
    print(f"after:  {load_line()}")
    rows = []
    for (label, kind), runs in results.items():
        ready = [r for r, _ in runs]
        answered = [a for _, a in runs]
        rows.append([label, kind, str(len(runs)), f"{statistics.median(ready):.1f}", f"{max(ready):.1f}"])
        rows[-1] += [f"{statistics.median(answered):.1f}", f"{max(answered):.1f}"]
    header = ["code", "start", "runs", "ready median s", "ready max s", "first answer median s", "first answer max s"]
    print(markdown_table(header, rows))
    worst = max(r for runs in results.values() for r, _ in runs)
    print(verdict("ready (worst run)", worst, TARGET_READY_S, "s"))
    if args.chart:
        bars = []
        for (label, kind), runs in results.items():
            who = f"{label}, " if len(checkouts) > 1 else ""
            bars.append((f"{who}{kind}: ready", statistics.median(r for r, _ in runs)))
            bars.append((f"{who}{kind}: first answer", statistics.median(a for _, a in runs)))
        title = f"Cold start of bureau serve (median of {args.runs})"
        print(f"chart: {bar_chart(CHART_DIR / 'cold-start.svg', title, bars, 's', TARGET_READY_S)}")


if __name__ == "__main__":
    main()
