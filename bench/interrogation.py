"""Interrogation latency at N cards per space, split into embedding, search, persistence and the rest.

Real HTTP into an in-process app over real PowerMem (embedded seekdb, or the sqlite store), evidence mode,
the offline embedder. One backend per process (embedded seekdb allows one path per process), so
`--backend both` runs each in a child process. Once the app has started, the garbage collector is settled
as `bureau serve` settles it when ready (bootstrap/collector.py), so the process measured is configured as
the one that serves. Prints a markdown table; numbers, not assertions.

By default the same question is asked again and again (what a presenter does with the preset questions;
the gateway embeds a text once per case, so a repeated question costs no encoder time). `--distinct` asks a
question never asked before each time (its sentence is new; most of its words are not). Each row stops
asking after `--row-seconds` (at least 5 questions): PowerMem's sqlite store searches by brute force, so its
10 000-card row would take many minutes; the table says how many questions each row asked. `--other-cards N`
first puts N cards of another case into the store, as a store that has served many cases holds them: a
scoped search should not pay for them. `--without-owner-index` drops the store's owner index first (seekdb),
to show what it is worth.

    .venv/bin/python bench/interrogation.py --sizes 100,1000 --backend both --questions 60
    .venv/bin/python bench/interrogation.py --sizes 1000 --backend seekdb --distinct --steps   # and per step
    .venv/bin/python bench/interrogation.py --sizes 1000 --backend seekdb --other-cards 10000  # a fuller store
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from typing import Any

import httpx
from harness import CHART_DIR, bar_chart, load_line, percentile, progress, scratch_dir, vault_beside
from steps import Steps

QUESTION = "What is the safe combination?"
TARGET_P99_MS = 100.0
FILLER = [f"Routine note {i}: the night shift logged nothing unusual at gate {i}." for i in range(50)]


def question_for(n: int, distinct: bool) -> str:
    return f"What is the safe combination of locker {n}?" if distinct else QUESTION


async def fill(services: Any, case_id: str, role: str, count: int) -> None:
    """`count` cards in one role's space of a case, written as a whisper writes them (the case's own keys)."""
    from bureau.memory.types import CardDraft
    from bureau.scope.keys import role_scope
    from bureau.scope.vocabulary import Purpose

    generation = (await services.ledger.cases.get_case(case_id)).generation
    drafts = [CardDraft(content=FILLER[i % len(FILLER)], topic="filler", kind="note") for i in range(count)]
    for start in range(0, count, 1000):
        scope = role_scope(case_id, role, generation)
        grant = await services.vault.grant(case_id, generation, Purpose.WHISPER, reads=[scope], writes=[scope])
        try:
            await services.gateway.write_many(grant, drafts[start : start + 1000])
        finally:
            grant.close()


async def measure(
    backend: str,
    sizes: list[int],
    questions: int,
    distinct: bool,
    row_seconds: float,
    steps: Steps | None = None,
    other_cards: int = 0,
    owner_index: bool = True,
) -> list[dict[str, Any]]:
    for name in [n for n in os.environ if n.startswith("BUREAU_")]:
        del os.environ[name]
    from bureau.api.app import create_app
    from bureau.bootstrap.collector import settle_after_start
    from bureau.config import Settings

    settings = Settings(
        _env_file=None, data_dir=(data := scratch_dir("bench-")), vault_dir=vault_beside(data), memory_backend=backend
    )
    app = create_app(settings)
    rows = []
    async with app.router.lifespan_context(app):
        settle_after_start()  # the collector as `bureau serve` leaves it once ready (bootstrap/collector.py)
        services = app.state.services
        gateway, runner = services.gateway, services.gateway.runner
        nearest = runner.nearest
        if not owner_index and nearest is not None:
            from bureau.memory.seekdb_search import OWNER_INDEX

            await runner.run(nearest.execute, f"DROP INDEX {OWNER_INDEX} ON {nearest.table}")
        spent: dict[str, list[float]] = defaultdict(list)  # per store call: wall time, and encoder time inside
        run = runner.run
        embedder = gateway.embedder
        encode = embedder.embed_documents
        encoding = [0.0]

        def timed_encode(texts):  # time every encoder call, wherever it happens
            started = time.perf_counter()
            try:
                return encode(texts)
            finally:
                encoding[0] += (time.perf_counter() - started) * 1000

        async def timed(fn, *args, **kwargs):  # time every store call by what it does
            started, encoded = time.perf_counter(), encoding[0]
            try:
                return await run(fn, *args, **kwargs)
            finally:
                spent[fn.__name__].append((time.perf_counter() - started) * 1000)
                spent[f"{fn.__name__}:encoder"].append(encoding[0] - encoded)

        runner.run = timed  # every store call goes through it (StoreRunner.run)
        embedder.embed_documents = timed_encode
        transport = httpx.ASGITransport(app=app)
        asked = 0
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=120) as http:
            if other_cards:
                other = (await http.post("/api/cases", json={"scenario_id": "safe-combination"})).json()["case"]["id"]
                await fill(services, other, "informant", other_cards)
                progress(f"{backend}: {other_cards:,} cards of another case in the store")

            async def ask(case_id: str) -> float:
                nonlocal asked
                asked += 1
                body = {"role": "detective", "question": question_for(asked, distinct)}
                started = time.perf_counter()
                response = await http.post(f"/api/cases/{case_id}/interrogations", json=body)
                assert response.status_code == 200, response.text
                return (time.perf_counter() - started) * 1000

            for size in sizes:
                case_id = (await http.post("/api/cases", json={"scenario_id": "safe-combination"})).json()["case"]["id"]
                await fill(services, case_id, "detective", size)
                progress(f"{backend}: {size:,} cards in the space; asking up to {questions} questions")
                for _ in range(5):  # warm caches
                    await ask(case_id)
                spent.clear()
                if steps is not None:
                    steps.recording = True
                totals, encoder = [], []
                deadline = time.perf_counter() + row_seconds
                while len(totals) < questions and (len(totals) < 5 or time.perf_counter() < deadline):
                    encoded = encoding[0]
                    totals.append(await ask(case_id))
                    encoder.append(encoding[0] - encoded)
                if len(totals) < questions:
                    progress(f"{backend}: {size:,} cards: stopped after {len(totals)} questions ({row_seconds:g} s)")
                own = []
                for _ in range(len(totals)):
                    started = time.perf_counter()
                    encode([question_for(0, distinct)])
                    own.append((time.perf_counter() - started) * 1000)

                def call(name: str) -> list[float]:  # wall time of one store call, minus its encoder time
                    return [t - e for t, e in zip(spent[name], spent[f"{name}:encoder"], strict=True)]

                search = call("search")
                persist = [w + t for w, t in zip(call("write_many"), call("trim"), strict=False)]
                rest = [t - s - e - p for t, s, e, p in zip(totals, search, encoder, persist, strict=False)]
                rows.append(
                    {
                        "backend": gateway.backend_name,
                        "cards": size,
                        "others": other_cards,
                        "questions": f"{len(totals)} {'distinct' if distinct else 'same'}",
                        "p50": percentile(totals, 0.5),
                        "p95": percentile(totals, 0.95),
                        "p99": percentile(totals, 0.99),
                        "embedder": percentile(own, 0.5),
                        "encoder": percentile(encoder, 0.5),
                        "search": percentile(search, 0.5),
                        "persist": percentile(persist, 0.5),
                        "policy_response_ledger": percentile(rest, 0.5),
                    }
                )
    return rows


COLUMNS = (
    ("backend", "backend", "{}"),
    ("cards", "cards in space", "{:,}"),
    ("others", "other cases' cards in the store", "{:,}"),
    ("questions", "questions", "{}"),
    ("p50", "p50 ms", "{:.1f}"),
    ("p95", "p95 ms", "{:.1f}"),
    ("p99", "p99 ms", "{:.1f}"),
    ("embedder", "embedder alone p50", "{:.1f}"),
    ("encoder", "encoder in the question p50", "{:.1f}"),
    ("search", "search p50", "{:.1f}"),
    ("persist", "session write + retention p50", "{:.1f}"),
    ("policy_response_ledger", "policy, response, ledger, HTTP p50", "{:.1f}"),
)


def table(rows: list[dict[str, Any]]) -> str:
    header = [title for _, title, _ in COLUMNS] + ["p50 ÷ embedder"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [fmt.format(row[key]) for key, _, fmt in COLUMNS] + [f"{row['p50'] / row['embedder']:.1f}×"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--backend", choices=["seekdb", "sqlite", "both"], default="both")
    parser.add_argument("--questions", type=int, default=60, help="per row, at most")
    parser.add_argument("--distinct", action="store_true", help="a new question each time (default: the same one)")
    parser.add_argument("--row-seconds", type=float, default=60.0, help="stop a row's questions after this")
    parser.add_argument("--other-cards", type=int, default=0, help="cards of another case put in the store first")
    parser.add_argument("--without-owner-index", action="store_true", help="drop the store's owner index first")
    parser.add_argument("--steps", action="store_true", help="also time each step and SQL statement (one backend)")
    parser.add_argument("--json", action="store_true", help="print rows as JSON (used for the child processes)")
    parser.add_argument("--chart", action="store_true", help=f"write {CHART_DIR / 'interrogation.svg'}")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if not args.json:
        print(f"before: {load_line()}")
    steps = Steps() if args.steps and args.backend != "both" else None
    if args.backend == "both":
        rows = []
        for backend in ("seekdb", "sqlite"):
            progress(f"measuring {backend} at {sizes} cards per space …")
            child = [sys.executable, __file__, "--sizes", args.sizes, "--backend", backend]
            child += ["--questions", str(args.questions), "--row-seconds", str(args.row_seconds), "--json"]
            child += ["--distinct"] if args.distinct else []
            child += ["--other-cards", str(args.other_cards)]
            child += ["--without-owner-index"] if args.without_owner_index else []
            out = subprocess.run(child, check=True, stdout=subprocess.PIPE, text=True).stdout  # noqa: S603 - our own script
            rows += json.loads(out.strip().splitlines()[-1])
    else:
        if steps is not None:
            steps.install()
        rows = asyncio.run(
            measure(
                args.backend,
                sizes,
                args.questions,
                args.distinct,
                args.row_seconds,
                steps,
                args.other_cards,
                not args.without_owner_index,
            )
        )
    if args.json:
        print(json.dumps(rows))
        return
    print(f"after: {load_line()}")
    print(table(rows))
    if steps is not None:
        print(steps.table())
    if args.chart:
        bars = [(f"{r['backend']} {r['cards']:,} cards {q}", r[q]) for r in rows for q in ("p50", "p99")]
        title = "Interrogation latency (evidence mode, real HTTP, in-process app)"
        print(f"chart: {bar_chart(CHART_DIR / 'interrogation.svg', title, bars, 'ms', TARGET_P99_MS)}")


if __name__ == "__main__":
    main()
