"""`bureau eval-retrieval --fit`: the logistic model per question language, fitted on the **calibration**
facts (numpy IRLS with a small L2 penalty), its two cut points chosen there, and the covered cut chosen on
the calibration facts plus the development sets (blind sets 1 and 2, round three), written to
`memory/data/relevance_model.json`; held-out figures from half-splits of the calibration half; and the
cross-set check (fit on two of the three fitting sets, measure on the third)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from bureau.evaluation.metrics import metrics
from bureau.evaluation.scoring import Outcome, Scored, judge, without_rule
from bureau.evaluation.sets import LANGUAGES, PRESET_OTHER, Probe
from bureau.memory.relevance import RULE_SIGNALS, SIGNALS
from bureau.memory.types import Candidate
from bureau.scope.relevance import CAP_GAP, Cuts, LanguageModel, LogisticPolicy, covered, policy_from_data
from bureau.scope.vocabulary import Certainty, RelevancePolicyName

MODEL_PATH = Path(__file__).resolve().parents[1] / "memory" / "data" / "relevance_model.json"
# Calibration targets for the cut points (on the calibration half; the test half is reported, not tuned).
KNOWN_PRECISION_TARGET = 0.975
# The covered cut (round three of issue 23) is chosen under the issue's own targets, on all the fitting data of
# one language: the calibration half and the development sets (blind sets 1 and 2, seen since their rounds).
COVERED_PRECISION_TARGET = 0.97
COVERED_NEAR_KNOWN_TARGET = 0.02
# Languages whose weights and model cuts are fitted on the development sets too, not on the calibration half
# alone. None, decided by the cross-set check (`--cross-sets`: fit on two of calibration half / blind set 1 /
# blind set 2, measure on the third; `--cross-sets-weights en` measures the alternative): in English the refit on
# all three raised blind set 2's held-out precision of known by one question but cost paraphrase and
# cross-language known-or-uncertain on blind set 1 and the calibration half, and direct and follow-up recall on
# blind set 1; in Chinese it lowered blind set 2's precision. So the weights and model cuts stay the calibration
# half's; only the covered cut is chosen on every set (docs/retrieval.md, "Round three").
WEIGHTS_FROM_DEVELOPMENT: tuple[str, ...] = ()
DEVELOPMENT = "development"  # the split a development set's probes are given when they are fitting data
OFF_TOPIC_UNKNOWN_TARGET = 0.95
L2_PENALTY = 0.05
# Signals a language's model leaves out (weight 0), decided on the calibration half alone (repeated half-splits
# of its facts): the content words' cosine lifted Chinese paraphrase and cross-language recall, but in
# English it cost direct and follow-up recall and precision for paraphrases within noise.
UNUSED: dict[str, tuple[str, ...]] = {"en": ("content_cosine",)}
CAPS: tuple[str, ...] = ("type_miss",)  # a card that cannot give the kind of answer asked is never known


def _matrix(rows: Iterable[Candidate], names: Sequence[str]) -> np.ndarray:
    return np.asarray([[float(c.signals[name]) for name in names] for c in rows], dtype=float)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2_PENALTY) -> tuple[float, np.ndarray]:
    """Penalised logistic regression by iteratively reweighted least squares, on standardised features.
    Returns (intercept, weights) on the original feature scale."""
    mean, std = x.mean(axis=0), x.std(axis=0)
    std = np.where(std < 1e-9, 1.0, std)
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / std])
    beta = np.zeros(z.shape[1])
    penalty = np.eye(z.shape[1]) * l2 * len(x)
    penalty[0, 0] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ beta, -40, 40)))
        w = p * (1 - p) + 1e-9
        gradient = z.T @ (y - p) - penalty @ beta
        hessian = (z.T * w) @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.abs(step).max() < 1e-8:
            break
    weights = beta[1:] / std
    intercept = beta[0] - float((beta[1:] * mean / std).sum())
    return float(intercept), weights


def _between(cut: float, scores: Iterable[float]) -> float:
    """Halfway down to the next lower score: a cut on an observed score sits on the boundary it draws."""
    below = [x for x in scores if x < cut]
    return (cut + max(below)) / 2 if below else cut


def _choose_cuts(part: Sequence[Scored], lang: str, intercept: float, weights: dict[str, float], embedder: str) -> Cuts:
    """Known: the lowest cut whose known answers are right >= KNOWN_PRECISION_TARGET and where no cross-role,
    off-topic or preset-of-another-role question is known. Uncertain: the lowest cut that keeps
    >= OFF_TOPIC_UNKNOWN_TARGET of the off-topic questions and every preset-of-another-role question unknown.
    Both on the calibration questions of one language; each cut then goes halfway down to the next lower
    calibration score (no calibration question changes side, and the cut is not on one of them)."""

    def policy(known: float) -> LogisticPolicy:
        model = LanguageModel(intercept, weights, Cuts(known, 0.0), CAPS)
        return LogisticPolicy({lang: model}, RelevancePolicyName.logistic(embedder))

    def passes(cut: float) -> tuple[bool, list[Outcome]]:
        outcomes = [judge(s, policy(cut)) for s in part]
        known = [o for o in outcomes if o.verdict == "known"]
        leaks = any(o.probe.kind in ("cross_role", "off", PRESET_OTHER) for o in known)
        known = [o for o in known if o.probe.kind != PRESET_OTHER]
        right = not known or sum(o.right_card for o in known) / len(known) >= KNOWN_PRECISION_TARGET
        return not leaks and right, outcomes

    facts = [s for s in part if s.probe.kind != PRESET_OTHER]  # the grid comes from the labelled facts
    raw = [judge(s, policy(1.0 + CAP_GAP)) for s in facts]
    grid = sorted({round(o.best_score, 6) for o in raw} | {1.0})
    known_cut, outcomes = 1.0, raw
    for cut in grid:
        ok, outcomes = passes(cut)
        if ok:
            known_cut = cut
            break
    halfway = _between(known_cut, grid)
    ok, halfway_outcomes = passes(halfway)
    if ok and [o.verdict for o in halfway_outcomes] == [o.verdict for o in outcomes]:
        known_cut, outcomes = halfway, halfway_outcomes
    off = sorted(o.best_score for o in outcomes if o.probe.kind == "off")
    # The demo: a scenario's preset question asked of a role without the fact stays unknown.
    floor = max((o.best_score for o in outcomes if o.probe.kind == PRESET_OTHER), default=-1.0)
    scores = sorted({round(o.best_score, 6) for o in outcomes} | {known_cut})
    uncertain_cut = known_cut
    for cut in scores:
        if cut > known_cut:
            break
        if cut > floor and sum(score < cut for score in off) / max(1, len(off)) >= OFF_TOPIC_UNKNOWN_TARGET:
            uncertain_cut = _between(cut, scores)
            break
    return Cuts(known=round(known_cut, 6), uncertain=round(uncertain_cut, 6))


def choose_covered_cut(part: Sequence[Scored], intercept: float, weights: dict[str, float], cuts: Cuts) -> float | None:
    """The lowest cut in [uncertain, known) from which a candidate the coverage rule covers in full is known,
    such that on the fitting questions of one language: known answers are right >= COVERED_PRECISION_TARGET;
    near-topic questions are known <= COVERED_NEAR_KNOWN_TARGET, and no more often than without the covered
    cut; and no cross-role, off-topic or preset-of-another-role question is known. Then halfway down to the
    next lower covered score, as the other cuts. None when no cut passes. The model's probabilities are
    computed once; only the cut moves."""
    model = LanguageModel(intercept, weights, cuts, CAPS)
    scored = [(s.probe, [(round(model.probability(c.signals), 6), c) for c in s.candidates]) for s in part]

    def known_at(covered_cut: float | None) -> tuple[int, int, list[tuple[Probe, bool]]]:
        lifted = replace(cuts, covered=covered_cut)
        known: list[tuple[Probe, bool]] = []
        near = 0
        for probe, candidates in scored:
            verdict, card = _best(candidates, lifted, model)
            near += probe.kind == "near"
            if verdict == Certainty.KNOWN:
                known.append((probe, card == probe.expected))
        return sum(p.kind == "near" for p, _ in known), near, known

    base_near, _, _ = known_at(None)

    def passes(covered_cut: float) -> bool:
        near_known_, near, known = known_at(covered_cut)
        if any(p.kind in ("cross_role", "off", PRESET_OTHER) for p, _ in known):
            return False
        right = sum(r for _, r in known) / len(known) if known else 1.0
        within = near_known_ <= COVERED_NEAR_KNOWN_TARGET * max(1, near) and near_known_ <= base_near
        return right >= COVERED_PRECISION_TARGET and within

    full = [
        p
        for _, candidates in scored
        for p, c in candidates
        if all(c.signals.get(name, 1.0) == 0.0 for name in RULE_SIGNALS) and not model.capped(c.signals)
    ]
    grid = sorted({p for p in full if cuts.uncertain <= p < cuts.known})
    for cut in grid:
        if passes(cut):
            halfway = max(cuts.uncertain, _between(cut, [*grid, cuts.uncertain]))
            return round(halfway, 6) if passes(halfway) else cut
    return None


def _best(candidates: Sequence[tuple[float, Candidate]], cuts: Cuts, model: LanguageModel) -> tuple[str, str | None]:
    """As `judge`: the best-judged candidate's verdict and card, ties broken by cosine, then card id."""
    best: tuple[tuple[float, float, str], str] | None = None
    for p, c in candidates:
        judged = covered(p, cuts, c.signals, liftable=not model.capped(c.signals))
        key = (-judged.score, -c.score, c.card.id)
        if best is None or key < best[0]:
            best = (key, judged.verdict)
    if best is None:
        return Certainty.UNKNOWN, None
    return best[1], best[0][2]


