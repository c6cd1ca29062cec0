"""Stage screens for the benchmarks: many SSE subscribers, each with its own session, in worker processes.

Each stream is read with a minimal HTTP/1.1 client over asyncio streams (the server sends the stream
chunked), so the reading side costs as little as it can. Every frame is recorded as (event id, the time this
process read it, the time its bytes arrived in the screen's socket): the kernel stamps each arrival
(`SO_TIMESTAMPNS`), so the second time does not depend on when the reading process got a CPU. The gap
between the two is what the benchmark's own readers add. Commit times come from the ledger afterwards.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import socket
import struct
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from harness import Server, progress

READ_DEADLINE_S = 180.0  # every stream gives up after this, so a lost event cannot hang a run
DUPLICATE_GRACE_S = 1.0  # after the last expected frame, keep reading this long to catch duplicates
Received = list[tuple[int, float, float]]  # (event id, read at, arrived at), wall-clock seconds
SO_TIMESTAMPNS = 35  # Linux: stamp every arriving packet (struct timespec in the ancillary data)


class StampedSocket(socket.socket):
    """A socket whose reads (asyncio's transport calls `recv`) keep the kernel's arrival time of the newest
    bytes read."""

    arrived = 0.0

    def recv(self, size: int, flags: int = 0) -> bytes:
        data, ancillary, _flags, _address = self.recvmsg(size, socket.CMSG_SPACE(16), flags)
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = struct.unpack("qq", payload[:16])
                self.arrived = seconds + nanoseconds / 1e9
        return data


async def open_stream(
    port: int, path: str, cookie: str
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, StampedSocket]:
    sock = StampedSocket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\nCookie: {cookie}\r\n\r\n"
    writer.write(request.encode())
    await writer.drain()
    status = await reader.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"stream refused: {status!r}")
    while (await reader.readline()) not in (b"\r\n", b""):
        pass  # the response headers
    return reader, writer, sock


async def stream_frames(reader: asyncio.StreamReader, sock: StampedSocket) -> AsyncIterator[tuple[int, float, float]]:
    """(event id, read at, arrived at) per SSE frame of a chunked response, until the server ends it."""
    buffer = b""
    while True:
        size = int((await reader.readline()).strip() or b"0", 16)
        if size == 0:
            return
        buffer += (await reader.readexactly(size + 2))[:-2]
        received, arrived = time.time(), sock.arrived
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            if block.startswith(b"id: "):
                yield int(block[4 : block.index(b"\n")]), received, arrived


async def _screen(port: int, path: str, cookie: str, expected: int | None, ready: asyncio.Event) -> Received:
    """Read one stream: until `expected` distinct events (then a grace for duplicates), or, with None,
    until the server ends the stream (after `case.erased`)."""
    reader, writer, sock = await open_stream(port, path, cookie)
    got: Received = []
    seen: set[int] = set()
    frames = stream_frames(reader, sock)
    try:
        async with asyncio.timeout(READ_DEADLINE_S):
            async for frame in frames:
                got.append(frame)
                seen.add(frame[0])
                ready.set()  # the replayed first event: this stream is live
                if expected is not None and len(seen) >= expected:
                    break
        if expected is not None:
            try:
                async with asyncio.timeout(DUPLICATE_GRACE_S):
                    async for frame in frames:
                        got.append(frame)
            except TimeoutError:
                pass
    except TimeoutError:
        pass  # what is missing shows up in the result
    finally:
        writer.close()
    return got


def _worker(port: int, path: str, cookies: list[str], expected: int | None, queue: Any) -> None:
    async def run() -> list[Received]:
        readies = [asyncio.Event() for _ in cookies]
        tasks = [
            asyncio.create_task(_screen(port, path, c, expected, r)) for c, r in zip(cookies, readies, strict=True)
        ]
        await asyncio.gather(*(r.wait() for r in readies))
        queue.put(("ready", len(cookies)))
        return await asyncio.gather(*tasks)

    queue.put(("result", asyncio.run(run())))


@dataclass
class Screens:
    """`len(cookies)` stage streams of one case spread over `workers` processes."""

    server: Server
    case_id: str
    cookies: list[str]
    workers: int = 2
    expected: int | None = None

    def __post_init__(self) -> None:
        context = multiprocessing.get_context("fork")
        self._queue = context.Queue()
        path = f"/api/cases/{self.case_id}/stage/events"
        shares = [self.cookies[i :: self.workers] for i in range(self.workers)]
        args = [(self.server.port, path, share, self.expected, self._queue) for share in shares if share]
        self._processes = [context.Process(target=_worker, args=a) for a in args]

    def connect(self) -> None:
        """Start the workers; return once every stream has received its first (replayed) event."""
        for process in self._processes:
            process.start()
        live = 0
        while live < len(self.cookies):
            kind, count = self._queue.get(timeout=READ_DEADLINE_S)
            assert kind == "ready"
            live += count
            progress(f"{live}/{len(self.cookies)} screens connected")

    def results(self) -> list[Received]:
        """What every stream received, once all have finished."""
        streams: list[Received] = []
        for _ in self._processes:
            kind, result = self._queue.get(timeout=READ_DEADLINE_S + 30)
            assert kind == "result"
            streams += result
        for process in self._processes:
            process.join(timeout=30)
        return streams


async def commit_times(server: Server, case_id: str) -> dict[int, tuple[str, float, bool]]:
    """Every event of the case from the ledger: id → (type, commit time, sent to the stage at all)."""
    from bureau.api.delivery import project_event
    from bureau.config import Settings
    from bureau.ledger.database import create_ledger_engine
    from bureau.ledger.repository import Ledger
    from bureau.scope.audience import Audience

    url = Settings(_env_file=None, data_dir=server.data_dir).effective_database_url
    ledger = Ledger(create_ledger_engine(url))
    try:
        events = await ledger.events.events_after(case_id, 0, limit=10_000_000)
    finally:
        ledger.engine.dispose()
    return {
        e.id: (e.type, e.created_at.timestamp(), project_event(Audience.STAGE, e.type, e.payload) is not None)
        for e in events
    }


@dataclass
class Delivery:
    frames: int
    missed: int
    duplicated: int
    lags_ms: list[float]  # commit → read by the screen's process
    by_event: dict[int, list[float]]  # per live event: every screen's read lag
    arrival_lags_ms: list[float]  # commit → arrival in the screen's socket (no reader scheduling in it)
    arrival_by_event: dict[int, list[float]]

    @property
    def slowest_ms(self) -> dict[int, float]:
        """Per event: the lag of the last screen to read it."""
        return {event_id: max(lags) for event_id, lags in self.by_event.items()}


def delivery(streams: list[Received], committed: dict[int, tuple[str, float, bool]], live_after: int) -> Delivery:
    """Missed and duplicated frames against the stage-visible events; lags for events committed after the
    screens were live (id > `live_after`; earlier ones were replayed)."""
    public = {i for i, (_, _, visible) in committed.items() if visible}
    result = Delivery(0, 0, 0, [], {}, [], {})
    for got in streams:
        ids = [frame[0] for frame in got]
        result.frames += len(ids)
        result.missed += len(public - set(ids))
        result.duplicated += len(ids) - len(set(ids))
        for event_id, read_at, arrived_at in got:
            if event_id > live_after and event_id in committed:
                lag, arrival = ((t - committed[event_id][1]) * 1000 for t in (read_at, arrived_at))
                result.lags_ms.append(lag)
                result.by_event.setdefault(event_id, []).append(lag)
                result.arrival_lags_ms.append(arrival)
                result.arrival_by_event.setdefault(event_id, []).append(arrival)
    return result
