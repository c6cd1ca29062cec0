"""Workshop (issue 36): one server for a room of N players, for several checkouts of the code in one run.

For each N in `--players` and each `--checkout` (default: this one), in that order, so that every checkout
meets the machine in the same state at each N: a real `bureau serve` of that checkout's backend (its own
`.venv` if it has one, else this Python with `PYTHONPATH=<checkout>/backend`; which code was imported is
checked), passcode mode, on a fresh data directory, started, then left until it is quiet. One case is played
through every step first and not counted (whisper, a question to each role, a publish, the screens' reads),
so that what every server loads on first use is in the idle memory. Then the room (bench/room.py) plays
from a process of its own: N players, each with their own session, case, console stream and stage stream,
a question every `--interval` s (open loop), a publish after every `--publish-every`-th, and the screens'
refetches as the web app makes them; a presenter's console open on the first case. After `--warmup` s,
`--window` s are measured:

- questions/s asked and answered in the window; answer p50 / p95 / p99 from when each question was due;
- stage lag: from the commit of each answer's stage event (`retrieval.completed`: the stage's part of an
  answer; `answer.completed` is the console's) to its receipt by the player's stage screen; commit times are
  the events' `created_at` in the server's ledger (its SQLite file), read after the run, as
  bench/sse_fanout.py does;
- errors: every non-2xx and transport error, every answer missing at the deadline or later than the
  interval, every stream dropped, every event a screen missed or got twice (errors in setup, warm-up and
  the tail are printed apart);
- server RSS: of the `bureau serve` process, sampled every second in the window (the peak) and at its end;
  the embedded seekdb server, a child process, apart;
- memory per live case: (the server's RSS at the window's end − its RSS once idle after the uncounted case)
  / N: every player's case is live then, with its two streams.

Stdout is the result (tables and the targets), stderr the progress.

    .venv/bin/python bench/workshop.py --players 5,10 --window 20 --checkout main=/work/baseline --checkout .
    .venv/bin/python bench/workshop.py                   # 10, 25, 50, 100 players, 60 s each: a long run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import resource
import shutil
import sqlite3
import time
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from queue import Empty
from typing import Any

import httpx
from harness import (
    CHART_DIR,
    OPERATOR_PASSCODE,
    PASSCODE_MODE,
    REPO,
    Checkout,
    Series,
    Server,
    line_chart,
    load_line,
    markdown_table,
    named,
    parse_checkout,
    percentile,
    progress,
    session_headers,
)
from room import ROLES, Plan, RoomLog, play_room
from stalls import probe_env

from bureau.api.delivery import project_event
from bureau.scope.audience import Audience

# The targets, at 50 players and a question per player every 3 s.
TARGET_PLAYERS = 50
TARGET_P50_MS, TARGET_P99_MS, TARGET_STAGE_LAG_P99_MS = 50.0, 150.0, 100.0
TARGET_RSS_MB = 1024.0
TARGET_GROWTH, GROWTH_FROM, GROWTH_TO = 2.0, 25, 100  # p99 at 100 players within 2× of 25
STAGE_ANSWER_EVENT, CONSOLE_ANSWER_EVENT = "retrieval.completed", "answer.completed"
SETUP_DEADLINE_S = 900.0  # for N players to sign in, create their cases and open their screens
SAMPLE_EVERY_S = 1.0
ERROR_KINDS = ("non-2xx", "transport", "no answer", "late", "stream drop", "frame missed", "frame repeated")
COLOURS = ("#2e86c1", "#c0392b", "#27ae60", "#8e44ad", "#d35400")


@dataclass(frozen=True)
class Commit:
    """An event of a player's case as the ledger holds it."""

    case_id: str
    type: str
    at: float  # wall-clock seconds
    on_stage: bool  # the delivery gate sends it to the stage


