"""Retrieval quality of the embedders at their default thresholds (docs/retrieval.md).

The floors below sit a little under the values measured by scripts/calibrate_threshold.py, so a model or
content change that makes retrieval worse fails here. Measured values are in the comments.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from bureau.config import DEFAULT_THRESHOLDS
from bureau.game.scenario_schema import ROLES, load_builtin_scenarios
from bureau.memory.embedders import HashingEmbeddings, LocalUSEEmbeddings, cosine
from live_server import REPO

SCRIPT = REPO / "scripts" / "calibrate_threshold.py"
FOOTBALL = ("Who won the football match?", "谁赢了足球比赛？")


def _load_calibration():
    spec = importlib.util.spec_from_file_location("calibrate_threshold", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


ct = _load_calibration()


@pytest.fixture(scope="module")
def data():
    return ct.load_retrieval_set()


@pytest.fixture(scope="module")
def local():
    return LocalUSEEmbeddings()


@pytest.fixture(scope="module")
def hashing():
    return HashingEmbeddings()


@pytest.fixture(scope="module")
def scored_local(data, local):
    return ct.score_set(data, local)


@pytest.fixture(scope="module")
def scored_hashing(data, hashing):
    return ct.score_set(data, hashing)


def test_set_has_the_documented_shape(data):
    counts = {c: sum(q.category == c for q in data.queries) for c in ct.CATEGORIES}
    assert counts["direct"] >= 15 and counts["paraphrase"] >= 15
    assert counts["cross_language"] >= 10 and counts["unanswerable"] >= 30
    for category in ct.CATEGORIES:
        assert {q.lang for q in data.queries if q.category == category} == {"en", "zh"}
    assert sum(c.scenario is None for c in data.cards.values()) >= 15
    assert set(FOOTBALL) <= {q.text for q in data.queries if q.category == "unanswerable"}


@pytest.mark.parametrize("name", ["local", "hashing"])
def test_default_threshold_is_the_calibrated_one(name, request):
    scored = request.getfixturevalue(f"scored_{name}")
    chosen, _ = ct.choose_threshold(scored)
    assert chosen == pytest.approx(DEFAULT_THRESHOLDS[name])


def test_local_embedder_meets_documented_figures(scored_local):
    m = ct.evaluate(scored_local, DEFAULT_THRESHOLDS["local"])
    assert m.far_refusal == 1.0  # measured 100 % (14/14): off-topic questions are never "known"
    assert m.refusal >= 0.80  # measured 80.0 % (28/35), the calibration criterion
    assert m.recall["direct"] >= 0.75  # measured 81.8 % (18/22)
    assert m.precision >= 0.65  # measured 72.4 %
    assert m.accuracy >= 0.50  # measured 53.8 %
    assert ct.separation_auroc(scored_local) >= 0.70  # measured 0.742
    assert ct.category_auroc(scored_local, "direct") >= 0.85  # measured 0.883
    # Ranking still works where the scores are low: top-1 right without any threshold.
    top1 = {c: [s.top1_correct for s in scored_local if s.query.category == c] for c in ct.ANSWERABLE}
    assert sum(top1["direct"]) / len(top1["direct"]) >= 0.90  # measured 95.5 %
    assert sum(top1["paraphrase"]) / len(top1["paraphrase"]) >= 0.55  # measured 63.6 %
    assert sum(top1["cross_language"]) / len(top1["cross_language"]) >= 0.65  # measured 75.0 %


def test_hashing_embedder_meets_documented_figures(scored_hashing):
    m = ct.evaluate(scored_hashing, DEFAULT_THRESHOLDS["hashing"])
    assert m.far_refusal == 1.0  # measured 100 %
    assert m.refusal >= 0.80  # measured 85.7 %
    assert m.recall["direct"] >= 0.80  # measured 86.4 %
    assert m.precision >= 0.70  # measured 77.8 %
    assert ct.separation_auroc(scored_hashing) >= 0.85  # measured 0.891


@pytest.mark.parametrize("name", ["local", "hashing"])
def test_football_is_unknown_against_every_scenario_card(name, request):
    embedder = request.getfixturevalue(name)
    threshold = DEFAULT_THRESHOLDS[name]
    contents = [
        card.content
        for scenario in load_builtin_scenarios().values()
        for cards in scenario.cards.by_role().values()
        for card in cards
    ]
    vectors = embedder.embed_documents([*FOOTBALL, *contents])
    for question, qv in zip(FOOTBALL, vectors[: len(FOOTBALL)], strict=True):
        for content, cv in zip(contents, vectors[len(FOOTBALL) :], strict=True):
            score = cosine(qv, cv)
            assert score < threshold, f"{question!r} scores {score:.3f} against {content!r}"


def _knowers(embedder, scenario, question: str, threshold: float) -> set[str]:
    by_role = scenario.cards.by_role()
    qv = embedder.embed_query(question)
    known = set()
    for role in ROLES:
        vectors = embedder.embed_documents([c.content for c in by_role[role]])
        if max(cosine(qv, v) for v in vectors) >= threshold:
            known.add(role)
    return known


@pytest.mark.parametrize(
    ("scenario_id", "questions", "expected"),
    [
        (
            "safe-combination",
            {"en": "What is the safe combination?", "zh": "保险柜的密码是多少？"},
            {"informant"},
        ),
        ("mole", {"en": "Who is the mole?", "zh": "内鬼是谁？"}, {"informant", "suspect"}),
        ("allergy", {"en": "Who is allergic to peanuts?", "zh": "谁对花生过敏？"}, {"informant"}),
    ],
)
def test_who_knows_what_for_the_demo_questions(local, scenario_id, questions, expected):
    scenarios = load_builtin_scenarios()
    for lang, question in questions.items():
        assert question in scenarios[(scenario_id, lang)].preset_questions
        knowers = _knowers(local, scenarios[(scenario_id, lang)], question, DEFAULT_THRESHOLDS["local"])
        assert knowers == expected, f"{scenario_id}.{lang}: {question!r}"


def test_nobody_in_the_mole_case_knows_a_safe_combination(local):
    """An off-scenario question (no longer a mole preset): no role's memory answers it."""
    scenarios = load_builtin_scenarios()
    for lang, question in {"en": "What is the safe combination?", "zh": "保险柜的密码是多少？"}.items():
        assert _knowers(local, scenarios[("mole", lang)], question, DEFAULT_THRESHOLDS["local"]) == set()
