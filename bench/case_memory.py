"""What one live case costs a server in memory, and where each part lives (issue 36; docs/performance.md).

In-process, evidence mode, embedded seekdb, the offline encoder: a few cases first (the process's own caches
and the encoder warm), then `--cases` new cases, each created, whispered to once and asked `--questions`
questions, as a workshop player plays. Python's allocations are traced (tracemalloc, numpy's arrays
included) between the warm start and the end, and what is still held is charged to the innermost frame of our
own code that made it (its module), so a cache shows up where it lives. The store's and the
encoder's native memory is not traced: the workshop benchmark's server RSS counts it.

    .venv/bin/python bench/case_memory.py [--cases 50] [--questions 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import tracemalloc
from collections import Counter

import httpx
from harness import load_line, markdown_table, progress, scratch_dir, vault_beside

QUESTIONS = ("What is the safe combination?", "Where is the safe hidden?", "What time was the break-in?")
WARM_CASES = 3
OURS = f"{os.sep}bureau{os.sep}"


async def play(http: httpx.AsyncClient, questions: int) -> str:
    case_id = (await http.post("/api/cases", json={"scenario_id": "safe-combination"})).json()["case"]["id"]
    whisper = {"role": "detective", "text": "The van at gate 4 was blue."}
    assert (await http.post(f"/api/cases/{case_id}/whispers", json=whisper)).status_code == 201
    for n in range(questions):
        body = {"role": "detective", "question": QUESTIONS[n % len(QUESTIONS)]}
        assert (await http.post(f"/api/cases/{case_id}/interrogations", json=body)).status_code == 200
    return case_id


def owner(trace: tracemalloc.Trace) -> str:
    """The module of our own code nearest the allocation on its stack (tracemalloc lists the oldest frame
    first, so the stack is read from its far end)."""
    for frame in reversed(trace.traceback):
        if OURS in frame.filename:
            return frame.filename.split(OURS, 1)[1]
    return "(libraries, outside bureau)"


async def measure(cases: int, questions: int) -> tuple[list[list[str]], int]:
    for name in [n for n in os.environ if n.startswith("BUREAU_")]:
        del os.environ[name]
    from bureau.api.app import create_app
    from bureau.bootstrap.collector import settle_after_start
    from bureau.config import Settings

    data = scratch_dir("bench-casemem-")
    app = create_app(Settings(_env_file=None, data_dir=data, vault_dir=vault_beside(data)))
    async with app.router.lifespan_context(app):
        settle_after_start()
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=120) as http:
            for _ in range(WARM_CASES):
                await play(http, questions)
            gc.collect()
            tracemalloc.start(40)
            before = tracemalloc.take_snapshot()
            for n in range(cases):
                await play(http, questions)
                if (n + 1) % 10 == 0:
                    progress(f"{n + 1}/{cases} cases played")
            gc.collect()
            after = tracemalloc.take_snapshot()
            tracemalloc.stop()
    held: Counter[str] = Counter()
    before_sizes: Counter[str] = Counter()
    for trace in before.traces:
        before_sizes[owner(trace)] += trace.size
    for trace in after.traces:
        held[owner(trace)] += trace.size
    grown = {name: held[name] - before_sizes[name] for name in held}
    total = sum(grown.values())
    rows = [
        [name, f"{size / cases / 1024:,.1f}", f"{size / total:.0%}"]
        for name, size in sorted(grown.items(), key=lambda item: -item[1])
        if size / cases >= 1024  # parts under 1 KB per case: summed in the total only
    ]
    return rows, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--questions", type=int, default=3, help="questions asked of each case")
    args = parser.parse_args()
    print(f"before: {load_line()}")
    rows, total = asyncio.run(measure(args.cases, args.questions))
    print(f"after: {load_line()}")
    print(f"{args.cases} cases, each created, whispered to once and asked {args.questions} questions")
    print(f"Python memory still held per live case: {total / args.cases / 1024:,.1f} KB (traced; native not)")
    print(markdown_table(["where it lives (allocated in)", "KB per live case", "share"], rows))


if __name__ == "__main__":
    main()