@dataclass
class Row:
    """Everything measured for one checkout at one N."""

    code: str
    players: int
    asked_per_s: float
    answered_per_s: float
    p50: float
    p95: float
    p99: float
    stage_lag_p50: float
    stage_lag_p99: float
    stage_arrival_p99: float
    console_lag_p99: float
    errors: dict[str, int]  # in the window, by kind
    errors_outside: dict[str, int]  # in setup, warm-up and the tail
    publish_p50: float
    publish_p99: float
    refetch_p50: float
    refetch_p99: float
    rss_idle: float
    rss_peak: float
    rss_end: float
    store_idle: float
    store_end: float
    server_cores: float  # CPU of the server and its store in the window, in cores
    players_cores: float  # CPU of the room's process in the window, in cores
    send_delay_p99: float  # how late the room sent its questions: its own lag
    setup_s: float

    @property
    def error_total(self) -> int:
        return sum(self.errors.values())

    @property
    def per_case_mb(self) -> float:
        return (self.rss_end - self.rss_idle) / self.players

    @property
    def server_cpu_per_answer_ms(self) -> float:
        """CPU of the server and its store per question answered in the window, the requests it causes included."""
        return self.server_cores / self.answered_per_s * 1000 if self.answered_per_s else float("nan")

    @property
    def store_per_case_mb(self) -> float:
        return (self.store_end - self.store_idle) / self.players


# ----- the arguments ---------------------------------------------------------------------------------------------


def parse_players(text: str) -> list[int]:
    """ "10,25,50,100" → [10, 25, 50, 100]: positive, each once, in order."""
    counts = sorted({int(part) for part in text.split(",") if part.strip()})
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of player counts, each at least 1")
    return counts


# ----- the figures -----------------------------------------------------------------------------------------------


def inside(at: float, window: tuple[float, float]) -> bool:
    return window[0] <= at < window[1]


def pct(values: list[float], q: float) -> float:
    return percentile(values, q) if values else float("nan")


def error_counts(log: RoomLog, commits: dict[int, Commit], interval_s: float) -> tuple[Counter[str], Counter[str]]:
    """Every error of the run by kind: (in the window, outside it). A request belongs where it was due, a
    drop where it happened, a missed or repeated frame where its event was committed."""
    found: list[tuple[str, float]] = []
    for outcome in log.outcomes:
        if outcome.status == -1:
            found.append(("transport", outcome.due))
        elif outcome.status == 0:
            found.append(("no answer", outcome.due))
        elif not outcome.ok:
            found.append(("non-2xx", outcome.due))
        elif outcome.kind == "question" and outcome.ms > interval_s * 1000:
            found.append(("late", outcome.due))
    for screen in log.screens:
        found += [("stream drop", at) for at, _ in screen.drops]
        received = Counter(event_id for event_id, _, _ in screen.frames)
        for event_id, commit in commits.items():
            seen = commit.case_id == screen.case_id and (screen.audience == "console" or commit.on_stage)
            if seen and commit.at < screen.closed and event_id not in received:
                found.append(("frame missed", commit.at))
        for event_id, times in received.items():
            if times > 1 and event_id in commits:
                found += [("frame repeated", commits[event_id].at)] * (times - 1)
    window, outside = Counter[str](), Counter[str]()
    for kind, at in found:
        (window if inside(at, log.window) else outside)[kind] += 1
    return window, outside


def lags_ms(
    log: RoomLog, commits: dict[int, Commit], audience: str, event_type: str, arrival: bool = False
) -> list[float]:
    """From commit to receipt, for the events of `event_type` committed in the window, on every screen of
    `audience`: read by the room's process, or (`arrival`) arrived in the screen's socket."""
    lags = []
    for screen in log.screens:
        if screen.audience != audience:
            continue
        for event_id, read_at, arrived_at in screen.frames:
            commit = commits.get(event_id)
            if commit and commit.type == event_type and inside(commit.at, log.window):
                lags.append(((arrived_at if arrival else read_at) - commit.at) * 1000)
    return lags


def read_commits(data_dir: Path, case_ids: list[str]) -> dict[int, Commit]:
    """The events of the players' cases from the server's ledger, read directly (a plain SQLite read, so any
    checkout's ledger is read the same way); which reach the stage is decided by this checkout's gate."""
    wanted = set(case_ids)
    with sqlite3.connect(f"file:{data_dir / 'bureau.db'}?mode=ro", uri=True) as ledger:
        rows = ledger.execute("SELECT id, case_id, type, payload, created_at FROM events ORDER BY id").fetchall()
    commits = {}
    for event_id, case_id, kind, payload, created_at in rows:
        if case_id in wanted:
            at = datetime.fromisoformat(created_at).replace(tzinfo=UTC).timestamp()
            on_stage = project_event(Audience.STAGE, kind, json.loads(payload)) is not None
            commits[event_id] = Commit(case_id, kind, at, on_stage)
    return commits


