"""Added cost of the relevance signals per question (docs/retrieval.md, "Cost").

    .venv/bin/python scripts/relevance_cost.py [--questions 100]

Compares, on the labelled set's questions and pools, what a search did before (one embed_query) with what
it does now (one batch: the sentence and its content words; then the signals for every candidate). Prints
medians in ms and the machine's load average (numbers measured on a busy machine are inflated).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from bureau.evaluation import build_scorer, load_set
from bureau.memory.types import Candidate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    args = parser.parse_args()
    data = load_set()
    scorer, embedder = build_scorer("local")
    cards = [card for pool in data.pools.values() for card in pool]
    vectors = dict(zip((c.id for c in cards), embedder.embed_documents([c.content for c in cards]), strict=True))
    scorer.remember_many(cards)
    probes = data.probes[: args.questions]
    before, question_cost, signal_cost = [], [], []
    for probe in probes:
        t0 = time.perf_counter()
        embedder.embed_query(probe.text)
        t1 = time.perf_counter()
        question = scorer.question(probe.text)
        t2 = time.perf_counter()
        qv = np.asarray(question.vector)
        pool = data.pools[(probe.case_id, probe.role)]
        candidates = [Candidate(c, float(qv @ np.asarray(vectors[c.id]))) for c in pool]
        t3 = time.perf_counter()
        scorer.score(question, candidates)
        t4 = time.perf_counter()
        before.append(t1 - t0)
        question_cost.append(t2 - t1)
        signal_cost.append(t4 - t3)
    ms = lambda xs: 1000 * statistics.median(xs)  # noqa: E731
    added = 1000 * statistics.median([q - b + s for b, q, s in zip(before, question_cost, signal_cost, strict=True)])
    pool_sizes = sorted({len(data.pools[(p.case_id, p.role)]) for p in probes})
    print(f"questions: {len(probes)}, pool sizes {pool_sizes[0]}–{pool_sizes[-1]} cards, load {os.getloadavg()}")
    print(f"before: embed_query               {ms(before):6.2f} ms (median)")
    print(f"now:    sentence + words, 1 batch {ms(question_cost):6.2f} ms")
    print(f"        signals for the pool      {ms(signal_cost):6.2f} ms")
    print(f"added per question                {added:6.2f} ms (median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
