"""The issue's night porter, as a regression test: the outcomes of its questions with the shipped model.

Asked of the detective, who holds the whispered card (English and Chinese versions of the labelled set's
porter fact, beside the scenario's opening cards), with the production scorer and policy. An outcome that
changes fails here: a better one means updating this table and docs/retrieval.md together.
"""

from __future__ import annotations

import pytest

from bureau.evaluation import Probe, build_scorer, judge, load_set, score_set
from bureau.memory.relevance import load_policy

# (the card's fact id, question, outcome); a known or uncertain answer must cite the porter card
OUTCOMES: tuple[tuple[str, str, str], ...] = (
    ("en.porter", "Who did the night porter see?", "known"),
    ("en.porter", "Who saw a courier?", "known"),
    ("en.porter", "What was the courier carrying?", "uncertain"),
    # The Chinese follow-up against the English card: not reached (docs/retrieval.md).
    ("en.porter", "快递员手里拿着什么？", "unknown"),
    ("zh.porter", "夜班门房看见了谁？", "known"),
    # Below the Chinese uncertain cut (0.170 < 0.242), which the preset questions asked of roles without the
    # fact set (聚餐订在哪家餐厅？ of the suspect must stay unknown): docs/retrieval.md.
    ("zh.porter", "快递员手里拿着什么？", "unknown"),
    # Across languages the coverage rule (memory/coverage.py) finds no literal match: uncertain at best, and
    # said so (docs/retrieval.md, "what the rule costs").
    ("zh.porter", "Who did the night porter see?", "uncertain"),
)


@pytest.fixture(scope="module")
def outcomes():
    data = load_set()
    porter = {fid: data.facts[fid] for fid in ("en.porter", "zh.porter")}
    probes = [
        Probe(text, "followup", fid, porter[fid]["case_id"], "detective", fid, "test") for fid, text, _ in OUTCOMES
    ]
    # Only the two games' pools: the porter questions are asked of the detective with their own cards.
    pools = {key: cards for key, cards in data.pools.items() if key[0] in {f["case_id"] for f in porter.values()}}
    data.pools, data.probes = pools, probes
    scorer, embedder = build_scorer("local")
    policy = load_policy("local")
    return {(s.probe.fact_id, s.probe.text): judge(s, policy) for s in score_set(data, scorer, embedder)}


@pytest.mark.parametrize(("fact_id", "question", "expected"), OUTCOMES)
def test_night_porter_outcome(outcomes, fact_id: str, question: str, expected: str) -> None:
    outcome = outcomes[(fact_id, question)]
    assert outcome.verdict == expected, (question, outcome.best_score, outcome.best_card)
    if expected != "unknown":
        assert outcome.best_card == fact_id, question
