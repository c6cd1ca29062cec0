"""What the compartments and the vault cost (issues 33 and 34): the same workload against several checkouts of
the code in one run, e.g. today's main and this one, so the budgets are read off one machine at one time.

Over HTTP, one real `bureau serve` per checkout and round (open mode, evidence mode, embedded seekdb, its own
scratch data directory and vault), rounds alternating between the checkouts (A B A B ...):

- whisper p50: `--whispers` whispers into a fresh case, the roles in turn;
- interrogation p50 at 1 000 cards: a case whose detective holds 1 000 whispered cards, `--questions` questions
  of the detective (the scenario's and the cards' topics in turn);
- snapshot p50 and record page p50 (`limit=50`): `--reads` reads of a case that has been asked 30 questions.

In-process, per checkout (a child Python on that checkout's code), what a case's keys cost on its first touch
and in memory: today's main builds one case cipher and its Haar rotation; the vault's code reads the case's
compartment keys from its vault, unwraps them and derives the bases of the spaces a question reads (own space,
board) and of all four. Memory is what the per-case structures hold (their arrays and keys).

    .venv/bin/python bench/keys_cost.py --checkout main=/work/baseline --checkout new=.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import httpx
from harness import REPO, Checkout, Server, load_line, markdown_table, parse_checkout, percentile, progress

SIZE = 1_000
ROLES = ("detective", "informant", "suspect")
QUESTIONS = (
    "What is the safe combination?",
    "Where is the safe hidden?",
    "What time was the break-in?",
    "Which gate did the van use on night {n}?",
    "Who logged the crates at bay {n}?",
)

# Run in a child Python on one checkout's code: prints one JSON line. Never imported here.
FIRST_TOUCH = r"""
import json, os, statistics, sys, tempfile, time, tracemalloc
from pathlib import Path
import numpy as np
dims, cases = 512, int(sys.argv[1])
vector = np.random.default_rng(7).standard_normal(dims)
try:
    from bureau.vault.opening import VaultLocation, create_vault
    from bureau.scope.keys import SPACES
except ImportError:
    from bureau import sealing
    times, held = [], []
    for n in range(cases):
        key = sealing.new_case_key()  # a fresh key: its rotation's seed is new, so never in the cache yet
        tracemalloc.start()
        started = time.perf_counter()
        cipher = sealing.CaseCipher(f"case{n:08d}", key)
        cipher.rotate(vector)
        times.append((time.perf_counter() - started) * 1000)
        held.append(tracemalloc.get_traced_memory()[0])
        tracemalloc.stop()
    print(json.dumps({"question_ms": statistics.median(times), "all_spaces_ms": statistics.median(times),
                      "bytes": statistics.median(held), "kind": "one case key, one Haar rotation"}))
    raise SystemExit
import asyncio
where = Path(tempfile.mkdtemp())
vault = create_vault(VaultLocation(where, f"sqlite:///{where / 'vault.db'}", where / "kek"), "bench")
ids = [f"case{n:08d}" for n in range(cases)]
for case_id in ids:
    asyncio.run(vault.create_case(case_id, ""))
keyring = vault.keyring
question, everything, held = [], [], []
for case_id in ids:
    keyring.clear()
    tracemalloc.start()
    started = time.perf_counter()
    keys = keyring.case(case_id)  # one vault read, the compartment keys unwrapped
    for space in ("detective", "bulletin_board"):
        keyring.basis(keys, space, dims).apply(vector)
    question.append((time.perf_counter() - started) * 1000)
    for space in ("informant", "suspect"):
        keyring.basis(keys, space, dims).apply(vector)
    everything.append((time.perf_counter() - started) * 1000)
    held.append(keyring.bytes_held(case_id))
    tracemalloc.stop()
print(json.dumps({"question_ms": statistics.median(question), "all_spaces_ms": statistics.median(everything),
                  "bytes": statistics.median(held), "kind": "compartment keys from the vault, bases of 4 spaces"}))
