"""Pure relevance policy: from a candidate's signals to `known`, `uncertain` or `unknown`.

Two policies share one small interface:

- `LogisticPolicy` — the calibrated model (docs/retrieval.md): per question language, a logistic combination
  of the signals the memory layer measured, and two cut points on its probability. Its coefficients are
  data (`memory/data/relevance_model.json`), fitted on the calibration half of the labelled set.
- `ThresholdPolicy` — the single cosine threshold with a band below it, for an embedder that has no
  calibrated model (or when `BUREAU_RELEVANCE_THRESHOLD` is set explicitly).

No I/O here: the memory layer reads the data file and hands the parsed mapping to `policy_from_data`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from bureau.scope.vocabulary import Certainty, CoverageRule, RelevancePolicyName

Verdict = Certainty
CAP_GAP = 0.001


@dataclass(frozen=True, slots=True)
class Judgement:
    """`score` is what the X-ray draws on its 0–1 axis: the model's probability, or the cosine."""

    score: float
    verdict: Verdict
    rule: CoverageRule | None = None  # the part of the coverage rule that held the candidate back


@dataclass(frozen=True, slots=True)
class Cuts:
    known: float
    uncertain: float
    # A candidate the coverage rule covers in full (every focus word literally, the attribute answered, nothing
    # contradicting) is known from this cut up, below the model's own known cut (round two of issue 23; fitted
    # on the calibration half). None: only the known cut.
    covered: float | None = None


class RelevancePolicy(Protocol):
    @property
    def name(self) -> RelevancePolicyName: ...

    def judge(self, signals: Mapping[str, float], language: str) -> Judgement: ...

    def cuts(self, language: str) -> Cuts: ...


def _verdict(score: float, cuts: Cuts) -> Verdict:
    if score >= cuts.known:
        return Certainty.KNOWN
    if score >= cuts.uncertain:
        return Certainty.UNCERTAIN
    return Certainty.UNKNOWN


def covered(score: float, cuts: Cuts, signals: Mapping[str, float], *, liftable: bool = True) -> Judgement:
    """The coverage rule (memory/coverage.py) over any policy's score: `known` only when the card covers the
    question's focus words and attribute with nothing contradicting it, else `uncertain` at best; `uncertain`
    only with a focus word matched. A held-back score is drawn just below the line it did not cross. `rule`
    names the part of the rule that keeps a known-or-uncertain candidate from being known, whether or not its
    score alone reached the known cut. Signals without the rule's (a hand-built test, an old trace) are judged
    by the score alone. A candidate the rule covers in full with a score at or above `cuts.covered` is known,
    drawn on the known line (`liftable`: False when a model cap, such as `type_miss`, already held it back)."""
    verdict = _verdict(score, cuts)
    if verdict == Certainty.UNKNOWN:
        return Judgement(score, verdict)
    flags = {name: float(signals.get(name, 0.0)) >= 1.0 for name in RULE_NAMES}
    if flags["rule_no_focus"]:
        held = min(score, max(0.0, cuts.uncertain - CAP_GAP))
        rule = CoverageRule.CONTRADICTION if flags["rule_contradiction"] else CoverageRule.NO_FOCUS_MATCH
        return Judgement(round(held, 6), _verdict(held, cuts), rule)
    for name, rule in _KNOWN_RULES:
        if flags[name]:
            held = min(score, max(0.0, cuts.known - CAP_GAP))
            return Judgement(round(held, 6), _verdict(held, cuts), rule)
    lift = cuts.covered if liftable and all(name in signals for name in RULE_NAMES) else None
    if verdict == Certainty.UNCERTAIN and lift is not None and score >= lift:
        return Judgement(cuts.known, Certainty.KNOWN)
    return Judgement(score, verdict)


RULE_NAMES: tuple[str, ...] = ("rule_focus_missing", "rule_attribute_missing", "rule_contradiction", "rule_no_focus")
_KNOWN_RULES: tuple[tuple[str, CoverageRule], ...] = (
    ("rule_contradiction", CoverageRule.CONTRADICTION),
    ("rule_focus_missing", CoverageRule.FOCUS_NOT_COVERED),
    ("rule_attribute_missing", CoverageRule.ATTRIBUTE_NOT_ANSWERED),
)


