"""Scoring the sets as the store does: every question against its role's pool, by the production
`RelevanceScorer`, judged by the production policy. Cosines come from the embedder's vectors exactly as the
store reports them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from bureau.evaluation.sets import EvalSet, Probe
from bureau.memory.relevance import RULE_SIGNALS, RelevanceScorer
from bureau.memory.types import Candidate
from bureau.scope.relevance import RelevancePolicy, Verdict
from bureau.scope.vocabulary import Certainty


@dataclass(frozen=True)
class Scored:
    probe: Probe
    candidates: tuple[Candidate, ...]  # with signals


def score_set(data: EvalSet, scorer: RelevanceScorer, embed: Any) -> list[Scored]:
    """Every probe against its pool. `embed` is the embedder (the same vectors the store would hold)."""
    cards = [card for pool in data.pools.values() for card in pool]
    vectors = dict(zip((c.id for c in cards), embed.embed_documents([c.content for c in cards]), strict=True))
    for card in cards:
        scorer.remember(card)
    scored = []
    for probe in data.probes:
        question = scorer.question(probe.text)
        qv = np.asarray(question.vector)
        pool = data.pools[(probe.case_id, probe.role)]
        candidates = [Candidate(card, float(qv @ np.asarray(vectors[card.id]))) for card in pool]
        scored.append(Scored(probe, tuple(scorer.score(question, candidates))))
    return scored


@dataclass(frozen=True)
class Outcome:
    probe: Probe
    verdict: Verdict
    best_card: str | None
    best_score: float

    @property
    def right_card(self) -> bool:
        return self.probe.answerable and self.best_card == self.probe.expected

    @property
    def correct_known(self) -> bool:
        return self.verdict == "known" and self.right_card


def judge(scored: Scored, policy: RelevancePolicy) -> Outcome:
    """As the game's classify(): the best-judged candidate decides; ties broken by cosine, then card id."""
    lang = scored.probe.language
    judged = [(policy.judge(c.signals, lang), c) for c in scored.candidates]
    if not judged:
        return Outcome(scored.probe, Certainty.UNKNOWN, None, 0.0)
    best_judgement, best = min(judged, key=lambda jc: (-jc[0].score, -jc[1].score, jc[1].card.id))
    return Outcome(scored.probe, best_judgement.verdict, best.card.id, best_judgement.score)


def without_rule(scored: Sequence[Scored]) -> list[Scored]:
    """The same candidates without the coverage rule's signals: the scorer as it was before issue 23."""
    return [
        Scored(
            s.probe,
            tuple(
                replace(c, signals={k: v for k, v in c.signals.items() if k not in RULE_SIGNALS}) for c in s.candidates
            ),
        )
        for s in scored
    ]


def build_scorer(embedder_name: str) -> tuple[RelevanceScorer, Any]:
    from bureau.memory.embedders import HashingEmbeddings, LocalUSEEmbeddings

    embedder = LocalUSEEmbeddings() if embedder_name == "local" else HashingEmbeddings()
    return RelevanceScorer(embedder), embedder