"""


def first_touch(checkout: Checkout, cases: int) -> dict[str, float | str]:
    env = {"PYTHONPATH": str(checkout.backend), "PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run(  # noqa: S603
        [str(checkout.python), "-c", FIRST_TOUCH, str(cases)], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def expect(response: httpx.Response, status: int) -> httpx.Response:
    if response.status_code != status:
        raise RuntimeError(f"{response.request.method} {response.request.url.path}: {response.status_code}")
    return response


def timed(call: object, count: int) -> list[float]:
    times = []
    for n in range(count):
        started = time.perf_counter()
        call(n)  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
    return times


def new_case(http: httpx.Client) -> str:
    return expect(http.post("/api/cases", json={"scenario_id": "safe-combination"}), 201).json()["case"]["id"]


def measure(server: Server, whispers: int, questions: int, reads: int) -> dict[str, float]:
    with httpx.Client(base_url=server.url, timeout=120) as http:
        warm = new_case(http)
        for n in range(5):
            expect(
                http.post(f"/api/cases/{warm}/interrogations", json={"role": ROLES[n % 3], "question": QUESTIONS[0]}),
                200,
            )
        case = new_case(http)

        def whisper(n: int) -> None:
            body = {"role": ROLES[n % 3], "text": f"Note {n}: the porter saw a grey van at gate {n % 11}."}
            expect(http.post(f"/api/cases/{case}/whispers", json=body), 201)

        whispered = timed(whisper, whispers)
        big = new_case(http)
        progress(f"{server.checkout.label if server.checkout else 'this'}: {SIZE:,} cards into the detective's space")
        for n in range(SIZE):
            body = {"role": "detective", "text": f"Log {n}: crate {n * 7} moved to bay {n % 13} by porter {n % 5}."}
            expect(http.post(f"/api/cases/{big}/whispers", json=body), 201)

        def ask(n: int) -> None:
            body = {"role": "detective", "question": QUESTIONS[n % len(QUESTIONS)].format(n=n % 13)}
            expect(http.post(f"/api/cases/{big}/interrogations", json=body), 200)

        for n in range(5):
            ask(n)
        asked = timed(ask, questions)
        played = new_case(http)
        for n in range(30):
            body = {"role": ROLES[n % 3], "question": QUESTIONS[n % len(QUESTIONS)].format(n=n)}
            expect(http.post(f"/api/cases/{played}/interrogations", json=body), 200)
        snapshots = timed(lambda n: expect(http.get(f"/api/cases/{played}"), 200), reads)
        pages = timed(lambda n: expect(http.get(f"/api/cases/{played}/record", params={"limit": 50}), 200), reads)
    return {
        "whisper": percentile(whispered, 0.5),
        "interrogation_1000": percentile(asked, 0.5),
        "snapshot": percentile(snapshots, 0.5),
        "record_page": percentile(pages, 0.5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", action="append", type=parse_checkout, default=[], help="LABEL=PATH (repeatable)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per checkout, alternating")
    parser.add_argument("--whispers", type=int, default=60)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--reads", type=int, default=40)
    parser.add_argument("--cases", type=int, default=50, help="cases for the first-touch measurement")
    args = parser.parse_args()
    checkouts = args.checkout or [Checkout(REPO, "this")]
    progress(f"load before: {load_line()}")
    touched = {c.label: first_touch(c, args.cases) for c in checkouts}
    results: dict[str, list[dict[str, float]]] = {c.label: [] for c in checkouts}
    for round_ in range(args.rounds):
        for checkout in checkouts:
            server = Server(checkout=checkout)
            progress(f"round {round_ + 1}: {checkout.label} ({checkout.commit()}) starting")
            server.start()
            try:
                results[checkout.label].append(measure(server, args.whispers, args.questions, args.reads))
            finally:
                server.stop()
    progress(f"load after: {load_line()}")
    names = ("whisper", "interrogation_1000", "snapshot", "record_page")
    rows = []
    for checkout in checkouts:
        runs, touch = results[checkout.label], touched[checkout.label]
        rows.append(
            [
                f"{checkout.label} ({checkout.commit()})",
                *(f"{statistics.median(r[name] for r in runs):.1f}" for name in names),
                f"{touch['question_ms']:.2f} / {touch['all_spaces_ms']:.2f}",
                f"{float(touch['bytes']) / 1024:.0f}",
            ]
        )
    header = [
        "code",
        "whisper p50 ms",
        "interrogation p50 ms (1 000 cards)",
        "snapshot p50 ms",
        "record page p50 ms",
        "first touch ms (a question's spaces / all four)",
        "keys and bases KB per case",
    ]
    print(markdown_table(header, rows))
    print(f"\nmedians of {args.rounds} round(s) per checkout, alternating; {load_line()}")
    for checkout in checkouts:
        print(f"- {checkout.label}: {touched[checkout.label]['kind']}")


if __name__ == "__main__":
    sys.exit(main())
