"""What a read costs as one case grows (issue 27): the snapshot, a page of the record, one question, the exports.

One real `bureau serve` (passcode mode, evidence mode, embedded seekdb) over a scratch data directory, one
case of safe-combination (en), one operator session throughout. Before the first size: three whispers, one
publish (the informant's combination goes to the board) and one cross-examination, so the matrix and the
board are not empty. The case then grows by real interrogations over HTTP, one after another (the questions
cycle through a pool, every tenth is one never asked before, the roles rotate), and at each size in `--sizes`,
after a wait until the server and its store use under 10 % of a CPU for 2 s (`--no-settle`: none). A fresh
store keeps loading seekdb's system packages for a while after it answers, and the growth starts store
compactions (memory/compaction.py) that run in seekdb's background: the wait keeps both out of the reads, and
the table says how long it was and how many compactions the server had started:

- the snapshot `GET /api/cases/{id}`: p50 / p95 of `--reads` reads, and its size;
- a record page `GET /api/cases/{id}/record?limit=50`: p50 / p95 and size. A server without paging ignores
  the query and returns the whole record; the table says which (more entries than the limit = not paged);
- one interrogation: p50 of 5 questions asked after the reads (they count towards the next size);
- each export once: its time, and the server process's memory during it: the RSS before, the peak of RSS
  sampled every 10 ms in a thread, and the kernel's peak (VmHWM, reset just before) when it can be reset.

No setting has to be raised for this: the only request limits are on failed sign-ins and live streams
(api/security.py, api/routes/streaming.py), and the model budget does not apply in evidence mode.
Stdout is the result (tables and targets), stderr the progress.

    .venv/bin/python bench/case_growth.py                      # 0, 30, 1 000, 10 000 questions; a long run
    .venv/bin/python bench/case_growth.py --sizes 0,200 --reads 5 --chart
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

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
)

PAGE_LIMIT = 50
QUESTIONS_AFTER_READS = 5
PROGRESS_EVERY = 250
SNAPSHOT_FLAT_RATIO = 1.5  # the target: snapshot p50 at the largest size within 1.5× of size 0
PAGE_TARGET_MS = 20.0
COMPACTION_LINE = "store compaction started"  # memory/compaction.py's log line
READ_ROUND, ROUND_GAP_S = 20, 1.0
# From 15 questions on (the roles rotate), every role has answered and keeps its five session records.
FULL_CONTENT = 15
ROLES = ("detective", "informant", "suspect")
QUESTIONS = (  # 17 (not a multiple of 3), so each question meets every role as the rotation goes round
    "What is the safe combination?",
    "Where is the safe hidden?",
    "What time was the break-in?",
    "What is your alibi for the night of the break-in?",
    "How did the thief get into the gallery?",
    "Who forced the back door?",
    "Whose boot prints lead to the kitchen window?",
    "Do you owe the gallery owner money?",
    "Who knows how to open the safe?",
    "What is behind the oil painting in the study?",
    "Where is the crowbar now?",
    "Who was at the birthday dinner across town?",
    "When did you last see the safe open?",
    "What did the night porter see?",
    "Which car was parked by the garden gate?",
    "Who had a key to the office?",
    "What was taken from the safe?",
)
WHISPERS = (
    {"role": "suspect", "text": "A grey van waited by the garden gate at eleven.", "source": "the night porter"},
    {"role": "detective", "text": "The crowbar was found in the canal behind the gallery.", "source": "the diver"},
    {"role": "informant", "text": "The owner changed the combination last spring.", "source": "the locksmith"},
)
EXPORTS = (
    ("record JSON", "/record/export?format=json"),
    ("record Markdown", "/record/export?format=markdown"),
    ("subject access", "/subject-access"),
)


def question(n: int) -> tuple[str, str]:
    """The role and the question of the case's n-th interrogation."""
    if n % 10 == 9:
        return ROLES[n % 3], f"What happened at gate {n} on the night of the break-in?"
    return ROLES[n % 3], QUESTIONS[n % len(QUESTIONS)]