def summarise(
    code: str,
    plan: Plan,
    log: RoomLog,
    commits: dict[int, Commit],
    memory: dict[str, float],
    server_cpu_s: float,
) -> Row:
    window_s = log.window[1] - log.window[0]
    questions = [o for o in log.outcomes if o.kind == "question" and inside(o.due, log.window)]
    answered = [o for o in log.outcomes if o.kind == "question" and o.ok and inside(o.done, log.window)]
    latencies = [o.ms for o in questions if o.ok]
    publishes = [o.ms for o in log.outcomes if o.kind == "publish" and o.ok and inside(o.due, log.window)]
    refetches = [
        o.ms for o in log.outcomes if o.kind.endswith(("snapshot", "record")) and o.ok and inside(o.due, log.window)
    ]
    stage = lags_ms(log, commits, "stage", STAGE_ANSWER_EVENT)
    errors, outside = error_counts(log, commits, plan.interval_s)
    return Row(
        code=code,
        players=plan.players,
        asked_per_s=sum(1 for o in questions if inside(o.sent, log.window)) / window_s,
        answered_per_s=len(answered) / window_s,
        p50=pct(latencies, 0.5),
        p95=pct(latencies, 0.95),
        p99=pct(latencies, 0.99),
        stage_lag_p50=pct(stage, 0.5),
        stage_lag_p99=pct(stage, 0.99),
        stage_arrival_p99=pct(lags_ms(log, commits, "stage", STAGE_ANSWER_EVENT, arrival=True), 0.99),
        console_lag_p99=pct(lags_ms(log, commits, "console", CONSOLE_ANSWER_EVENT), 0.99),
        errors=dict(errors),
        errors_outside=dict(outside),
        publish_p50=pct(publishes, 0.5),
        publish_p99=pct(publishes, 0.99),
        refetch_p50=pct(refetches, 0.5),
        refetch_p99=pct(refetches, 0.99),
        server_cores=server_cpu_s / window_s,
        players_cores=log.window_cpu_ms / 1000 / window_s,
        send_delay_p99=pct([(o.sent - o.due) * 1000 for o in questions], 0.99),
        setup_s=log.setup_s,
        **memory,
    )


# ----- one run ---------------------------------------------------------------------------------------------------


def play_one_case(server: Server) -> None:
    """One case through every step the room takes, before the idle memory is read; not counted."""

    async def run() -> None:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
            headers = await session_headers(http, OPERATOR_PASSCODE)

            async def call(method: str, path: str, body: Any = None) -> Any:
                response = await http.request(method, path, json=body, headers=headers)
                response.raise_for_status()
                return response.json()

            case = await call("POST", "/api/cases", {"scenario_id": "safe-combination", "language": "en"})
            path, preset = f"/api/cases/{case['case']['id']}", case["scenario"]["preset_questions"][0]
            await call("POST", f"{path}/whispers", {"role": "suspect", "text": "The van left at midnight."})
            for role in ROLES:
                await call("POST", f"{path}/interrogations", {"role": role, "question": preset})
            card = case["spaces"]["informant"][0]["id"]
            await call("POST", f"{path}/publications", {"role": "informant", "card_id": card})
            for suffix in ("", "/record?limit=50", "/stage"):
                await call("GET", path + suffix)

    asyncio.run(run())


def watch_server(server: Server, window: tuple[float, float]) -> tuple[dict[str, float], float]:
    """While the room plays its window: the server's RSS every second (peak, end), the store's at the end,
    and the CPU seconds the server and its store used."""
    time.sleep(max(0.0, window[0] - time.time()))
    cpu, peak = server.tree_cpu_s(), server.rss_mb()
    while (left := window[1] - time.time()) > 0:
        time.sleep(min(SAMPLE_EVERY_S, left))
        peak = max(peak, server.rss_mb())
    cpu = server.tree_cpu_s() - cpu
    end = server.rss_mb()
    return {"rss_peak": max(peak, end), "rss_end": end, "store_end": server.store_rss_mb()}, cpu


