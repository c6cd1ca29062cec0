"""The covered cut's fit (evaluation/fitting.py, round three of issue 23) on hand-built candidates: the lowest
cut that keeps precision of known >= 97 % and near-topic known <= 2 % with nothing off-topic known, and the
development sets' questions as fitting data. No encoder: the model is p = sigmoid(10 * cosine - 5)."""

from __future__ import annotations

from datetime import UTC, datetime

from bureau.evaluation.fitting import DEVELOPMENT, as_development, choose_covered_cut
from bureau.evaluation.scoring import Scored
from bureau.evaluation.sets import Probe
from bureau.memory.relevance import RULE_SIGNALS
from bureau.memory.types import Candidate, StoredCard
from bureau.scope.relevance import Cuts

WEIGHTS = {"cosine": 10.0}
INTERCEPT = -5.0  # p = 0.5 at cosine 0.5
CUTS = Cuts(known=0.9, uncertain=0.1)


def _card(card_id: str) -> StoredCard:
    return StoredCard(
        id=card_id,
        case_id="c",
        space="detective",
        content="a card",
        topic="t",
        kind="note",
        visibility="private",
        memory_type="long_term_knowledge",
        trust="medium",
        created_by="operator",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def _question(n: int, kind: str, cosine: float, *, covered: bool = True) -> Scored:
    """One question with one candidate card; answerable kinds expect that card."""
    card = _card(f"card{n}")
    expected = card.id if kind in ("direct", "followup") else None
    rule = dict.fromkeys(RULE_SIGNALS, 0.0) | ({} if covered else {"rule_focus_missing": 1.0})
    probe = Probe(f"question {n}?", kind, f"en.f{n}", "c", "detective", expected, "calibration")
    return Scored(probe, (Candidate(card, cosine, {"cosine": cosine, **rule}),))


def _pool(near_cosine: float) -> list[Scored]:
    right = [_question(i, "direct", 0.5 + i / 200) for i in range(40)]  # p from 0.5 up
    near = [_question(100, "near", near_cosine)]
    off = [_question(200, "off", 0.2)]
    return [*right, *near, *off]


def test_the_covered_cut_stops_above_a_covered_near_topic_question() -> None:
    # The near-topic question is covered in full at cosine 0.54 (p ≈ 0.60): the cut must stay above it.
    cut = choose_covered_cut(_pool(0.54), INTERCEPT, WEIGHTS, CUTS)
    assert cut is not None and 0.60 < cut < 0.9


def test_without_a_covered_near_topic_question_the_cut_goes_down_to_the_right_answers() -> None:
    cut = choose_covered_cut(_pool(0.3), INTERCEPT, WEIGHTS, CUTS)
    assert cut is not None and 0.1 <= cut <= 0.5


def test_an_off_topic_question_covered_above_every_cut_leaves_no_covered_cut() -> None:
    pool = [*_pool(0.3), _question(300, "off", 0.85)]
    assert choose_covered_cut(pool, INTERCEPT, WEIGHTS, CUTS) is None


def test_a_development_set_becomes_fitting_data() -> None:
    moved = as_development(_pool(0.3))
    assert {s.probe.split for s in moved} == {DEVELOPMENT}
    assert [s.candidates for s in moved] == [s.candidates for s in _pool(0.3)]