@dataclass(frozen=True, slots=True)
class ThresholdPolicy:
    threshold: float
    band: float
    name: RelevancePolicyName = RelevancePolicyName.COSINE_THRESHOLD

    def cuts(self, language: str) -> Cuts:
        return Cuts(known=self.threshold, uncertain=round(self.threshold - self.band, 4))

    def judge(self, signals: Mapping[str, float], language: str) -> Judgement:
        return covered(float(signals["cosine"]), self.cuts(language), signals)


@dataclass(frozen=True, slots=True)
class LanguageModel:
    """p = 1 / (1 + exp(-(intercept + sum(weight * signal)))). A signal named in `caps` that is 1 (for example
    `type_miss`: the question asks *why* and the card gives no reason) holds p just below the known cut:
    such a card can be uncertain, never known."""

    intercept: float
    weights: Mapping[str, float]
    cuts: Cuts
    caps: tuple[str, ...] = ()

    def probability(self, signals: Mapping[str, float]) -> float:
        z = self.intercept + sum(w * float(signals.get(name, 0.0)) for name, w in self.weights.items())
        p = 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))
        if self.capped(signals):
            p = min(p, max(0.0, self.cuts.known - CAP_GAP))
        return p

    def capped(self, signals: Mapping[str, float]) -> bool:
        return any(float(signals.get(name, 0.0)) >= 1.0 for name in self.caps)


@dataclass(frozen=True, slots=True)
class LogisticPolicy:
    languages: Mapping[str, LanguageModel]
    name: RelevancePolicyName

    def _model(self, language: str) -> LanguageModel:
        return self.languages.get(language) or self.languages["en"]

    def cuts(self, language: str) -> Cuts:
        return self._model(language).cuts

    def judge(self, signals: Mapping[str, float], language: str) -> Judgement:
        model = self._model(language)
        score = round(model.probability(signals), 6)  # rounded: the same signals give the same verdict
        return covered(score, model.cuts, signals, liftable=not model.capped(signals))


class RelevanceModelError(ValueError):
    """The relevance data file is malformed."""


def policy_from_data(data: Mapping[str, object], embedder: str) -> LogisticPolicy | None:
    """The calibrated model for `embedder`, or None when the file has none for it."""
    models = data.get("models")
    if not isinstance(models, Mapping):
        raise RelevanceModelError("relevance model file has no 'models' mapping")
    entry = models.get(embedder)
    if entry is None:
        return None
    try:
        languages = {
            lang: LanguageModel(
                intercept=float(spec["intercept"]),
                weights={str(k): float(v) for k, v in spec["weights"].items()},
                cuts=Cuts(
                    known=float(spec["known_cut"]),
                    uncertain=float(spec["uncertain_cut"]),
                    covered=float(spec["covered_cut"]) if spec.get("covered_cut") is not None else None,
                ),
                caps=tuple(str(c) for c in spec.get("caps", ())),
            )
            for lang, spec in entry["languages"].items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RelevanceModelError(f"relevance model for {embedder!r} is malformed") from exc
    if "en" not in languages:
        raise RelevanceModelError(f"relevance model for {embedder!r} has no English entry")
    try:
        name = RelevancePolicyName.logistic(embedder)
    except ValueError:
        raise RelevanceModelError(f"no relevance policy is named for the embedder {embedder!r}") from None
    for model in languages.values():
        if not 0.0 <= model.cuts.uncertain <= model.cuts.known <= 1.0:
            raise RelevanceModelError("cut points must satisfy 0 <= uncertain <= known <= 1")
        lifted = model.cuts.covered
        if lifted is not None and not model.cuts.uncertain <= lifted <= model.cuts.known:
            raise RelevanceModelError("the covered cut must lie between the uncertain and the known cut")
    return LogisticPolicy(languages=languages, name=name)