def receive(queue: Any, timeout_s: float) -> tuple[Any, ...]:
    """The room's next message; its failure, or its silence past `timeout_s`, as a RuntimeError."""
    try:
        message = queue.get(timeout=timeout_s)
    except Empty:
        raise RuntimeError(f"the room sent nothing for {timeout_s:.0f} s") from None
    if message[0] == "failed":
        raise RuntimeError(f"the room failed: {message[1]}")
    return tuple(message)


def measure(checkout: Checkout, plan_for: Any, players: int, probe_dir: Path | None = None) -> Row:
    """One checkout at one N on a fresh server; a RuntimeError, with the end of the server's log, if it fails.
    With `probe_dir`, the server runs with bench/stall_probe loaded, writing `<code>-<players>.jsonl` there."""
    server = Server(env=dict(PASSCODE_MODE), checkout=checkout)
    if probe_dir is not None:
        probe_dir.mkdir(parents=True, exist_ok=True)
        server.env |= probe_env(probe_dir / f"{checkout.label}-{players}.jsonl")
    progress(f"{checkout.label}, {players} players: starting bureau serve in {server.data_dir}")
    try:
        took = server.start()
        waited = server.wait_quiet()
        progress(f"{checkout.label}: ready in {took:.1f} s, quiet after {waited:.0f} s more; one uncounted case")
        play_one_case(server)
        server.wait_quiet()
        memory = {"rss_idle": server.rss_mb(), "store_idle": server.store_rss_mb()}
        plan: Plan = plan_for(server.port, players)
        log, sampled, server_cpu = run_room(server, plan)
        commits = read_commits(server.data_dir, log.case_ids)
        if probe_dir is not None:  # beside the probe's lines, to line them up with the requests
            with (probe_dir / f"{checkout.label}-{players}-requests.jsonl").open("w") as out:
                out.writelines(json.dumps(asdict(outcome)) + "\n" for outcome in log.outcomes)
    except (RuntimeError, httpx.HTTPError) as exc:
        raise RuntimeError(f"{exc}\n--- the end of the server's log:\n{server.log_tail()[-1500:]}") from exc
    finally:
        server.stop()
        shutil.rmtree(server.data_dir, ignore_errors=True)  # each run's store takes hundreds of MB
    row = summarise(checkout.label, plan, log, commits, memory | sampled, server_cpu)
    progress(
        f"{checkout.label}, {players} players: answer p50 {row.p50:.0f} / p99 {row.p99:.0f} ms, "
        f"stage lag p99 {row.stage_lag_p99:.0f} ms, {row.error_total} errors, RSS {row.rss_peak:.0f} MB"
    )
    return row


