"""Where a workshop room's slow answers came from, second by second (issue 36.4).

Reads what `bench/workshop.py --probe DIR` leaves in DIR for one run (`<code>-<players>.jsonl`: the stall
probe's lines from the server; `<code>-<players>-requests.jsonl`: every request of the room, when it was due
and answered) and prints:

- each kind of request: how many, latency p50 / p99 / max (from when it was due);
- one line per second of play (0 = the first question due) where an answer took longer than `--over` ms: the
  questions due then (how many, p50, max), the publishes due then, the store calls that started then (how
  many, the memory worker's busy ms, the longest wait in its queue), the ledger's transactions (how many, the
  longest from submission to result), and the probe's events (a maintenance
  job, a collection of generation 2 or one over 20 ms, the interpreter lock held, the event loop late);
- with `--between A B`: the store calls and ledger transactions that started in those seconds, by name
  (count, busy ms, mean).

    .venv/bin/python bench/workshop.py --players 50 --window 40 --warmup 10 --probe /tmp/probe
    .venv/bin/python bench/workshop_timeline.py /tmp/probe --between 28 33
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from harness import percentile
from stalls import read

SLOW_EVENT_MS = 20.0


def one_run(directory: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    requests = sorted(directory.glob("*-requests.jsonl"))
    if len(requests) != 1:
        raise SystemExit(f"{directory}: expected the files of one run, found {len(requests)} request logs")
    probe = requests[0].with_name(requests[0].name.removesuffix("-requests.jsonl") + ".jsonl")
    return read(probe), read(requests[0])


def play_start(requests: list[dict[str, Any]]) -> float:
    """Second 0 of the timeline: when the first answered question was due."""
    return min(r["due"] for r in requests if r["kind"] == "question" and r["done"])


def latency_ms(request: dict[str, Any]) -> float:
    return (request["done"] - request["due"]) * 1000


def kinds_table(requests: list[dict[str, Any]]) -> list[str]:
    lines = []
    for kind, n in Counter(r["kind"] for r in requests).most_common():
        took = [latency_ms(r) for r in requests if r["kind"] == kind and r["done"]]
        if took:
            p50, p99 = percentile(took, 0.5), percentile(took, 0.99)
            lines.append(f"{kind:18s} {n:5d}  p50 {p50:7.0f}  p99 {p99:7.0f}  max {max(took):7.0f} ms")
    return lines


def noted(event: dict[str, Any]) -> str | None:
    """A probe event worth naming beside a slow second, or None."""
    kind, ms = event["kind"], event.get("ms", 0.0)
    if kind == "job" and ms >= SLOW_EVENT_MS:
        return f"job {event['name']} {ms:.0f} ms"
    if kind == "gc" and (event["gen"] == 2 or ms >= SLOW_EVENT_MS):
        return f"gc{event['gen']} {ms:.0f} ms"
    if kind in ("held", "loop"):
        return f"{kind} {ms:.0f} ms"
    return None


def timeline(probe: list[dict[str, Any]], requests: list[dict[str, Any]], start: float, over_ms: float) -> list[str]:
    by_second: dict[str, dict[int, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for r in requests:
        if r["done"] and r["kind"] in ("question", "publish"):
            by_second[r["kind"]][int(r["due"] - start)].append(latency_ms(r))
    for event in probe:
        second = int(event["t"] - start)
        if event["kind"] in ("store", "ledger"):
            by_second[event["kind"]][second].append(event)
        elif (note := noted(event)) is not None:
            by_second["events"][second].append(note)
    lines = []
    for second, took in sorted(by_second["question"].items()):
        if max(took) <= over_ms:
            continue
        calls = by_second["store"].get(second, [])
        busy = sum(c["ms"] for c in calls)
        queued = max((c["queued_ms"] for c in calls), default=0.0)
        publishes = ", ".join(f"{ms:.0f}" for ms in by_second["publish"].get(second, []))
        ledger = by_second["ledger"].get(second, [])
        longest = max((t["queued_ms"] + t["ms"] for t in ledger), default=0.0)
        lines.append(
            f"{second:4d} s  questions {len(took):3d} p50 {percentile(took, 0.5):5.0f} max {max(took):5.0f} ms"
            f" | publishes [{publishes}] | store calls {len(calls):3d}, busy {busy:4.0f} ms, longest queued"
            f" {queued:4.0f} ms | ledger transactions {len(ledger):3d}, longest {longest:4.0f} ms"
            f" | {'; '.join(by_second['events'].get(second, []))}"
        )
    return lines


def calls_between(probe: list[dict[str, Any]], start: float, first: int, last: int) -> list[str]:
    totals: dict[str, list[float]] = defaultdict(list)
    for event in probe:
        if event["kind"] in ("store", "ledger") and first <= event["t"] - start < last:
            totals[f"{event['kind']} {event['name']}"].append(event["ms"])
    ranked = sorted(totals.items(), key=lambda item: -sum(item[1]))
    return [
        f"{name:60s} {len(ms):5d} calls {sum(ms):7.0f} ms busy, mean {sum(ms) / len(ms):5.1f} ms" for name, ms in ranked
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path, help="a `bench/workshop.py --probe` directory of one run")
    parser.add_argument("--over", type=float, default=150.0, help="list the seconds with an answer over this (ms)")
    parser.add_argument("--between", type=int, nargs=2, metavar=("A", "B"), help="the store calls of seconds A..B")
    args = parser.parse_args()
    probe, requests = one_run(args.directory)
    start = play_start(requests)
    print("\n".join(kinds_table(requests)))
    print()
    print("\n".join(timeline(probe, requests, start, args.over)) or f"no second with an answer over {args.over:.0f} ms")
    if args.between:
        print()
        print("\n".join(calls_between(probe, start, *args.between)))


if __name__ == "__main__":
    main()
