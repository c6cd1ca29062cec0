"""Publish contention: P `bureau serve` processes over one data directory (embedded seekdb + SQLite ledger),
C concurrent publishes of the same card sent to each at once. Exactly one board copy must come out of every
round; a 409 PUBLICATION_PENDING is retried after its Retry-After, as a client should. Latency is from
sending to the final success, retries included.

Each client has its own keep-alive connection, opened before its round, and is the lean HTTP/1.1 client of
`bench/http1.py` (`--client httpx` for httpx's AsyncClient: it costs the client process 7–9 ms of CPU per
publish on this machine, so 100 at once from one process measure mostly the client). A warm-up round (not
counted) first lets every process serve the route once: FastAPI builds a router's route table on its first
request.

    .venv/bin/python bench/publish_contention.py --processes 4 --concurrency 25 --rounds 5 [--chart]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from harness import (
    CHART_DIR,
    Server,
    bar_chart,
    load_line,
    markdown_table,
    own_cpu_ms,
    percentile,
    progress,
    scratch_dir,
    verdict,
)
from http1 import Connection

TARGET_P99_MS = 250.0
MAX_RETRIES = 10
Send = Callable[[], Awaitable[tuple[int, str | None, str]]]  # one request: (status, Retry-After, body text)


async def publish_until_done(send: Send) -> tuple[float, list[int]]:
    """One client: publish, retry a 409 after its Retry-After; (ms to success, every status seen)."""
    started = time.perf_counter()
    statuses: list[int] = []
    for _ in range(MAX_RETRIES):
        status, retry_after, text = await send()
        statuses.append(status)
        if status in (200, 201):
            break
        if status != 409:
            raise RuntimeError(f"publish answered {status}: {text[:300]}")
        await asyncio.sleep(float(retry_after or "1"))
    return (time.perf_counter() - started) * 1000, statuses


async def lean_clients(connections: list[Connection], path: str, body: dict[str, str]) -> list[Send]:
    """One sender per connection, opened now (before the round's clock starts)."""
    await asyncio.gather(*(c.open() for c in connections))

    def sender(connection: Connection) -> Send:
        request = Connection.encode("POST", path, f"127.0.0.1:{connection.port}", body)

        async def send() -> tuple[int, str | None, str]:
            reply = await connection.send(request)
            return reply.status, reply.headers.get("retry-after"), reply.body.decode(errors="replace")

        return send

    return [sender(c) for c in connections]


def httpx_clients(
    http: httpx.AsyncClient, servers: list[Server], concurrency: int, path: str, body: dict[str, str]
) -> list[Send]:
    def sender(url: str) -> Send:
        async def send() -> tuple[int, str | None, str]:
            response = await http.post(url, json=body)
            return response.status_code, response.headers.get("retry-after"), response.text

        return send

    return [sender(server.url + path) for server in servers for _ in range(concurrency)]


async def contend(servers: list[Server], concurrency: int, rounds: int, client: str) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=len(servers) * concurrency + 10)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        first = servers[0].url
        created = await http.post(f"{first}/api/cases", json={"scenario_id": "safe-combination"})
        created.raise_for_status()
        case_id = created.json()["case"]["id"]
        latencies: list[float] = []
        statuses: Counter[int] = Counter()
        copies_per_round: list[int] = []
        cpu = {"client": 0.0, "servers": 0.0}  # CPU ms spent during the counted rounds
        for round_ in range(-1, rounds):  # round -1: the warm-up, not counted
            text = f"Round {round_}: the package is in locker {round_ + 10}."
            whisper = await http.post(f"{first}/api/cases/{case_id}/whispers", json={"role": "informant", "text": text})
            whisper.raise_for_status()
            card_id = whisper.json()["card"]["id"]
            body = {"role": "informant", "card_id": card_id}
            path = f"/api/cases/{case_id}/publications"
            connections = [Connection("127.0.0.1", s.port) for s in servers for _ in range(concurrency)]
            if client == "httpx":
                connections, senders = [], httpx_clients(http, servers, concurrency, path, body)
            else:
                senders = await lean_clients(connections, path, body)
            client_cpu, servers_cpu = own_cpu_ms(), sum(s.cpu_ms() for s in servers)
            results = await asyncio.gather(*(publish_until_done(send) for send in senders))
            client_cpu, servers_cpu = own_cpu_ms() - client_cpu, sum(s.cpu_ms() for s in servers) - servers_cpu
            for connection in connections:
                connection.close()
            snapshot = (await http.get(f"{servers[-1].url}/api/cases/{case_id}")).json()
            board = snapshot["spaces"]["bulletin_board"]
            copies = sum(1 for card in board if (card.get("source") or {}).get("card_id") == card_id)
            if round_ < 0:
                progress(f"warm-up round: {len(results)} publishes, {copies} board copy(ies), not counted")
                continue
            for took, seen in results:
                latencies.append(took)
                statuses.update(seen)
            cpu["client"] += client_cpu
            cpu["servers"] += servers_cpu
            copies_per_round.append(copies)
            progress(f"round {round_ + 1}/{rounds}: {len(results)} publishes, {copies} board copy(ies)")
    return {
        "publishes": len(latencies),
        "statuses": dict(sorted(statuses.items())),
        "copies": copies_per_round,
        "p50": percentile(latencies, 0.5),
        "p95": percentile(latencies, 0.95),
        "p99": percentile(latencies, 0.99),
        "max": max(latencies),
        "client_cpu": cpu["client"] / len(latencies),
        "servers_cpu": cpu["servers"] / len(latencies),
    }


def measure(processes: int, concurrency: int, rounds: int, client: str) -> dict[str, Any]:
    data_dir = scratch_dir("bureau-bench-publish-")
    servers = [Server(data_dir=data_dir) for _ in range(processes)]
    try:
        for i, server in enumerate(servers):
            took = server.start()
            progress(f"server {i + 1}/{processes} ready in {took:.1f} s on port {server.port}")
        return asyncio.run(contend(servers, concurrency, rounds, client))
    finally:
        for server in servers:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=25, help="concurrent publishes per process")
    parser.add_argument("--rounds", type=int, default=5, help="cards, each published by every client")
    parser.add_argument("--client", choices=("lean", "httpx"), default="lean", help="the clients' HTTP library")
    parser.add_argument("--chart", action="store_true", help=f"write {CHART_DIR / 'publish-contention.svg'}")
    args = parser.parse_args()
    print(f"before: {load_line()}")
    row = measure(args.processes, args.concurrency, args.rounds, args.client)
    print(f"after:  {load_line()}")
    header = ["processes × concurrent", "client", "rounds", "publishes", "statuses seen", "board copies per round"]
    header += ["p50 ms", "p95 ms", "p99 ms", "max ms", "CPU ms per publish: servers", "client"]
    cells = [f"{args.processes} × {args.concurrency}", args.client, str(args.rounds), f"{row['publishes']:,}"]
    cells += [", ".join(f"{k}: {v}" for k, v in row["statuses"].items()), ", ".join(map(str, row["copies"]))]
    cells += [f"{row[k]:.1f}" for k in ("p50", "p95", "p99", "max", "servers_cpu", "client_cpu")]
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