def elapsed_ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def expect(response: httpx.Response, status: int) -> httpx.Response:
    if response.status_code != status:
        raise RuntimeError(f"{response.request.method} {response.request.url.path}: {response.status_code}")
    return response


@dataclass
class Case:
    """The one case and the operator session that plays it."""

    http: httpx.Client
    headers: dict[str, str]
    case_id: str
    asked: int = 0
    durations: list[float] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"/api/cases/{self.case_id}"

    def get(self, suffix: str = "") -> httpx.Response:
        return expect(self.http.get(self.path + suffix, headers=self.headers), 200)

    def post(self, suffix: str, body: Mapping[str, object], status: int) -> httpx.Response:
        return expect(self.http.post(self.path + suffix, json=body, headers=self.headers), status)

    def ask(self) -> float:
        role, text = question(self.asked)
        started = time.perf_counter()
        self.post("/interrogations", {"role": role, "question": text}, 200)
        self.asked += 1
        self.durations.append(elapsed_ms(started))
        return self.durations[-1]

    def prepare(self) -> None:
        """Whispers, one publish and one cross-examination: a matrix and a board that are not empty."""
        for whisper in WHISPERS:
            self.post("/whispers", whisper, 201)
        informant = self.get().json()["spaces"]["informant"]
        [secret] = [card for card in informant if "0427" in card["content"]]
        self.post("/publications", {"role": "informant", "card_id": secret["id"]}, 201)
        body = {"roles": ["detective", "suspect"], "question": "Where were you at eleven?"}
        self.post("/cross-examinations", body, 200)

    def grow_to(self, size: int) -> None:
        """Interrogate until the case holds `size` questions; a progress line every 250, with the rate."""
        window = time.perf_counter()
        while self.asked < size:
            self.ask()
            if self.asked % PROGRESS_EVERY == 0:
                rate = PROGRESS_EVERY / (time.perf_counter() - window)
                recent = percentile(self.durations[-PROGRESS_EVERY:], 0.5)
                progress(f"{self.asked:,}/{size:,} questions: {rate:.1f}/s, p50 {recent:.0f} ms")
                window = time.perf_counter()


class RssSampler:
    """The server's RSS every 10 ms in a thread, while an export runs: its peak whatever the kernel allows."""

    def __init__(self, server: Server) -> None:
        self.server, self.peak, self._stop = server, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.server.rss_mb())
            self._stop.wait(0.01)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.server.rss_mb())


def timed_reads(case: Case, suffix: str, reads: int) -> tuple[list[float], httpx.Response]:
    """`reads` reads in rounds of READ_ROUND, a second apart: a burst of the store's own background work,
    which moves a short run of back-to-back reads of an unchanged case as a whole, meets one round."""
    times, response = [], None
    for n in range(reads):
        if n and n % READ_ROUND == 0:
            time.sleep(ROUND_GAP_S)
        started = time.perf_counter()
        response = case.get(suffix)
        times.append(elapsed_ms(started))
    assert response is not None
    return times, response


@dataclass
class Export:
    """One export at one size: its time and size, and the server's memory around it."""

    ms: float
    size: int
    rss_before: float
    rss_peak: float  # sampled every 10 ms
    hwm: float | None  # the kernel's peak after a reset; None where the reset is refused

    @property
    def growth(self) -> float:
        return self.rss_peak - self.rss_before


@dataclass
class Row:
    """Everything measured at one size of the case."""

    size: int
    snapshot_p50: float
    snapshot_p95: float
    snapshot_bytes: int
    page_p50: float
    page_p95: float
    page_bytes: int
    page_entries: int
    question_p50: float
    exports: dict[str, Export]
    waited_s: float  # until the server was quiet, before the reads (0: --no-settle)
    compactions: int  # store compactions the server had started by then

    @property
    def paging(self) -> str:
        if self.page_entries > PAGE_LIMIT:
            return f"{self.page_entries:,} (not paged: the whole record)"
        return f"{self.page_entries:,}" + (" (a page)" if self.size > PAGE_LIMIT else "")