def run_room(server: Server, plan: Plan) -> tuple[RoomLog, dict[str, float], float]:
    """The room in a process of its own (forked: nothing else runs in this one yet), the server watched
    meanwhile from here."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    room = context.Process(target=play_room, args=(plan, queue), daemon=True)
    room.start()
    try:
        _, start, end = receive(queue, SETUP_DEADLINE_S)
        sampled, server_cpu = watch_server(server, (start, end))
        _, log = receive(queue, plan.play_s + plan.answer_deadline_s + 120)
    finally:
        room.join(timeout=30)
        if room.is_alive():
            room.terminate()
    return log, sampled, server_cpu


# ----- the report ------------------------------------------------------------------------------------------------


def results_table(rows: list[Row]) -> str:
    header = ["code", "players", "questions/s asked / answered", "answer p50 ms", "p95 ms", "p99 ms"]
    header += ["stage lag p99 ms", "errors", "server RSS MB (peak)", "memory per live case MB"]
    body = [
        [
            row.code,
            str(row.players),
            f"{row.asked_per_s:.1f} / {row.answered_per_s:.1f}",
            f"{row.p50:,.1f}",
            f"{row.p95:,.1f}",
            f"{row.p99:,.1f}",
            f"{row.stage_lag_p99:,.1f}",
            str(row.error_total),
            f"{row.rss_peak:,.0f}",
            f"{row.per_case_mb:.2f}",
        ]
        for row in rows
    ]
    return markdown_table(header, body)


def details_table(rows: list[Row]) -> str:
    header = ["code", "players", "errors in the window: " + " / ".join(ERROR_KINDS), "errors outside the window"]
    header += ["publish p50 / p99 ms", "screens' refetch p50 / p99 ms", "stage lag p50 ms", "stage arrival p99 ms"]
    header += ["console lag p99 ms", "server RSS idle → end MB", "seekdb RSS idle → end MB (per case)"]
    header += ["server CPU, cores (ms per answer)", "room's CPU, cores", "send delay p99 ms", "setup s"]
    body = [
        [
            row.code,
            str(row.players),
            " / ".join(str(row.errors.get(kind, 0)) for kind in ERROR_KINDS),
            ", ".join(f"{kind} {n}" for kind, n in row.errors_outside.items()) or "0",
            f"{row.publish_p50:,.1f} / {row.publish_p99:,.1f}",
            f"{row.refetch_p50:,.1f} / {row.refetch_p99:,.1f}",
            f"{row.stage_lag_p50:,.1f}",
            f"{row.stage_arrival_p99:,.1f}",
            f"{row.console_lag_p99:,.1f}",
            f"{row.rss_idle:,.0f} → {row.rss_end:,.0f}",
            f"{row.store_idle:,.0f} → {row.store_end:,.0f} ({row.store_per_case_mb:+.2f})",
            f"{row.server_cores:.2f} ({row.server_cpu_per_answer_ms:.0f})",
            f"{row.players_cores:.2f}",
            f"{row.send_delay_p99:,.1f}",
            f"{row.setup_s:.0f}",
        ]
        for row in rows
    ]
    return markdown_table(header, body)


def verdict(code: str, what: str, value: float, target: float, unit: str) -> str:
    """One line per target and checkout: met or not, with the figure reached."""
    return f"{code}: target {what} ≤ {target:,g}{unit}: {'met' if value <= target else 'NOT met'} ({value:,.1f}{unit})"


def targets(rows: list[Row]) -> list[str]:
    """The issue's targets for each checkout, with the figure reached; a target whose N was not run says so."""
    lines = []
    for code in dict.fromkeys(row.code for row in rows):
        by_n = {row.players: row for row in rows if row.code == code}
        if (row := by_n.get(TARGET_PLAYERS)) is None:
            lines.append(f"{code}: no run at {TARGET_PLAYERS} players, so no verdict on its targets")
        else:
            at = f" at {TARGET_PLAYERS} players"
            lines += [
                verdict(code, "answer p50" + at, row.p50, TARGET_P50_MS, " ms"),
                verdict(code, "answer p99" + at, row.p99, TARGET_P99_MS, " ms"),
                verdict(code, "stage lag p99" + at, row.stage_lag_p99, TARGET_STAGE_LAG_P99_MS, " ms"),
                verdict(code, "errors" + at, row.error_total, 0, ""),
                verdict(code, "server RSS" + at, row.rss_peak, TARGET_RSS_MB, " MB")
                + f" (with its seekdb: {row.rss_peak + row.store_end:,.0f} MB)",
            ]
        low, high = by_n.get(GROWTH_FROM), by_n.get(GROWTH_TO)
        if low is None or high is None:
            lines.append(f"{code}: no runs at both {GROWTH_FROM} and {GROWTH_TO} players, so no verdict on growth")
        else:
            what = f"p99 at {GROWTH_TO} players ÷ p99 at {GROWTH_FROM}"
            lines.append(
                verdict(code, what, high.p99 / low.p99, TARGET_GROWTH, "×") + f" ({high.p99:,.1f} vs {low.p99:,.1f} ms)"
            )
    return lines


def marginal_memory(rows: list[Row]) -> list[str]:
    """Per checkout, what one more live case adds to the server's RSS between its smallest and largest room:
    free of what a server holds whatever the number of cases (the per-case column divides that in)."""
    lines = []
    for code in dict.fromkeys(row.code for row in rows):
        mine = sorted((row for row in rows if row.code == code), key=lambda row: row.players)
        if len(mine) > 1 and mine[-1].players > mine[0].players:
            low, high = mine[0], mine[-1]
            slope = (high.rss_end - low.rss_end) / (high.players - low.players)
            lines.append(
                f"{code}: memory per live case between {low.players} and {high.players} players: {slope:.2f} MB "
                f"(server RSS at the window's end {low.rss_end:,.0f} → {high.rss_end:,.0f} MB)"
            )
    return lines


