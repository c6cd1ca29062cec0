"""The labelled screening set (tests/data/screening_set.yaml): every positive of the original regression set
raises its own reason, every evasion family (issues 26 and 32) misses at most one of its cases, has at least
ten cases and ten look-alikes, and no look-alike is rejected. `make eval-screening` prints the table per family
and the cost per text."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml

from bureau.scope.content_policy import REASONS, ContentPolicy, screen, screen_text
from live_server import REPO

SET = yaml.safe_load((REPO / "tests" / "data" / "screening_set.yaml").read_text(encoding="utf-8"))
DIRECT = [item for item in SET["positives"] if "family" not in item]
FAMILIES = sorted({item["family"] for item in SET["positives"] if "family" in item})


def test_the_set_is_large_enough_and_bilingual():
    lines = SET["positives"] + SET["negatives"]
    assert len(lines) >= 60
    assert {item["lang"] for item in SET["positives"]} == {"en", "zh"}
    assert {item["lang"] for item in SET["negatives"]} == {"en", "zh"}
    assert {item["flag"] for item in SET["positives"]} <= set(REASONS)


@pytest.mark.parametrize("item", DIRECT, ids=lambda item: item["flag"])
def test_positive_raises_its_reason(item):
    assert item["flag"] in screen_text(item["text"])


def test_every_family_has_ten_evasions_and_ten_look_alikes():
    evasions = Counter(item["family"] for item in SET["positives"] if "family" in item)
    look_alikes = Counter(item["family"] for item in SET["negatives"] if "family" in item)
    assert len(FAMILIES) == 15
    assert all(evasions[name] >= 10 and look_alikes[name] >= 10 for name in FAMILIES), (evasions, look_alikes)


@pytest.mark.parametrize("name", FAMILIES)
def test_a_family_misses_at_most_one_evasion(name):
    missed = [
        item["text"]
        for item in SET["positives"]
        if item.get("family") == name and item["flag"] not in screen(item["text"])
    ]
    assert len(missed) <= 1, [ascii(text) for text in missed]


@pytest.mark.parametrize("item", SET["negatives"], ids=lambda item: item["text"][:30])
def test_look_alike_negative_is_not_rejected(item):
    assert screen_text(item["text"]) == []


def test_a_configured_pattern_flags_text_the_built_in_screening_allows():
    text = "The courier's codename is Nightjar."
    policy = ContentPolicy.with_patterns([r"\bnightjar\b"])
    assert screen_text(text) == []
    assert policy.screen(text) == ["configured_pattern"]
    assert policy.screen("ＮＩＧＨＴＪＡＲ") == ["configured_pattern"]  # matched after NFKC, any case


def test_iban_needs_its_check_digits():
    assert "bank_account" in screen_text("IBAN GB82WEST12345698765432")
    assert screen_text("ref GB82WEST12345698765433") == []
