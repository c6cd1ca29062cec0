"""Interrogation latency at N cards per space, split into embedding, search, persistence and the rest.

Real HTTP into an in-process app over real PowerMem (embedded seekdb, or the sqlite store), evidence mode,
the offline embedder. One backend per process (embedded seekdb allows one path per process), so
`--backend both` runs each in a child process. Prints a markdown table; numbers, not assertions.

    .venv/bin/python bench/interrogation.py --sizes 100,1000 --backend both --questions 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
from harness import CHART_DIR, bar_chart, load_line, percentile, progress

QUESTION = "What is the safe combination?"
TARGET_P99_MS = 100.0
FILLER = [f"Routine note {i}: the night shift logged nothing unusual at gate {i}." for i in range(50)]


async def measure(backend: str, sizes: list[int], questions: int) -> list[dict[str, Any]]:
    for name in [n for n in os.environ if n.startswith("BUREAU_")]:
        del os.environ[name]
    from bureau.api.app import create_app
    from bureau.config import Settings
    from bureau.memory.types import CardDraft
    from bureau.scope.keys import role_scope

    settings = Settings(_env_file=None, data_dir=Path(tempfile.mkdtemp(prefix="bench-")), memory_backend=backend)
    app = create_app(settings)
    rows = []
    async with app.router.lifespan_context(app):
        gateway = app.state.services.gateway
        spent: dict[str, list[float]] = defaultdict(list)
        run = gateway._run

        async def timed(fn, *args, **kwargs):  # time every store call by what it does
            started = time.perf_counter()
            try:
                return await run(fn, *args, **kwargs)
            finally:
                spent[fn.__name__].append((time.perf_counter() - started) * 1000)

        gateway._run = timed
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=120) as http:
            for size in sizes:
                case_id = (await http.post("/api/cases", json={"scenario_id": "safe-combination"})).json()["case"]["id"]
                drafts = [CardDraft(content=FILLER[i % len(FILLER)], topic="filler", kind="note") for i in range(size)]
                for start in range(0, size, 1000):
                    await gateway.write_many(role_scope(case_id, "detective"), drafts[start : start + 1000])
                progress(f"{backend}: {size:,} cards in the space; asking {questions} questions")
                for _ in range(5):  # warm caches
                    await http.post(
                        f"/api/cases/{case_id}/interrogations", json={"role": "detective", "question": QUESTION}
                    )
                spent.clear()
                totals = []
                for _ in range(questions):
                    started = time.perf_counter()
                    response = await http.post(
                        f"/api/cases/{case_id}/interrogations", json={"role": "detective", "question": QUESTION}
                    )
                    totals.append((time.perf_counter() - started) * 1000)
                    assert response.status_code == 200, response.text
                embed = []
                for _ in range(questions):
                    started = time.perf_counter()
                    gateway._embedder.embed_query(QUESTION)
                    embed.append((time.perf_counter() - started) * 1000)
                search = [s - e for s, e in zip(spent["_search_blocking"], embed, strict=False)]
                persist = [w + t for w, t in zip(spent["_write_many_blocking"], spent["_trim_blocking"], strict=False)]
                rest = [t - s - e - p for t, s, e, p in zip(totals, search, embed, persist, strict=False)]
                rows.append(
                    {
                        "backend": gateway.backend_name,
                        "cards": size,
                        "p50": percentile(totals, 0.5),
                        "p95": percentile(totals, 0.95),
                        "p99": percentile(totals, 0.99),
                        "embedding": percentile(embed, 0.5),
                        "search": percentile(search, 0.5),
                        "persist": percentile(persist, 0.5),
                        "policy_response_ledger": percentile(rest, 0.5),
                    }
                )
    return rows


COLUMNS = (
    ("backend", "backend", "{}"),
    ("cards", "cards in space", "{:,}"),
    ("p50", "p50 ms", "{:.1f}"),
    ("p95", "p95 ms", "{:.1f}"),
    ("p99", "p99 ms", "{:.1f}"),
    ("embedding", "embedding p50", "{:.1f}"),
    ("search", "search p50", "{:.1f}"),
    ("persist", "session write + retention p50", "{:.1f}"),
    ("policy_response_ledger", "policy, response, ledger, HTTP p50", "{:.1f}"),
)


def table(rows: list[dict[str, Any]]) -> str:
    header = [title for _, title, _ in COLUMNS] + ["p50 ÷ embedding"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [fmt.format(row[key]) for key, _, fmt in COLUMNS] + [f"{row['p50'] / row['embedding']:.1f}×"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--backend", choices=["seekdb", "sqlite", "both"], default="both")
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--json", action="store_true", help="print rows as JSON (used for the child processes)")
    parser.add_argument("--chart", action="store_true", help=f"write {CHART_DIR / 'interrogation.svg'}")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if not args.json:
        print(f"before: {load_line()}")
    if args.backend == "both":
        rows = []
        for backend in ("seekdb", "sqlite"):
            progress(f"measuring {backend} at {sizes} cards per space …")
            child = [sys.executable, __file__, "--sizes", args.sizes, "--backend", backend]
            child += ["--questions", str(args.questions), "--json"]
            out = subprocess.run(child, check=True, capture_output=True, text=True).stdout  # noqa: S603 - our own script
            rows += json.loads(out.strip().splitlines()[-1])
    else:
        rows = asyncio.run(measure(args.backend, sizes, args.questions))
    if args.json:
        print(json.dumps(rows))
        return
    print(f"after: {load_line()}")
    print(table(rows))
    if args.chart:
        bars = [(f"{r['backend']} {r['cards']:,} cards {q}", r[q]) for r in rows for q in ("p50", "p99")]
        title = "Interrogation latency (evidence mode, real HTTP, in-process app)"
        print(f"chart: {bar_chart(CHART_DIR / 'interrogation.svg', title, bars, 'ms', TARGET_P99_MS)}")


if __name__ == "__main__":
    main()
