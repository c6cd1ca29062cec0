"""The blind set's loader and its own column in the evaluation, on a small fixture written for this test
(tests/data/blind_format_fixture.yaml), never on the blind set itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from bureau.evaluation import (
    BLIND_SET_2_PATH,
    BLIND_SET_PATH,
    COMPARE_ROWS,
    NEAR_KINDS,
    build_scorer,
    evaluate,
    load_blind,
    render_comparison,
    score_set,
    without_rule,
)
from bureau.memory.relevance import load_policy

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "blind_format_fixture.yaml"


def test_the_loader_reads_near_topic_lists_by_kind_and_followup_lists() -> None:
    data = load_blind(FIXTURE)
    assert set(data.facts) == {"ben.parrot", "ben.ladder", "bzh.parrot"}
    near = [p for p in data.probes if p.kind == "near"]
    assert len(near) == 4 + 1 + 2
    assert {p.near_kind for p in near} == set(NEAR_KINDS)
    assert [p.near_kind for p in near if p.fact_id == "ben.parrot"] == ["attribute", "instance", "time", "person"]
    assert all(p.expected is None for p in near)
    # Two follow-ups listed, one given as a string.
    assert sum(p.kind == "followup" and p.fact_id == "ben.parrot" for p in data.probes) == 2
    assert sum(p.kind == "followup" and p.fact_id == "ben.ladder" for p in data.probes) == 1
    assert {p.split for p in data.probes} == {"blind"}
    # No preset questions: those belong to the labelled set's calibration half.
    assert {p.kind for p in data.probes} == {
        "direct",
        "followup",
        "paraphrase",
        "cross_language",
        "near",
        "off",
        "cross_role",
    }
    # The whispered card is in the holder's pool, the cross-role question asked of another role.
    assert any(c.id == "ben.ladder" for c in data.pools[("blind-en-fixture", "suspect")])
    cross = next(p for p in data.probes if p.kind == "cross_role" and p.fact_id == "ben.ladder")
    assert cross.role != "suspect"


def test_the_loader_refuses_a_fact_outside_the_blind_split(tmp_path: Path) -> None:
    text = FIXTURE.read_text("utf-8").replace(
        "id: ben.ladder, role: suspect, split: blind", "id: ben.ladder, role: suspect, split: test"
    )
    path = tmp_path / "set.yaml"
    path.write_text(text, "utf-8")
    with pytest.raises(ValueError, match="split: blind"):
        load_blind(path)


def test_the_loader_refuses_an_unknown_near_topic_kind(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(FIXTURE.read_text("utf-8").replace("kind: time", "kind: colour"), "utf-8")
    with pytest.raises(ValueError, match="near-topic kind"):
        load_blind(path)


@pytest.fixture(scope="module")
def blind_reports():
    data = load_blind(FIXTURE)
    scorer, embedder = build_scorer("local")
    scored = score_set(data, scorer, embedder)
    policy = load_policy("local")
    assert policy is not None
    return evaluate(without_rule(scored), policy, "blind", "local"), evaluate(scored, policy, "blind", "local")


def test_the_blind_column_reports_every_kind_and_near_topic_by_kind(blind_reports) -> None:
    before, now = blind_reports
    en = now.by_language["en"]
    assert en["questions"] == sum(1 for o in now.outcomes if o.probe.language == "en")
    for kind in NEAR_KINDS:
        assert en[f"near_{kind}_n"] >= 1
        assert 0.0 <= en[f"near_{kind}_known"] <= 1.0
    assert now.by_language["zh"]["near_time_n"] == 0
    assert now.by_language["all"]["off_known"] == 0.0 and now.by_language["all"]["cross_role_known"] == 0.0
    table = render_comparison([("blind EN before", before.by_language["en"]), ("blind EN now", en)])
    assert table.count("\n") == len(COMPARE_ROWS) + 2
    assert "another attribute" in table and "blind EN now" in table


# Blind sets 1 and 2's figures as `make eval` measures them (docs/retrieval.md): floors. Both are development sets
# since rounds two and three (seen, and fitting data for the covered cut); these are round three's figures.
BLIND_DOCUMENTED: dict[Path, dict[str, dict[str, float]]] = {
    BLIND_SET_PATH: {
        "en": {"precision_known": 0.980, "direct_known": 0.822, "followup_known": 0.655},
        "zh": {"precision_known": 1.0, "direct_known": 0.851, "followup_known": 0.680},
    },
    BLIND_SET_2_PATH: {
        "en": {"precision_known": 0.963, "direct_known": 0.674, "followup_known": 0.511},
        "zh": {"precision_known": 0.951, "direct_known": 0.565, "followup_known": 0.522},
    },
}
BLIND_NEAR_KNOWN_CEILING = {
    BLIND_SET_PATH: {"en": 0.015, "zh": 0.0},
    BLIND_SET_2_PATH: {"en": 0.019, "zh": 0.024},
}


@pytest.mark.parametrize("path", [BLIND_SET_PATH, BLIND_SET_2_PATH], ids=["blind1", "blind2"])
def test_the_development_sets_figures_do_not_drop_and_the_hard_rules_hold(path: Path) -> None:
    if not path.exists():
        pytest.skip("the set is not on this branch")
    data = load_blind(path)
    scorer, embedder = build_scorer("local")
    policy = load_policy("local")
    assert policy is not None
    report = evaluate(score_set(data, scorer, embedder), policy, "blind", "local")
    for lang, floors in BLIND_DOCUMENTED[path].items():
        figures = report.by_language[lang]
        for name, floor in floors.items():
            assert figures[name] >= floor - 5e-4, f"{lang} {name}: {figures[name]:.3f} < {floor:.3f}"
        assert figures["near_known"] <= BLIND_NEAR_KNOWN_CEILING[path][lang] + 5e-4, lang
        assert figures["off_known"] == 0.0 and figures["cross_role_known"] == 0.0, lang


def test_before_columns_come_from_the_measured_baseline_else_from_the_model_without_the_rule(
    blind_reports, tmp_path: Path
) -> None:
    """`make eval`'s "before" is main's scorer at the start of the round (scripts/retrieval_baseline.py writes
    it); a set it has not measured shows the model without the coverage rule, labelled "no rule"."""
    from bureau.evaluation.report import comparison_columns, read_baseline

    without, now = blind_reports
    path = tmp_path / "baseline.json"
    path.write_text('{"commit": "abc", "sets": {"blind2": {"en": {"known": 7.0}, "zh": {"known": 9.0}}}}', "utf-8")
    baseline = read_baseline(path)
    columns = dict(comparison_columns("blind-2", baseline.get("blind2"), without, now))
    assert columns["blind-2 EN before"] == {"known": 7.0} and columns["blind-2 ZH before"] == {"known": 9.0}
    assert columns["blind-2 EN now"] is now.by_language["en"]
    unmeasured = dict(comparison_columns("blind", baseline.get("blind1"), without, now))
    assert unmeasured["blind EN no rule"] is without.by_language["en"]
    assert read_baseline(tmp_path / "absent.json") == {}