def as_development(scored: Sequence[Scored]) -> list[Scored]:
    """A development set's questions as fitting data (split `development`)."""
    return [Scored(replace(s.probe, split=DEVELOPMENT), s.candidates) for s in scored]


def fit(
    scored: Sequence[Scored], embedder: str, weights_from_development: Sequence[str] = WEIGHTS_FROM_DEVELOPMENT
) -> dict[str, Any]:
    """The data file's entry for `embedder`: per language, coefficients and cut points, fitted on the
    calibration half and, for the languages in `weights_from_development`, the development sets (questions with split
    `development`, see `as_development`); the covered cut on both."""
    languages: dict[str, Any] = {}
    for lang in LANGUAGES:
        everything = [s for s in scored if s.probe.split in ("calibration", DEVELOPMENT) and s.probe.language == lang]
        own = [s for s in everything if s.probe.split == "calibration"]
        part = everything if lang in weights_from_development else own
        fitted = [s for s in part if s.probe.kind != PRESET_OTHER]
        rows = [(c, float(c.card.id == s.probe.expected)) for s in fitted for c in s.candidates]
        used = [name for name in SIGNALS if name not in UNUSED.get(lang, ())]
        intercept, weights = fit_logistic(_matrix((c for c, _ in rows), used), np.asarray([y for _, y in rows]))
        named = {name: 0.0 for name in SIGNALS} | {n: round(float(w), 6) for n, w in zip(used, weights, strict=True)}
        # The cut points are the model's own, chosen without the coverage rule: the rule only ever holds a
        # candidate back, on top (a cut chosen with it sinks to wherever the rule alone keeps precision).
        cuts = _choose_cuts(without_rule(part), lang, intercept, named, embedder)
        covered_cut = choose_covered_cut(everything, intercept, named, cuts)
        languages[lang] = {
            "intercept": round(intercept, 6),
            "weights": named,
            "known_cut": cuts.known,
            "caps": list(CAPS),
            "uncertain_cut": cuts.uncertain,
            "covered_cut": covered_cut,
            "fitted_on": {"questions": len(fitted), "candidates": len(rows), "covered_cut_questions": len(everything)},
        }
    return {"signals": list(SIGNALS), "languages": languages}


