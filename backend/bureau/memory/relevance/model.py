"""The fitted relevance model (`memory/data/relevance_model.json`, written by `bureau eval-retrieval --fit`)
and the policy that judges the signals: that model, or the single cosine threshold where there is none."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from bureau.config import DEFAULT_THRESHOLDS, Settings
from bureau.scope.relevance import LogisticPolicy, RelevancePolicy, ThresholdPolicy, policy_from_data


@cache
def load_policy(embedder: str) -> LogisticPolicy | None:
    """The calibrated logistic policy for this embedder, or None when none was fitted for it."""
    source = resources.files("bureau.memory").joinpath("data/relevance_model.json")
    if not source.is_file():
        return None
    return policy_from_data(json.loads(source.read_text("utf-8")), embedder)


def policy_for(settings: Settings, embedder: str) -> RelevancePolicy:
    """The calibrated model for this embedder. The single cosine threshold (with its band) when the embedder
    has no calibrated model, or when `BUREAU_RELEVANCE_THRESHOLD` is set explicitly."""
    if settings.relevance_threshold is None:
        model = load_policy(embedder)
        if model is not None:
            return model
    threshold = settings.relevance_threshold
    if threshold is None:
        threshold = DEFAULT_THRESHOLDS.get(embedder, DEFAULT_THRESHOLDS["local"])
    return ThresholdPolicy(threshold=threshold, band=settings.borderline_band)
