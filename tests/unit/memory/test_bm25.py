"""BM25 computed for the question's terms only gives rank-bm25's own figures, to the last bit
(memory/relevance/lexical.py): the library indexes the whole corpus again for every question, so the
relevance signals take its statistics without that cost, and must not move by a single ulp."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from bureau.memory.relevance.lexical import analyse, bm25_scores, library_bm25

SCENARIOS = Path(__file__).resolve().parents[3] / "backend" / "bureau" / "game" / "scenarios"


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def scenario_texts() -> list[str]:
    """Every sentence the shipped scenarios hold (cards, questions, titles), English and Chinese."""
    texts = {text for path in sorted(SCENARIOS.glob("*.yaml")) for text in strings(yaml.safe_load(path.read_text()))}
    return sorted(text for text in texts if len(text.split()) > 2 or len(text) > 6)


def test_the_scores_are_the_librarys_for_many_questions_and_pools() -> None:
    texts = scenario_texts()
    assert len(texts) > 50
    rng = random.Random(36)
    compared = matched = 0
    for _ in range(300):
        question = analyse(rng.choice(texts))
        pool = [(text, analyse(text)) for text in rng.sample(texts, rng.randint(1, 24))]
        pool += [("", analyse(""))] * rng.randint(0, 1)  # a card with no terms at all
        query = list(dict.fromkeys(question.terms))
        if not query:
            continue
        scores = bm25_scores(question, pool)
        assert scores == library_bm25(query, pool)
        compared += 1
        matched += any(score > 0 for score in scores.values())
    assert compared > 250 and matched > 100


def test_a_term_in_more_than_half_the_documents_takes_the_librarys_floor() -> None:
    """Its idf is negative, so the library floors it at a share of the average idf over every term: the same
    figures again, the floor included."""
    texts = [f"The vault key {n} is kept at the harbour office." for n in range(400)] + ["The ferry left at dawn."]
    pool = [(text, analyse(text)) for text in texts]
    question = analyse("Where is the vault key?")
    scores = bm25_scores(question, pool)
    assert scores == library_bm25(list(dict.fromkeys(question.terms)), pool)
    assert scores[next(iter(scores))] > 0
