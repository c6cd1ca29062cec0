"""`bureau eval-retrieval`: measure honest retrieval on the labelled set, and (with `--fit`) calibrate it.

The set (`tests/data/honest_retrieval_set.yaml`) is a list of games: a scenario's opening cards plus facts
whispered to one role each. Every question is asked as the game asks it: of one role, against that role's
cards only (the board is empty), scored by the production `RelevanceScorer` and judged by the production
policy. Cosines are computed from the embedder's vectors exactly as the store reports them.

`--fit` fits the logistic model per question language on the **calibration** facts (numpy IRLS with a small
L2 penalty), picks the two cut points there, and writes `memory/data/relevance_model.json`. Every figure
printed is on the **test** facts unless `--split` says otherwise. docs/retrieval.md explains the method.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from bureau.game.scenario_schema import load_builtin_scenarios
from bureau.memory.relevance import RULE_SIGNALS, SIGNALS, RelevanceScorer, load_policy, question_language
from bureau.memory.types import Candidate, StoredCard
from bureau.scope.keys import ROLES
from bureau.scope.relevance import (
    CAP_GAP,
    Cuts,
    LanguageModel,
    LogisticPolicy,
    RelevancePolicy,
    ThresholdPolicy,
    Verdict,
    policy_from_data,
)
from bureau.scope.vocabulary import Certainty, MemoryType, RelevancePolicyName

REPO = Path(__file__).resolve().parents[2]
SET_PATH = REPO / "tests" / "data" / "honest_retrieval_set.yaml"
# Written blind (issue 23), committed before the scorer saw it; never fitted on: reported in its own column.
BLIND_SET_PATH = REPO / "tests" / "data" / "blind_retrieval_set.yaml"
BLIND_CHART_PATH = REPO / "docs" / "img" / "blind-retrieval-pr.svg"
NEAR_KINDS: tuple[str, ...] = ("attribute", "instance", "time", "person")
MODEL_PATH = Path(__file__).resolve().parent / "memory" / "data" / "relevance_model.json"
CHART_PATH = REPO / "docs" / "img" / "honest-retrieval-pr.svg"

ANSWERABLE_KINDS: tuple[str, ...] = ("direct", "followup", "paraphrase", "cross_language")
UNANSWERABLE_KINDS: tuple[str, ...] = ("near", "off", "cross_role")
KINDS: tuple[str, ...] = ANSWERABLE_KINDS + UNANSWERABLE_KINDS
PRESET_OTHER = "preset_other"  # a scenario's preset question asked of a role without the fact
PRESET_HOLDER = "preset_holder"  # the same question asked of a role that holds it (split `preset`: reported only)
LANGUAGES: tuple[str, ...] = ("en", "zh")
# Calibration targets for the cut points (on the calibration half; the test half is reported, not tuned).
KNOWN_PRECISION_TARGET = 0.975
OFF_TOPIC_UNKNOWN_TARGET = 0.95
L2_PENALTY = 0.05
# Signals a language's model leaves out (weight 0), decided on the calibration half alone (repeated half-splits
# of its facts): the content words' cosine lifted Chinese paraphrase and cross-language recall, but in
# English it cost direct and follow-up recall and precision for paraphrases within noise.
UNUSED: dict[str, tuple[str, ...]] = {"en": ("content_cosine",)}
CAPS: tuple[str, ...] = ("type_miss",)  # a card that cannot give the kind of answer asked is never known
TODAY_THRESHOLD = 0.40  # the single cosine threshold this model replaces, for the comparison column


# -------------------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Probe:
    text: str
    kind: str
    fact_id: str
    case_id: str
    role: str  # asked of
    expected: str | None  # card id, None when unanswerable
    split: str
    near_kind: str = ""  # blind set: which kind of near-topic question (attribute, instance, time, person)

    @property
    def language(self) -> str:
        return question_language(self.text)

    @property
    def answerable(self) -> bool:
        return self.expected is not None


@dataclass
class EvalSet:
    pools: dict[tuple[str, str], list[StoredCard]] = field(default_factory=dict)  # (case, role) -> cards
    probes: list[Probe] = field(default_factory=list)
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)


def _card(
    case_id: str, role: str, card_id: str, content: str, memory_type: str = MemoryType.LONG_TERM_KNOWLEDGE
) -> StoredCard:
    """A card as the game stores it: whispered facts are long-term knowledge (the whisper default), scenario
    cards keep their declared type, so the evidence rule (and with it BM25's statistics) is the game's."""
    return StoredCard(
        id=card_id,
        case_id=case_id,
        space=role,
        content=content,
        topic="eval",
        kind="note",
        visibility="private",
        memory_type=memory_type,
        trust="medium",
        created_by="operator",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def _next_role(role: str) -> str:
    return ROLES[(ROLES.index(role) + 1) % len(ROLES)]


def load_set(path: Path = SET_PATH, *, presets: bool = True) -> EvalSet:
    raw = yaml.safe_load(path.read_text("utf-8"))
    scenarios = load_builtin_scenarios()
    out = EvalSet()
    for case in raw["cases"]:
        case_id, lang = case["id"], case["lang"]
        opening = scenarios[(case["scenario"], lang)].cards.by_role()
        for role in ROLES:
            out.pools[(case_id, role)] = [
                _card(case_id, role, f"{case_id}.{role}.scenario.{c.topic}", c.content, c.memory_type)
                for c in opening[role]
            ]
        for fact in case["facts"]:
            fid, role, split = fact["id"], fact["role"], fact["split"]
            if fid in out.facts:
                raise ValueError(f"duplicate fact id {fid}")
            out.facts[fid] = {**fact, "case_id": case_id, "lang": lang}
            out.pools[(case_id, role)].append(_card(case_id, role, fid, fact["card"]))
            followups = fact["followup"] if isinstance(fact["followup"], list) else [fact["followup"]]
            asked = [("direct", fact["direct"]), *(("followup", q) for q in followups)]
            asked += [("paraphrase", fact["paraphrase"]), ("cross_language", fact["cross_language"])]
            for kind, text in asked:
                out.probes.append(Probe(text, kind, fid, case_id, role, fid, split))
            for text, near_kind in _near_topics(fact["near_topic"]):
                out.probes.append(Probe(text, "near", fid, case_id, role, None, split, near_kind))
            out.probes.append(Probe(fact["off_topic"], "off", fid, case_id, role, None, split))
            out.probes.append(Probe(fact["direct"], "cross_role", fid, case_id, _next_role(role), None, split))
    if presets:
        _add_preset_probes(out, scenarios)
    return out


def _near_topics(raw: Any) -> list[tuple[str, str]]:
    """One near-topic question (the labelled set) or a list of `{kind, question}` (the blind set)."""
    if isinstance(raw, str):
        return [(raw, "")]
    out = []
    for item in raw:
        if item["kind"] not in NEAR_KINDS:
            raise ValueError(f"unknown near-topic kind {item['kind']!r}")
        out.append((str(item["question"]), str(item["kind"])))
    return out


def load_blind(path: Path = BLIND_SET_PATH) -> EvalSet:
    """The blind set: the same format, every fact `split: blind`, near-topic questions listed by kind. No
    preset questions (they belong to the labelled set's calibration)."""
    data = load_set(path, presets=False)
    wrong = sorted({p.split for p in data.probes} - {"blind"})
    if wrong:
        raise ValueError(f"blind set facts must have split: blind, found {wrong}")
    return data


def _add_preset_probes(out: EvalSet, scenarios: dict[tuple[str, str], Any]) -> None:
    """The scenarios' own preset questions asked of every role that does *not* hold the key fact, in a fresh
    case: the demo's "the detective doesn't know". Never fitted on; the uncertain cut must keep them all
    unknown (kind `preset_other`, split `calibration`). Asked of the roles that do hold it (kind
    `preset_holder`, split `preset`), they are only reported: the demo's "the informant knows"."""
    for (scenario_id, lang), scenario in sorted(scenarios.items()):
        if scenario.claims:
            # A findings scenario gives one observation to several roles on purpose (docs/findings.md): asked of
            # another role, its preset question is answerable, so it labels no "other" and no single "holder".
            continue
        case_id = f"preset-{scenario_id}-{lang}"
        opening = scenario.cards.by_role()
        for role in ROLES:
            out.pools[(case_id, role)] = [
                _card(case_id, role, f"{case_id}.{role}.{c.topic}", c.content, c.memory_type) for c in opening[role]
            ]
        for fact in scenario.key_facts:
            for role in ROLES:
                if not fact.question:
                    continue
                fid = f"{case_id}.{fact.id}"
                held = [f"{case_id}.{role}.{c.topic}" for c in opening[role] if c.topic == fact.topic]
                if held:
                    out.probes.append(Probe(fact.question, PRESET_HOLDER, fid, case_id, role, held[0], "preset"))
                else:
                    out.probes.append(Probe(fact.question, PRESET_OTHER, fid, case_id, role, None, "calibration"))


# ----------------------------------------------------------------------------------------------- scoring
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


# --------------------------------------------------------------------------------------------------- fit
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


def fit(scored: Sequence[Scored], embedder: str) -> dict[str, Any]:
    """The data file's entry for `embedder`: per language, coefficients and cut points (calibration half)."""
    languages: dict[str, Any] = {}
    for lang in LANGUAGES:
        part = [s for s in scored if s.probe.split == "calibration" and s.probe.language == lang]
        fitted = [s for s in part if s.probe.kind != PRESET_OTHER]
        rows = [(c, float(c.card.id == s.probe.expected)) for s in fitted for c in s.candidates]
        used = [name for name in SIGNALS if name not in UNUSED.get(lang, ())]
        intercept, weights = fit_logistic(_matrix((c for c, _ in rows), used), np.asarray([y for _, y in rows]))
        named = {name: 0.0 for name in SIGNALS} | {n: round(float(w), 6) for n, w in zip(used, weights, strict=True)}
        # The cut points are the model's own, chosen without the coverage rule: the rule only ever holds a
        # candidate back, on top (a cut chosen with it sinks to wherever the rule alone keeps precision).
        cuts = _choose_cuts(without_rule(part), lang, intercept, named, embedder)
        languages[lang] = {
            "intercept": round(intercept, 6),
            "weights": named,
            "known_cut": cuts.known,
            "caps": list(CAPS),
            "uncertain_cut": cuts.uncertain,
            "fitted_on": {"questions": len(fitted), "candidates": len(rows)},
        }
    return {"signals": list(SIGNALS), "languages": languages}


def write_model(entries: dict[str, Any], path: Path = MODEL_PATH) -> None:
    existing = json.loads(path.read_text("utf-8")) if path.exists() else {}
    models = {**existing.get("models", {}), **entries}
    document = {
        "about": "Relevance model (docs/retrieval.md). Written by `bureau eval-retrieval --fit` from the "
        "calibration half of tests/data/honest_retrieval_set.yaml; p = 1 / (1 + exp(-(intercept + sum(w * "
        "signal)))), known when p >= known_cut, uncertain when p >= uncertain_cut, else unknown.",
        "version": 1,
        "models": dict(sorted(models.items())),
    }
    path.write_text(json.dumps(document, ensure_ascii=False, indent=2) + "\n", "utf-8")


# --------------------------------------------------------------------------------------------- metrics
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


def pr_curve(outcomes: Sequence[Outcome]) -> list[tuple[float, float, float]]:
    """(cut, recall, precision) for every cut on the best score: recall over the answerable questions."""
    answerable = sum(o.probe.answerable for o in outcomes) or 1
    points = []
    for cut in sorted({o.best_score for o in outcomes}, reverse=True):
        known = [o for o in outcomes if o.best_score >= cut]
        right = sum(o.right_card for o in known)
        points.append((cut, right / answerable, right / len(known)))
    return points


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


# ----------------------------------------------------------------------------------------------- report
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


def render_chart(report: Report, cuts: dict[str, Cuts]) -> str:
    """Precision–recall on the chosen half: the calibrated model per language, and today's cosine."""
    width, height, left, top, plot_w, plot_h = 640, 420, 60, 30, 540, 320
    colours = {"en": "#1f77b4", "zh": "#d62728", "today": "#7f7f7f"}

    def xy(recall: float, precision: float) -> str:
        return f"{left + recall * plot_w:.1f},{top + (1 - precision) * plot_h:.1f}"

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="18" font-size="14">Precision–recall of "known" ('
        f"{'blind set' if report.split == 'blind' else report.split + ' half'}, {report.embedder})</text>",
    ]
    for i in range(6):
        v = i / 5
        y, x = top + (1 - v) * plot_h, left + v * plot_w
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{v:.1f}</text>')
        parts.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle">{v:.1f}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#333"/>')
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 40}" text-anchor="middle">recall (answerable questions)</text>'
    )
    parts.append(
        f'<text transform="translate(16,{top + plot_h / 2}) rotate(-90)" text-anchor="middle">precision of known</text>'
    )
    series = {lang: [o for o in report.outcomes if o.probe.language == lang] for lang in LANGUAGES}
    series["today"] = report.today_outcomes
    for name, outcomes in series.items():
        points = pr_curve(outcomes)
        path = " ".join(xy(r, p) for _, r, p in points)
        parts.append(f'<polyline points="{path}" fill="none" stroke="{colours[name]}" stroke-width="2"/>')
        if name in cuts:
            at = [(r, p) for c, r, p in points if c >= cuts[name].known]
            if at:
                r, p = at[-1]
                parts.append(
                    f'<circle cx="{xy(r, p).split(",")[0]}" cy="{xy(r, p).split(",")[1]}" r="5" '
                    f'fill="{colours[name]}"/>'
                )
    legend = [
        ("en", "EN, logistic model (dot: known cut)"),
        ("zh", "ZH, logistic model (dot: known cut)"),
        ("today", "today: one cosine threshold, EN + ZH"),
    ]
    for i, (name, label) in enumerate(legend):
        y = height - 22 + 0 * i
        x = left + i * 200
        parts.append(f'<line x1="{x}" x2="{x + 18}" y1="{y}" y2="{y}" stroke="{colours[name]}" stroke-width="3"/>')
        parts.append(f'<text x="{x + 24}" y="{y + 4}" font-size="11">{label}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# -------------------------------------------------------------------------------------------------- run
def build_scorer(embedder_name: str) -> tuple[RelevanceScorer, Any]:
    from bureau.memory.embedders import HashingEmbeddings, LocalUSEEmbeddings

    embedder = LocalUSEEmbeddings() if embedder_name == "local" else HashingEmbeddings()
    return RelevanceScorer(embedder), embedder


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
) -> Report:
    """Score the set, optionally refit the model file, print the table and write the chart; then the blind
    set (when there is one) in its own columns, before and after the coverage rule, with its own chart."""
    data = load_set(set_path)
    scorer, embed = build_scorer(embedder)
    out(f"Scoring {len(data.probes)} questions about {len(data.facts)} facts with the {embedder} embedder …")
    scored = score_set(data, scorer, embed)
    if refit:
        write_model({embedder: fit(scored, embedder)})
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
    before = evaluate(without_rule(scored), policy, split, embedder)
    columns = _columns(split, before, report)
    if blind_path is not None:
        if blind_path.exists():
            blind = load_blind(blind_path)
            out(f"Blind set: {len(blind.probes)} questions about {len(blind.facts)} facts (never fitted on)")
            blind_scored = score_set(blind, scorer, embed)
            blind_report = evaluate(blind_scored, policy, "blind", embedder)
            columns += _columns("blind", evaluate(without_rule(blind_scored), policy, "blind", embedder), blind_report)
            if blind_chart is not None:
                blind_chart.parent.mkdir(parents=True, exist_ok=True)
                blind_chart.write_text(render_chart(blind_report, cuts_by_lang), "utf-8")
                out(f"Wrote the blind set's precision–recall chart to {blind_chart}")
        else:
            out(f"No blind set at {blind_path}: its columns are left out")
    out("Before (no coverage rule) and now, side by side:")
    out(render_comparison(columns))
    return report


def _columns(name: str, before: Report, now: Report) -> list[tuple[str, dict[str, float]]]:
    return [
        (f"{name} {lang.upper()} {label}", report.by_language[lang])
        for lang in LANGUAGES
        for label, report in (("before", before), ("now", now))
    ]
