"""Publish contention: P `bureau serve` processes over one data directory (embedded seekdb + SQLite ledger),
C concurrent publishes of the same card sent to each at once. Exactly one board copy must come out of every
round; a 409 PUBLICATION_PENDING is retried after its Retry-After, as a client should. Latency is from
sending to the final success, retries included.

    .venv/bin/python bench/publish_contention.py --processes 4 --concurrency 25 --rounds 5 [--chart]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from harness import CHART_DIR, Server, bar_chart, load_line, markdown_table, percentile, progress, verdict

TARGET_P99_MS = 250.0
MAX_RETRIES = 10


async def publish_until_done(http: httpx.AsyncClient, url: str, body: dict[str, str]) -> tuple[float, list[int]]:
    """One client: publish, retry a 409 after its Retry-After; (ms to success, every status seen)."""
    started = time.perf_counter()
    statuses: list[int] = []
    for _ in range(MAX_RETRIES):
        response = await http.post(url, json=body)
        statuses.append(response.status_code)
        if response.status_code in (200, 201):
            break
        if response.status_code != 409:
            raise RuntimeError(f"publish answered {response.status_code}: {response.text[:300]}")
        await asyncio.sleep(float(response.headers.get("retry-after", "1")))
    return (time.perf_counter() - started) * 1000, statuses


async def contend(servers: list[Server], concurrency: int, rounds: int) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=len(servers) * concurrency + 10)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        first = servers[0].url
        created = await http.post(f"{first}/api/cases", json={"scenario_id": "safe-combination"})
        created.raise_for_status()
        case_id = created.json()["case"]["id"]
        latencies: list[float] = []
        statuses: Counter[int] = Counter()
        copies_per_round: list[int] = []
        for round_ in range(rounds):
            text = f"Round {round_}: the package is in locker {round_ + 10}."
            whisper = await http.post(f"{first}/api/cases/{case_id}/whispers", json={"role": "informant", "text": text})
            whisper.raise_for_status()
            card_id = whisper.json()["card"]["id"]
            body = {"role": "informant", "card_id": card_id}
            calls = [
                publish_until_done(http, f"{server.url}/api/cases/{case_id}/publications", body)
                for server in servers
                for _ in range(concurrency)
            ]
            for took, seen in await asyncio.gather(*calls):
                latencies.append(took)
                statuses.update(seen)
            snapshot = (await http.get(f"{servers[-1].url}/api/cases/{case_id}")).json()
            board = snapshot["spaces"]["bulletin_board"]
            copies = sum(1 for card in board if (card.get("source") or {}).get("card_id") == card_id)
            copies_per_round.append(copies)
            progress(f"round {round_ + 1}/{rounds}: {len(calls)} publishes, {copies} board copy(ies)")
    return {
        "publishes": len(latencies),
        "statuses": dict(sorted(statuses.items())),
        "copies": copies_per_round,
        "p50": percentile(latencies, 0.5),
        "p95": percentile(latencies, 0.95),
        "p99": percentile(latencies, 0.99),
        "max": max(latencies),
    }


def measure(processes: int, concurrency: int, rounds: int) -> dict[str, Any]:
    data_dir = Path(tempfile.mkdtemp(prefix="bureau-bench-publish-"))
    servers = [Server(data_dir=data_dir) for _ in range(processes)]
    try:
        for i, server in enumerate(servers):
            took = server.start()
            progress(f"server {i + 1}/{processes} ready in {took:.1f} s on port {server.port}")
        return asyncio.run(contend(servers, concurrency, rounds))
    finally:
        for server in servers:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=25, help="concurrent publishes per process")
    parser.add_argument("--rounds", type=int, default=5, help="cards, each published by every client")
    parser.add_argument("--chart", action="store_true", help=f"write {CHART_DIR / 'publish-contention.svg'}")
    args = parser.parse_args()
    print(f"before: {load_line()}")
    row = measure(args.processes, args.concurrency, args.rounds)
    print(f"after:  {load_line()}")
    header = ["processes × concurrent", "rounds", "publishes", "statuses seen", "board copies per round"]
    header += ["p50 ms", "p95 ms", "p99 ms", "max ms"]
    cells = [f"{args.processes} × {args.concurrency}", str(args.rounds), f"{row['publishes']:,}"]
    cells += [", ".join(f"{k}: {v}" for k, v in row["statuses"].items()), ", ".join(map(str, row["copies"]))]
    cells += [f"{row[k]:.1f}" for k in ("p50", "p95", "p99", "max")]
    print(markdown_table(header, [cells]))
    exactly_one = all(c == 1 for c in row["copies"])
    print(f"exactly one board copy per round: {'yes' if exactly_one else 'NO'}")
    print(verdict("p99", row["p99"], TARGET_P99_MS, "ms"))
    if args.chart:
        title = f"Publish under contention: {args.processes} processes × {args.concurrency} concurrent, one card"
        bars = [(q, row[q]) for q in ("p50", "p95", "p99", "max")]
        print(f"chart: {bar_chart(CHART_DIR / 'publish-contention.svg', title, bars, 'ms', TARGET_P99_MS)}")


if __name__ == "__main__":
    main()
