"""The labelled screening set (tests/data/screening_set.yaml): every positive raises its own reason, and no
look-alike negative is rejected. `make eval-screening` prints the precision, recall and cost per text."""

from __future__ import annotations

import pytest
import yaml

from bureau.scope.content_policy import REASONS, ContentPolicy, screen_text
from live_server import REPO

SET = yaml.safe_load((REPO / "tests" / "data" / "screening_set.yaml").read_text(encoding="utf-8"))


def test_the_set_is_large_enough_and_bilingual():
    lines = SET["positives"] + SET["negatives"]
    assert len(lines) >= 60
    assert {item["lang"] for item in SET["positives"]} == {"en", "zh"}
    assert {item["lang"] for item in SET["negatives"]} == {"en", "zh"}
    assert {item["flag"] for item in SET["positives"]} <= set(REASONS)


@pytest.mark.parametrize("item", SET["positives"], ids=lambda item: item["flag"])
def test_positive_raises_its_reason(item):
    assert item["flag"] in screen_text(item["text"])


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
