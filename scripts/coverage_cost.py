"""Added cost of the coverage rule per question (docs/retrieval.md, "Known by construction").

    .venv/bin/python scripts/coverage_cost.py [--questions 300]

On the labelled set's questions and pools: the time the rule adds to a search, per question (the question's
focus words, predicates and attributes; then, per candidate, the best single-word cosines and the rule), as
a median and 90th percentile in ms; and, separately, the per-card part computed once when a card is written.
Prints the machine's load average (numbers measured on a busy machine are inflated).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bureau.evaluation import build_scorer, load_set
from bureau.memory.relevance.coverage import cover, question_words
from bureau.memory.relevance.features import best_per_word
from bureau.memory.relevance.words import card_words


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=300)
    args = parser.parse_args()
    data = load_set()
    scorer, _ = build_scorer("local")
    cards = [card for pool in data.pools.values() for card in pool]
    features = {f.content: f for f in scorer.remember_many(cards)}
    probes = data.probes[: args.questions]
    added, per_card = [], []
    for probe in probes:
        question = scorer.question(probe.text)  # vectors: the search computes them anyway
        pool = data.pools[(probe.case_id, probe.role)]
        asked = (*question.features.words, *question.addressed)
        t0 = time.perf_counter()
        words = question_words(question.features.words, probe.text)
        for card in pool:
            f = features[card.content]
            cover(words, question.asks, asked, f.cover, card.content, f.persons, best_per_word(question, f))
        added.append(time.perf_counter() - t0)
    for card in cards:
        t0 = time.perf_counter()
        card_words(card.content)
        per_card.append(time.perf_counter() - t0)
    ms = lambda xs: 1000 * statistics.median(xs)  # noqa: E731
    p90 = 1000 * statistics.quantiles(added, n=10)[-1]
    sizes = [len(pool) for pool in data.pools.values()]
    print(f"{len(probes)} questions, pools of {min(sizes)}-{max(sizes)} cards")
    print(f"coverage rule per question: p50 {ms(added):.2f} ms, p90 {p90:.2f} ms (first questions warm the caches)")
    print(f"per card, once at write time: p50 {ms(per_card):.3f} ms")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
