"""SSE fan-out: N stage screens, each with its own stage session, on one case of a real `bureau serve`
(passcode mode, loopback). The operator commits whispers one after another; every screen must receive every
public event exactly once. Lag is measured from the event's commit (its `created_at` in the ledger) to its
receipt by each screen (wall clock, same machine). Subscribers run in worker processes, each reading its
streams with a minimal HTTP/1.1 client, so the reading side costs as little as it can.

    .venv/bin/python bench/sse_fanout.py --subscribers 500 --events 20 [--chart]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time
from typing import Any

import httpx
from harness import (
    CHART_DIR,
    OPERATOR_PASSCODE,
    PASSCODE_MODE,
    STAGE_PASSCODE,
    Server,
    bar_chart,
    load_line,
    markdown_table,
    percentile,
    progress,
    session_headers,
    sign_in_many,
)

TARGET_P99_MS = 100.0
READ_DEADLINE_S = 120.0  # every stream gives up after this, so a lost event cannot hang the run
DUPLICATE_GRACE_S = 1.0  # after the last expected frame, keep reading this long to catch duplicates


async def _open(port: int, path: str, cookie: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nCookie: {cookie}\r\n\r\n"
    writer.write(request.encode())
    await writer.drain()
    status = await reader.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"stream refused: {status!r}")
    while (await reader.readline()) not in (b"\r\n", b""):
        pass  # headers (uvicorn sends the stream chunked)
    return reader, writer


async def _frames(reader: asyncio.StreamReader) -> Any:
    """Yield (event id, wall-clock receipt time) per SSE frame of a chunked response."""
    buffer = b""
    while True:
        size = int((await reader.readline()).strip() or b"0", 16)
        if size == 0:
            return
        buffer += (await reader.readexactly(size + 2))[:-2]
        received = time.time()
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            if block.startswith(b"id: "):
                yield int(block[4 : block.index(b"\n")]), received


async def _subscribe(port: int, path: str, cookie: str, expected: int, ready: asyncio.Event) -> list[tuple]:
    """One screen: read until it has `expected` distinct events, then a short grace for duplicates."""
    reader, writer = await _open(port, path, cookie)
    got: list[tuple[int, float]] = []
    seen: set[int] = set()
    frames = _frames(reader)
    try:
        async with asyncio.timeout(READ_DEADLINE_S):
            async for event_id, received in frames:
                got.append((event_id, received))
                seen.add(event_id)
                ready.set()  # the replayed first event: this stream is live
                if len(seen) >= expected:
                    break
        try:
            async with asyncio.timeout(DUPLICATE_GRACE_S):
                async for event_id, received in frames:
                    got.append((event_id, received))
        except TimeoutError:
            pass
    except TimeoutError:
        pass  # missed events show up in the result
    finally:
        writer.close()
    return got


def _worker(port: int, path: str, cookies: list[str], expected: int, queue: Any) -> None:
    async def run() -> list[list[tuple]]:
        readies = [asyncio.Event() for _ in cookies]
        tasks = [
            asyncio.create_task(_subscribe(port, path, c, expected, r)) for c, r in zip(cookies, readies, strict=True)
        ]
        await asyncio.gather(*(r.wait() for r in readies))
        queue.put(("ready", len(cookies)))
        return await asyncio.gather(*tasks)

    queue.put(("result", asyncio.run(run())))


async def _commit_times(server: Server, case_id: str) -> dict[int, tuple[str, float]]:
    from bureau.config import Settings
    from bureau.ledger.database import create_ledger_engine
    from bureau.ledger.repository import Ledger

    url = Settings(_env_file=None, data_dir=server.data_dir).effective_database_url
    ledger = Ledger(create_ledger_engine(url))
    try:
        events = await ledger.events_after(case_id, 0, limit=1_000_000)
    finally:
        ledger.engine.dispose()
    return {e.id: (e.type, e.created_at.timestamp()) for e in events}


def measure(subscribers: int, events: int, gap_s: float, workers: int) -> dict[str, Any]:
    server = Server(env=PASSCODE_MODE)
    progress(f"starting bureau serve (passcode mode) in {server.data_dir}")
    server.start()
    try:
        return _run(server, subscribers, events, gap_s, workers)
    finally:
        server.stop()


def _run(server: Server, subscribers: int, events: int, gap_s: float, workers: int) -> dict[str, Any]:
    async def setup() -> tuple[dict[str, str], list[dict[str, str]], str]:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            operator = await session_headers(http, OPERATOR_PASSCODE)
            stages = await sign_in_many(http, STAGE_PASSCODE, subscribers)
            created = await http.post("/api/cases", json={"scenario_id": "safe-combination"}, headers=operator)
            created.raise_for_status()
            return operator, stages, created.json()["case"]["id"]

    operator, stages, case_id = asyncio.run(setup())
    path = f"/api/cases/{case_id}/stage/events"
    expected = 1 + events  # the replayed case.created, then one memory.written per whisper
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    cookies = [s["Cookie"] for s in stages]
    shares = [cookies[i::workers] for i in range(workers)]
    processes = [context.Process(target=_worker, args=(server.port, path, share, expected, queue)) for share in shares]
    for process in processes:
        process.start()
    live = 0
    while live < subscribers:
        kind, count = queue.get(timeout=READ_DEADLINE_S)
        assert kind == "ready"
        live += count
        progress(f"{live}/{subscribers} screens connected")
    rss_before = server.rss_mb()

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
    streams: list[list[tuple]] = []
    for _ in processes:
        kind, result = queue.get(timeout=READ_DEADLINE_S + 30)
        assert kind == "result"
        streams += result
    for process in processes:
        process.join(timeout=30)
    committed = asyncio.run(_commit_times(server, case_id))
    whispered = {i for i, (kind, _) in committed.items() if kind == "memory.written"}
    public = whispered | {i for i, (kind, _) in committed.items() if kind == "case.created"}
    lags: list[float] = []
    slowest: dict[int, float] = {}
    missed = duplicated = 0
    for got in streams:
        ids = [i for i, _ in got]
        missed += len(public - set(ids))
        duplicated += len(ids) - len(set(ids))
        for event_id, received in got:
            if event_id in whispered:
                lag = (received - committed[event_id][1]) * 1000
                lags.append(lag)
                slowest[event_id] = max(slowest.get(event_id, 0.0), lag)
    return {
        "subscribers": subscribers,
        "events": events,
        "frames": len(lags),
        "missed": missed,
        "duplicated": duplicated,
        "p50": percentile(lags, 0.5),
        "p95": percentile(lags, 0.95),
        "p99": percentile(lags, 0.99),
        "max": max(lags),
        "last_screen_p50": percentile(list(slowest.values()), 0.5),
        "rss_mb": rss_before,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subscribers", type=int, default=500)
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--gap", type=float, default=0.25, help="seconds between whispers")
    parser.add_argument("--workers", type=int, default=2, help="subscriber processes")
    parser.add_argument("--chart", action="store_true", help=f"write {CHART_DIR / 'sse-fanout.svg'}")
    args = parser.parse_args()
    load_before = load_line()
    row = measure(args.subscribers, args.events, args.gap, args.workers)
    print(f"before: {load_before}\nafter:  {load_line()}")
    header = ["screens", "events", "frames", "missed", "duplicated", "p50 ms", "p95 ms", "p99 ms", "max ms"]
    header += ["last screen p50 ms", "server RSS MB"]
    cells = [f"{row[k]:,}" for k in ("subscribers", "events", "frames", "missed", "duplicated")]
    cells += [f"{row[k]:.1f}" for k in ("p50", "p95", "p99", "max", "last_screen_p50", "rss_mb")]
    print(markdown_table(header, [cells]))
    verdict = "met" if row["p99"] <= TARGET_P99_MS else "NOT met"
    print(f"target p99 ≤ {TARGET_P99_MS:.0f} ms: {verdict} ({row['p99']:.1f} ms)")
    if args.chart:
        title = f"SSE delivery lag, commit → receipt, {row['subscribers']} stage screens"
        bars = [(name, row[key]) for name, key in (("p50", "p50"), ("p95", "p95"), ("p99", "p99"), ("max", "max"))]
        print(f"chart: {bar_chart(CHART_DIR / 'sse-fanout.svg', title, bars, 'ms', TARGET_P99_MS)}")


if __name__ == "__main__":
    main()