def measure_export(server: Server, case: Case, suffix: str) -> Export:
    baseline = server.rss_mb()
    kernel_peak = server.reset_peak_rss()
    with RssSampler(server) as sampler:
        started = time.perf_counter()
        response = case.get(suffix)
        took = elapsed_ms(started)
    hwm = server.memory_mb("VmHWM") if kernel_peak else None
    return Export(took, len(response.content), baseline, sampler.peak, hwm)


def measure(server: Server, case: Case, reads: int, settle: bool) -> Row:
    size = case.asked
    waited = server.wait_quiet() if settle else 0.0
    progress(f"{size:,} questions: {reads} snapshot reads …")
    snapshot_times, snapshot = timed_reads(case, "", reads)
    progress(f"{size:,} questions: {reads} record page reads …")
    page_times, page = timed_reads(case, f"/record?limit={PAGE_LIMIT}", reads)
    asked = [case.ask() for _ in range(QUESTIONS_AFTER_READS)]
    exports = {}
    for name, suffix in EXPORTS:
        progress(f"{size:,} questions: export {name} …")
        exports[name] = measure_export(server, case, suffix)
    return Row(
        size=size,
        snapshot_p50=percentile(snapshot_times, 0.5),
        snapshot_p95=percentile(snapshot_times, 0.95),
        snapshot_bytes=len(snapshot.content),
        page_p50=percentile(page_times, 0.5),
        page_p95=percentile(page_times, 0.95),
        page_bytes=len(page.content),
        page_entries=len(page.json()["entries"]),
        question_p50=percentile(asked, 0.5),
        exports=exports,
        waited_s=waited,
        compactions=server.log_text().count(COMPACTION_LINE),
    )


def size_text(count: float) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:,.1f} {unit}"
    return f"{count:,.0f} B"


def reads_table(rows: list[Row]) -> str:
    header = ["N questions", "snapshot p50 / p95 ms", "snapshot size", f"record `?limit={PAGE_LIMIT}` p50 / p95 ms"]
    header += ["page size", "entries returned", "one question p50 ms", "waited for quiet s", "store compactions"]
    body = [
        [
            f"{row.size:,}",
            f"{row.snapshot_p50:.1f} / {row.snapshot_p95:.1f}",
            size_text(row.snapshot_bytes),
            f"{row.page_p50:.1f} / {row.page_p95:.1f}",
            size_text(row.page_bytes),
            row.paging,
            f"{row.question_p50:.1f}",
            f"{row.waited_s:.0f}",
            f"{row.compactions}",
        ]
        for row in rows
    ]
    return markdown_table(header, body)


def exports_table(rows: list[Row]) -> str:
    header = ["N questions", "export", "time ms", "size", "RSS before MB", "RSS peak (10 ms samples) MB"]
    header += ["growth MB", "VmHWM after reset MB"]
    body = [
        [
            f"{row.size:,}",
            name,
            f"{cell.ms:.0f}",
            size_text(cell.size),
            f"{cell.rss_before:.1f}",
            f"{cell.rss_peak:.1f}",
            f"{cell.growth:+.1f}",
            "reset refused" if cell.hwm is None else f"{cell.hwm:.1f}",
        ]
        for row in rows
        for name, cell in row.exports.items()
    ]
    return markdown_table(header, body)