def write_model(entries: dict[str, Any], path: Path = MODEL_PATH) -> None:
    existing = json.loads(path.read_text("utf-8")) if path.exists() else {}
    models = {**existing.get("models", {}), **entries}
    document = {
        "about": "Relevance model (docs/retrieval.md). Written by `bureau eval-retrieval --fit` from the "
        "calibration half of tests/data/honest_retrieval_set.yaml (weights, known and uncertain cuts) and that half "
        "plus blind sets 1 and 2 (the covered cut); p = 1 / (1 + exp(-(intercept + sum(w * signal)))), known when "
        "p >= known_cut, uncertain when p >= uncertain_cut, else unknown.",
        "version": 1,
        "models": dict(sorted(models.items())),
    }
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", "utf-8")


def half_split_figures(scored: Sequence[Scored], embedder: str, n: int, seed: int = 7) -> dict[str, dict[str, float]]:
    """Held-out figures from the calibration half alone: `n` times, fit on a random half of its facts (a
    fact and its translation together) and measure on the other half; the means per language. This is how
    signals are chosen without looking at the test half."""
    import random

    calibration = [s for s in scored if s.probe.split == "calibration"]
    names = sorted({_pair(s.probe) for s in calibration if s.probe.kind != PRESET_OTHER})
    rng = random.Random(seed)
    runs: dict[str, list[dict[str, float]]] = {lang: [] for lang in LANGUAGES}
    for _ in range(n):
        held = set(rng.sample(names, len(names) // 2))
        fold = [
            Scored(replace(s.probe, split="test" if _pair(s.probe) in held else "calibration"), s.candidates)
            for s in calibration
        ]
        policy = policy_from_data({"models": {embedder: fit(fold, embedder)}}, embedder)
        assert policy is not None
        outcomes = [judge(s, policy) for s in fold if s.probe.split == "test"]
        for lang in LANGUAGES:
            runs[lang].append(metrics([o for o in outcomes if o.probe.language == lang]))
    return {lang: {k: float(np.nanmean([m[k] for m in ms])) for k in ms[0]} for lang, ms in runs.items() if ms}


def _pair(probe: Probe) -> str:
    """A fact's name without its language (en.porter and zh.porter are one pair); presets stay apart."""
    return probe.fact_id if probe.kind == PRESET_OTHER else probe.fact_id.split(".", 1)[-1]


def cross_set_figures(
    calibration: Sequence[Scored],
    development: Mapping[str, Sequence[Scored]],
    embedder: str,
    weights_from_development: Sequence[str] = WEIGHTS_FROM_DEVELOPMENT,
) -> dict[str, dict[str, dict[str, float]]]:
    """How the fit generalises across sets: for each of the calibration half and the development sets, fit on
    the others and measure on it (figures per language). The calibration half's preset questions stay in
    every fit (they are the demo's constraint, never measured here)."""
    folds: dict[str, list[Scored]] = {
        "calibration": [s for s in calibration if s.probe.split == "calibration" and s.probe.kind != PRESET_OTHER],
        **{name: as_development(part) for name, part in development.items()},
    }
    presets = [s for s in calibration if s.probe.kind == PRESET_OTHER]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for held, questions in folds.items():
        others = [s for name, part in folds.items() if name != held for s in part]
        if held == "calibration":  # the fit needs a calibration half: one development set takes its place
            others = [Scored(replace(s.probe, split="calibration"), s.candidates) for s in others]
        entry = fit([*others, *presets], embedder, weights_from_development)
        policy = policy_from_data({"models": {embedder: entry}}, embedder)
        assert policy is not None
        outcomes = [judge(s, policy) for s in questions]
        out[held] = {lang: metrics([o for o in outcomes if o.probe.language == lang]) for lang in LANGUAGES}
    return out
