"""The figures of `bureau eval-retrieval`: precision of known, recall per kind of question, AUROC, the
precision-recall curve, and the report of one half (or the blind set) against today's single threshold."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from bureau.evaluation.scoring import Outcome, Scored, judge, without_rule
from bureau.evaluation.sets import ANSWERABLE_KINDS, LANGUAGES, NEAR_KINDS, UNANSWERABLE_KINDS
from bureau.scope.relevance import RelevancePolicy, ThresholdPolicy

TODAY_THRESHOLD = 0.40  # the single cosine threshold this model replaces, for the comparison column


def _rate(items: Sequence[bool]) -> float:
    return sum(items) / len(items) if items else float("nan")


def auroc(outcomes: Sequence[Outcome]) -> float:
    """P(an answerable question whose best card is right outscores an unanswerable one); ties count half."""
    positives = [o.best_score for o in outcomes if o.right_card]
    negatives = [o.best_score for o in outcomes if not o.probe.answerable]
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def metrics(outcomes: Sequence[Outcome]) -> dict[str, float]:
    by_kind: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_kind[o.probe.kind].append(o)
    known = [o for o in outcomes if o.verdict == "known"]
    result = {
        "questions": float(len(outcomes)),
        "precision_known": _rate([o.right_card for o in known]),
        "known": float(len(known)),
        "uncertain_rate": _rate([o.verdict == "uncertain" for o in outcomes]),
        "auroc": auroc(outcomes),
    }
    for kind in ANSWERABLE_KINDS:
        group = by_kind[kind]
        result[f"{kind}_known"] = _rate([o.correct_known for o in group])
        result[f"{kind}_known_or_uncertain"] = _rate([o.right_card and o.verdict != "unknown" for o in group])
    for kind in UNANSWERABLE_KINDS:
        group = by_kind[kind]
        result[f"{kind}_known"] = _rate([o.verdict == "known" for o in group])
        result[f"{kind}_unknown"] = _rate([o.verdict == "unknown" for o in group])
    for near_kind in NEAR_KINDS:
        group = [o for o in by_kind["near"] if o.probe.near_kind == near_kind]
        result[f"near_{near_kind}_known"] = _rate([o.verdict == "known" for o in group])
        result[f"near_{near_kind}_n"] = float(len(group))
    return result


def pr_curve(outcomes: Sequence[Outcome]) -> list[tuple[float, float, float]]:
    """(cut, recall, precision) for every cut on the best score: recall over the answerable questions."""
    answerable = sum(o.probe.answerable for o in outcomes) or 1
    points = []
    for cut in sorted({o.best_score for o in outcomes}, reverse=True):
        known = [o for o in outcomes if o.best_score >= cut]
        right = sum(o.right_card for o in known)
        points.append((cut, right / answerable, right / len(known)))
    return points


@dataclass
class Report:
    embedder: str
    split: str
    policy: str
    by_language: dict[str, dict[str, float]]
    today: dict[str, dict[str, float]]
    outcomes: list[Outcome]
    today_outcomes: list[Outcome]


def evaluate(scored: Sequence[Scored], policy: RelevancePolicy, split: str = "test", embedder: str = "") -> Report:
    part = [s for s in scored if s.probe.split == split or (split == "all" and s.probe.split != "preset")]
    outcomes = [judge(s, policy) for s in part]
    old = ThresholdPolicy(TODAY_THRESHOLD, 0.0)
    # Today's evidence mode: one cosine threshold, nothing uncertain (the band was shown as misses), no rule.
    today_outcomes = [judge(s, old) for s in without_rule(part)]
    groups = {"all": outcomes, **{lang: [o for o in outcomes if o.probe.language == lang] for lang in LANGUAGES}}
    today = {
        "all": today_outcomes,
        **{lang: [o for o in today_outcomes if o.probe.language == lang] for lang in LANGUAGES},
    }
    return Report(
        embedder=embedder,
        split=split,
        policy=policy.name,
        by_language={k: metrics(v) for k, v in groups.items()},
        today={k: metrics(v) for k, v in today.items()},
        outcomes=outcomes,
        today_outcomes=today_outcomes,
    )