def targets(rows: list[Row]) -> list[str]:
    """The issue's three targets, each with the figure reached."""
    first, last = rows[0], rows[-1]
    ratio = last.snapshot_p50 / first.snapshot_p50
    flat = "met" if ratio <= SNAPSHOT_FLAT_RATIO else "NOT met"
    worst_page = max(row.page_p50 for row in rows)
    whole = [row.size for row in rows if row.page_entries > PAGE_LIMIT]
    paged = "met" if worst_page <= PAGE_TARGET_MS and not whole else "NOT met"
    unpaged = f"; not paged at {', '.join(f'{size:,}' for size in whole)} questions" if whole else ""
    growth = max(cell.growth for row in rows for cell in row.exports.values())
    peaks = [cell.hwm for row in rows for cell in row.exports.values() if cell.hwm is not None]
    peak = f", highest VmHWM {max(peaks):.1f} MB" if peaks else ""
    lines = [
        f"target snapshot p50 at {last.size:,} questions within {SNAPSHOT_FLAT_RATIO:g}× of {first.size:,}: "
        f"{flat} ({ratio:.2f}×: {last.snapshot_p50:.1f} ms vs {first.snapshot_p50:.1f} ms)",
        f"target record page (paged) p50 ≤ {PAGE_TARGET_MS:g} ms at every size: "
        f"{paged} (worst {worst_page:.1f} ms{unpaged})",
        f"export memory (report): largest RSS growth during one export {growth:+.1f} MB{peak} (table above)",
    ]
    # At 0 questions the snapshot holds no answer and no session record (5.5 KB, 24 KB once every role has
    # answered): the same comparison from the first size that holds all of it tells history from content.
    full = next((row for row in rows[1:-1] if row.size >= FULL_CONTENT), None)
    if full is not None:
        lines.insert(
            1,
            f"(report) snapshot p50 at {last.size:,} questions against {full.size:,}, the same content: "
            f"{last.snapshot_p50 / full.snapshot_p50:.2f}× ({last.snapshot_p50:.1f} ms vs {full.snapshot_p50:.1f} ms)",
        )
    return lines


def chart(rows: list[Row], name: str) -> str:
    bars = [(f"snapshot, {row.size:,} questions", row.snapshot_p50) for row in rows]
    bars += [(f"record page, {row.size:,} questions", row.page_p50) for row in rows]
    title = "Case growth: snapshot and record-page p50 (real HTTP, one case, one server)"
    return str(bar_chart(CHART_DIR / name, title, bars, "ms"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0,30,1000,10000", help="questions in the case at each measurement")
    parser.add_argument("--reads", type=int, default=100, help="repetitions of each read at each size")
    parser.add_argument(
        "--settle",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="before each size's reads, wait until the server is quiet (a store compaction may be running)",
    )
    parser.add_argument(
        "--compact-after", type=int, default=None, help="BUREAU_STORE_COMPACT_AFTER_DELETES (default: the product's)"
    )
    parser.add_argument("--chart", action="store_true", help=f"write the chart into {CHART_DIR}")
    parser.add_argument("--chart-name", default="case-growth.svg", help="its file name (after: case-growth-after.svg)")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"before: {load_line()}")
    rows: list[Row] = []
    env = dict(PASSCODE_MODE)
    if args.compact_after is not None:
        env["BUREAU_STORE_COMPACT_AFTER_DELETES"] = str(args.compact_after)
    with Server(env=env) as server:
        operator, _, case_id = passcode_case(server, 0)
        with httpx.Client(base_url=server.url, timeout=600) as http:
            case = Case(http, operator, case_id)
            case.prepare()
            started = time.perf_counter()
            for size in sizes:
                case.grow_to(size)
                rows.append(measure(server, case, args.reads, args.settle))
                progress(
                    f"{size:,} questions measured ({(time.perf_counter() - started) / 60:.1f} min so far): "
                    f"snapshot p50 {rows[-1].snapshot_p50:.1f} ms, record page p50 {rows[-1].page_p50:.1f} ms"
                )
    print(f"after: {load_line()}")
    print(f"server pid's memory from /proc/<pid>/status; {args.reads} reads per size; evidence mode, embedded seekdb")
    print(reads_table(rows))
    print()
    print(exports_table(rows))
    print()
    for line in targets(rows):
        print(line)
    if args.chart:
        print(f"chart: {chart(rows, args.chart_name)}")


if __name__ == "__main__":
    main()
