"""`bureau eval-retrieval`: score the labelled set, optionally refit the model, print the figures and write
the charts; then the blind set in its own columns, before and after the coverage rule."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bureau.evaluation.chart import render_chart
from bureau.evaluation.fitting import (
    MODEL_PATH,
    WEIGHTS_FROM_DEVELOPMENT,
    as_development,
    cross_set_figures,
    fit,
    half_split_figures,
    write_model,
)
from bureau.evaluation.metrics import TODAY_THRESHOLD, Report, evaluate
from bureau.evaluation.scoring import build_scorer, judge, score_set, without_rule
from bureau.evaluation.sets import (
    BLIND_SET_2_PATH,
    BLIND_SET_3_PATH,
    BLIND_SET_PATH,
    LANGUAGES,
    NEAR_KINDS,
    PRESET_HOLDER,
    REPO,
    SET_PATH,
    load_blind,
    load_set,
)
from bureau.memory.relevance import load_policy

CHART_PATH = REPO / "docs" / "img" / "honest-retrieval-pr.svg"
BLIND_CHART_PATH = REPO / "docs" / "img" / "blind-retrieval-pr.svg"
BLIND_2_CHART_PATH = REPO / "docs" / "img" / "blind-2-retrieval-pr.svg"
BLIND_3_CHART_PATH = REPO / "docs" / "img" / "blind-3-retrieval-pr.svg"
# The scorer at the start of the round (round three: main at 39339f5) on each set: scripts/retrieval_baseline.py.
BASELINE_PATH = REPO / "docs" / "data" / "retrieval-baseline.json"


ROWS: tuple[tuple[str, str], ...] = (
    ("precision_known", "precision of known"),
    ("direct_known", "direct: known, right card"),
    ("followup_known", "follow-up: known, right card"),
    ("paraphrase_known", "paraphrase: known, right card"),
    ("paraphrase_known_or_uncertain", "paraphrase: right card known or uncertain"),
    ("cross_language_known", "cross-language: known, right card"),
    ("cross_language_known_or_uncertain", "cross-language: right card known or uncertain"),
    ("near_known", "near-topic: known (wrong)"),
    ("near_unknown", "near-topic: unknown"),
    ("off_known", "off-topic: known (wrong)"),
    ("off_unknown", "off-topic: unknown"),
    ("cross_role_known", "cross-role: known (leak)"),
    ("uncertain_rate", "uncertain, all questions"),
    ("auroc", "AUROC (best score)"),
)


def _cell(value: float, name: str) -> str:
    if math.isnan(value):
        return "–"
    return f"{value:.3f}" if name == "auroc" else f"{100 * value:.1f} %"


def render_table(report: Report) -> str:
    head = (
        f"| figure ({report.split} half, {report.embedder}, {report.policy}) | EN | ZH | all "
        f"| today (cosine ≥ {TODAY_THRESHOLD}), all |"
    )
    lines = [head, "|---|---|---|---|---|"]
    for key, label in ROWS:
        cells = [_cell(report.by_language[g][key], key) for g in ("en", "zh", "all")]
        lines.append(f"| {label} | {' | '.join(cells)} | {_cell(report.today['all'][key], key)} |")
    n = report.by_language
    lines.append(
        f"| questions (known) | {n['en']['questions']:.0f} ({n['en']['known']:.0f}) | "
        f"{n['zh']['questions']:.0f} ({n['zh']['known']:.0f}) | {n['all']['questions']:.0f} ({n['all']['known']:.0f}) "
        f"| {report.today['all']['known']:.0f} known |"
    )
    return "\n".join(lines)


COMPARE_ROWS: tuple[tuple[str, str], ...] = (
    ("precision_known", "precision of known (≥ 97 %)"),
    ("near_known", "near-topic answered known (≤ 2 %)"),
    *((f"near_{k}_known", f"  near-topic, another {k}: known") for k in NEAR_KINDS),
    ("direct_known", "direct: known, right card (100 %)"),
    ("followup_known", "follow-up: known, right card (≥ 90 %)"),
    ("paraphrase_known", "paraphrase: known, right card"),
    ("paraphrase_known_or_uncertain", "paraphrase: right card known or uncertain (≥ 70 %)"),
    ("cross_language_known", "cross-language: known, right card"),
    ("cross_language_known_or_uncertain", "cross-language: right card known or uncertain"),
    ("near_unknown", "near-topic: unknown"),
    ("off_known", "off-topic: known (0)"),
    ("cross_role_known", "cross-role: known (0)"),
    ("uncertain_rate", "uncertain, all questions"),
    ("auroc", "AUROC (best score)"),
)


def render_comparison(columns: Sequence[tuple[str, dict[str, float]]]) -> str:
    """Old and new figures side by side: one column per (set, language, scorer)."""
    lines = ["| figure | " + " | ".join(name for name, _ in columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for key, label in COMPARE_ROWS:
        cells = [_cell(figures.get(key, float("nan")), key) for _, figures in columns]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    counts = [f"{f['questions']:.0f} ({f['known']:.0f})" for _, f in columns]
    lines.append(f"| questions (known) | {' | '.join(counts)} |")
    return "\n".join(lines)


def run(
    embedder: str = "local",
    *,
    refit: bool = False,
    split: str = "test",
    set_path: Path = SET_PATH,
    chart: Path | None = CHART_PATH,
    out: Any = print,
    half_splits: int = 0,
    blind_path: Path | None = BLIND_SET_PATH,
    blind_chart: Path | None = BLIND_CHART_PATH,
    blind2_path: Path | None = BLIND_SET_2_PATH,
    blind2_chart: Path | None = BLIND_2_CHART_PATH,
    blind3_path: Path | None = BLIND_SET_3_PATH,
    blind3_chart: Path | None = BLIND_3_CHART_PATH,
    cross_sets: bool = False,
    cross_sets_weights: tuple[str, ...] | None = None,
) -> Report:
    """Score the set, optionally refit the model file, print the table and write the chart; then the blind
    set (when there is one) in its own columns, before and after the coverage rule, with its own chart."""
    data = load_set(set_path)
    scorer, embed = build_scorer(embedder)
    out(f"Scoring {len(data.probes)} questions about {len(data.facts)} facts with the {embedder} embedder …")
    scored = score_set(data, scorer, embed)
    if refit or cross_sets:
        # Fitting data since round three: the calibration half plus the development sets (blind sets 1 and 2).
        development = {
            name: score_set(load_blind(path), scorer, embed)
            for name, path in (("blind1", BLIND_SET_PATH), ("blind2", BLIND_SET_2_PATH))
        }
        if cross_sets:
            out("Cross-set check: fit on two of calibration half / blind set 1 / blind set 2, measure on the third:")
            weights = WEIGHTS_FROM_DEVELOPMENT if cross_sets_weights is None else cross_sets_weights
            out(f"  (weights and model cuts fitted on the development sets too for: {', '.join(weights) or 'none'})")
            crossed = cross_set_figures(scored, development, embedder, weights)
            out(
                render_comparison(
                    [
                        (f"{held} {lang.upper()} held out", row)
                        for held, by in crossed.items()
                        for lang, row in by.items()
                    ]
                )
            )
    if refit:
        dev = [s for part in development.values() for s in as_development(part)]
        write_model({embedder: fit([*scored, *dev], embedder)})
        load_policy.cache_clear()
        out(f"Wrote the fitted model to {MODEL_PATH}")
    if half_splits:
        held_out = half_split_figures(scored, embedder, half_splits)
        out(f"Calibration half only, {half_splits} random half-splits of its facts (fit on one, measure the other):")
        for lang, figures in held_out.items():
            out(f"  {lang}: " + ", ".join(f"{key} {_cell(figures[key], key)}" for key, _ in ROWS))
    policy = load_policy(embedder)
    if policy is None:
        raise SystemExit(f"No relevance model for the {embedder} embedder in {MODEL_PATH}: run with --fit")
    report = evaluate(scored, policy, split, embedder)
    out(render_table(report))
    holders = [judge(s, policy) for s in scored if s.probe.kind == PRESET_HOLDER]
    out(
        f"preset questions asked of a role that holds the fact: {sum(o.correct_known for o in holders)} of "
        f"{len(holders)} known with the right card; not known: "
        + (", ".join(f"{o.probe.text} ({o.probe.role}: {o.verdict})" for o in holders if not o.correct_known) or "none")
    )
    for lang in LANGUAGES:
        cuts = policy.cuts(lang)
        out(f"{lang}: known when p >= {cuts.known:.4f}, uncertain when p >= {cuts.uncertain:.4f}")
    cuts_by_lang = {lang: policy.cuts(lang) for lang in LANGUAGES}
    if chart is not None:
        chart.parent.mkdir(parents=True, exist_ok=True)
        chart.write_text(render_chart(report, cuts_by_lang), "utf-8")
        out(f"Wrote the precision–recall chart to {chart}")
    baseline = read_baseline()
    columns = comparison_columns(
        split, baseline.get(split), evaluate(without_rule(scored), policy, split, embedder), report
    )
    for name, key, path, chart_path in (
        ("blind", "blind1", blind_path, blind_chart),
        ("blind-2", "blind2", blind2_path, blind2_chart),
        ("blind-3", "blind3", blind3_path, blind3_chart),
    ):
        if path is None:
            continue
        if not path.exists():
            out(f"No blind set at {path}: its columns are left out")
            continue
        blind = load_blind(path)
        role = "never fitted on" if key == "blind3" else "a development set: fitting data since round three"
        out(f"{name}: {len(blind.probes)} questions about {len(blind.facts)} facts ({role})")
        blind_scored = score_set(blind, scorer, embed)
        blind_report = evaluate(blind_scored, policy, "blind", embedder)
        without = evaluate(without_rule(blind_scored), policy, "blind", embedder)
        columns += comparison_columns(name, baseline.get(key), without, blind_report)
        if chart_path is not None:
            chart_path.parent.mkdir(parents=True, exist_ok=True)
            title = f"blind set {key.removeprefix('blind')}"
            chart_path.write_text(render_chart(blind_report, cuts_by_lang, title), "utf-8")
            out(f"Wrote {name}'s precision–recall chart to {chart_path}")
    out("Before (main at the start of the round, docs/data/retrieval-baseline.json; else no coverage rule) and now:")
    out(render_comparison(columns))
    return report


def read_baseline(path: Path = BASELINE_PATH) -> dict[str, dict[str, dict[str, float]]]:
    """The "before" figures per set and language, when scripts/retrieval_baseline.py has measured them."""
    if not path.exists():
        return {}
    return dict(json.loads(path.read_text("utf-8")).get("sets", {}))


def comparison_columns(
    name: str, baseline: dict[str, dict[str, float]] | None, without: Report, now: Report
) -> list[tuple[str, dict[str, float]]]:
    """Per language: the baseline ("before": main's scorer at the start of the round) when measured, else
    the same model without the coverage rule ("no rule"); then "now"."""
    columns = []
    for lang in LANGUAGES:
        if baseline is not None and lang in baseline:
            columns.append((f"{name} {lang.upper()} before", baseline[lang]))
        else:
            columns.append((f"{name} {lang.upper()} no rule", without.by_language[lang]))
        columns.append((f"{name} {lang.upper()} now", now.by_language[lang]))
    return columns