def chart(rows: list[Row], name: str) -> Path:
    series = []
    for i, code in enumerate(dict.fromkeys(row.code for row in rows)):
        mine = [row for row in rows if row.code == code]
        colour = COLOURS[i % len(COLOURS)]
        series.append(Series(f"{code}: p50", colour, [(row.players, row.p50) for row in mine]))
        series.append(Series(f"{code}: p99", colour, [(row.players, row.p99) for row in mine], dashed=True))
    marks = [(f"target p50 {TARGET_P50_MS:g} ms", TARGET_P50_MS), (f"target p99 {TARGET_P99_MS:g} ms", TARGET_P99_MS)]
    title = "Workshop room on one server: answer p50 and p99 by players"
    return line_chart(CHART_DIR / name, title, "players", "answer ms", series, marks)


def raise_open_files() -> int:
    """The soft limit on open files up to the hard one, for this process and the servers and room it starts:
    a room that falls behind holds a connection per request in flight (a thousand and more at 100 players)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=parse_players, default=[10, 25, 50, 100], help="e.g. 10,25,50,100")
    parser.add_argument(
        "--checkout",
        type=parse_checkout,
        action="append",
        metavar="[LABEL=]PATH",
        help="a checkout to serve (repeatable; default: this one)",
    )
    parser.add_argument("--window", type=float, default=60.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds of play before the window")
    parser.add_argument("--interval", type=float, default=3.0, help="seconds between one player's questions")
    parser.add_argument("--publish-every", type=int, default=10, help="a publish after every n-th question")
    parser.add_argument(
        "--refetch",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="screens refetch their snapshot after live events, as the web app does",
    )
    parser.add_argument("--client", choices=("lean", "httpx"), default="lean", help="the players' HTTP library")
    parser.add_argument("--seed", type=int, default=36, help="of the schedule (the same for every checkout)")
    parser.add_argument("--chart", action="store_true", help=f"write the chart into {CHART_DIR}")
    parser.add_argument("--chart-name", default="workshop.svg")
    parser.add_argument("--save", type=Path, metavar="FILE", help="write every row as JSON")
    parser.add_argument(
        "--probe", type=Path, metavar="DIR", help="load bench/stall_probe into each server, its lines into DIR"
    )
    args = parser.parse_args()
    checkouts = [named(c) for c in args.checkout or [Checkout(REPO)]]
    for checkout in checkouts:
        if (served := checkout.served_code()) != checkout.backend.resolve():
            raise SystemExit(f"{checkout.label}: its server would import {served}, not {checkout.backend}")

    def plan_for(port: int, players: int) -> Plan:
        return Plan(
            port=port,
            players=players,
            passcode=OPERATOR_PASSCODE,
            interval_s=args.interval,
            warmup_s=args.warmup,
            window_s=args.window,
            publish_every=args.publish_every,
            refetch=args.refetch,
            client=args.client,
            seed=args.seed,
        )

    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"before: {load_line()}; open files allowed: {raise_open_files():,}")
    started = time.perf_counter()
    rows, failures = [], []
    for players in args.players:
        for checkout in checkouts:
            try:
                rows.append(measure(checkout, plan_for, players, args.probe))
            except RuntimeError as exc:  # a server or a room that fails is a result too; the other runs go on
                failures.append(f"{checkout.label}, {players} players: FAILED: {exc}")
                progress(failures[-1])
    print(f"after:  {load_line()} ({(time.perf_counter() - started) / 60:.1f} min)")
    print(
        f"a question per player every {args.interval:g} s (open loop), a publish after every "
        f"{args.publish_every}th; warm-up {args.warmup:g} s, window {args.window:g} s; screens' refetch "
        f"{'on' if args.refetch else 'off'}; {args.client} client; seed {args.seed}"
    )
    for checkout in checkouts:
        print(f"- {checkout.label}: {checkout.path} (served with {checkout.python})")
    print(results_table(rows))
    print()
    print(details_table(rows))
    print()
    for line in [*failures, *targets(rows), *marginal_memory(rows)]:
        print(line)
    if args.save:
        args.save.write_text(json.dumps([asdict(row) for row in rows], indent=1))
    if args.chart:
        print(f"chart: {chart(rows, args.chart_name)}")


if __name__ == "__main__":
    main()
