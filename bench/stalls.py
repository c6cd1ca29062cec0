"""Lines the stall probe's records (bench/stall_probe) up against the slowest events of a run."""

from __future__ import annotations

import itertools
import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

PROBE_DIR = Path(__file__).resolve().parent / "stall_probe"


def probe_env(path: Path) -> dict[str, str]:
    """Environment for a `bureau serve` that loads the probe and writes to `path`."""
    paths = [str(PROBE_DIR), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {"PYTHONPATH": os.pathsep.join(paths), "BENCH_STALL_PROBE": str(path)}


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def describe(record: dict[str, Any]) -> str:
    kind, ms = record["kind"], record.get("ms", 0)
    if kind == "gc":
        walked = f", {record['objects']:,} objects" if "objects" in record else ""
        return f"gc gen{record['gen']} {ms:.0f} ms ({record['thread']}{walked})"
    if kind == "store":
        return f"store {record['name']} {ms:.0f} ms"
    if kind == "loop":
        return f"loop stalled {ms:.0f} ms (ran {record['ran_ms']:.0f}, runnable {record['runnable_ms']:.0f})"
    if kind == "held":
        return f"probe thread held off {ms:.0f} ms"
    return f"{kind} {record.get('name', '')} {ms:.0f} ms".replace("  ", " ")


def overlapping(records: list[dict[str, Any]], start: float, end: float) -> list[dict[str, Any]]:
    """Records (other than commits) whose span meets [start, end], oldest first."""
    spans = [r for r in records if r["kind"] != "commit"]
    return sorted((r for r in spans if r["t"] < end and r["t"] + r.get("ms", 0) / 1000 > start), key=lambda r: r["t"])


Committed = dict[int, tuple[str, float, bool]]


def slowest_rows(
    by_event: dict[int, list[float]],
    arrivals: dict[int, list[float]],
    committed: Committed,
    records: list[dict[str, Any]],
    n: int,
) -> list[list[str]]:
    """The `n` events whose last screen got them latest, with what the server did meanwhile (if probed)."""
    fed = {i: r["t"] for r in records if r["kind"] == "commit" for i in r["ids"]}
    first_commit = min(committed[i][1] for i in by_event)
    rows = []
    for event_id in sorted(by_event, key=lambda i: -max(by_event[i]))[:n]:
        lags = sorted(by_event[event_id])
        at = committed[event_id][1]
        meanwhile = overlapping(records, at, at + lags[-1] / 1000)
        to_feed = f"{(fed[event_id] - at) * 1000:.1f}" if event_id in fed else "–"
        cells = [str(event_id), f"{at - first_commit:.2f}", to_feed]
        cells += [f"{lags[0]:.1f}", f"{lags[len(lags) // 2]:.1f}", f"{lags[-1]:.1f}", f"{max(arrivals[event_id]):.1f}"]
        rows.append([*cells, "; ".join(describe(r) for r in meanwhile) or "–"])
    return rows


SLOWEST_HEADER = ["event", "at s", "commit → feed ms", "first screen ms", "median ms", "last screen ms"]
SLOWEST_HEADER += ["last arrival ms", "meanwhile"]


def summary(records: list[dict[str, Any]], start: float, end: float) -> list[list[str]]:
    """Per kind of record in [start, end]: how many, the longest, the total."""
    groups: dict[str, list[float]] = defaultdict(list)
    for r in overlapping(records, start, end):
        key = f"gc gen{r['gen']}" if r["kind"] == "gc" else r["kind"]
        key += f" {r['name']}" if r["kind"] in ("store", "job") else ""
        groups[key].append(r.get("ms", 0))
    return [[k, str(len(v)), f"{max(v):.1f}", f"{sum(v):.1f}"] for k, v in sorted(groups.items())]


SUMMARY_HEADER = ["while live", "count", "longest ms", "total ms"]


def loop_cpu(records: list[dict[str, Any]], live_ids: set[int]) -> tuple[float, float] | None:
    """Median CPU time the event loop's thread ran, and waited for a CPU, from one live commit to the next."""
    commits = [r for r in records if r["kind"] == "commit" and set(r["ids"]) & live_ids and "ran_ms" in r]
    if len(commits) < 2:
        return None
    ran = sorted(b["ran_ms"] - a["ran_ms"] for a, b in itertools.pairwise(commits))
    waited = sorted(b["runnable_ms"] - a["runnable_ms"] for a, b in itertools.pairwise(commits))
    return ran[len(ran) // 2], waited[len(waited) // 2]
