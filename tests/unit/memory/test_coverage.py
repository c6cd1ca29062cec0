"""The coverage rule (memory/coverage.py, docs/retrieval.md): `known` only when the card covers the question.

Pure tests on the rule's parts with examples written here (none from either labelled set): no encoder, so
the soft match is given explicitly where a test needs one."""

from __future__ import annotations

import pytest

from bureau.memory.relevance import analyse, answer_types, persons
from bureau.memory.relevance.coverage import card_words, cover, hard_match, lemma, lists, question_words
from bureau.scope.relevance import RULE_NAMES, Cuts, covered
from bureau.scope.vocabulary import Certainty, CoverageRule


def check(question: str, card: str, soft: dict[str, float] | None = None):
    words = analyse(question).words
    return cover(
        question_words(words, question),
        answer_types(question),
        words,
        card_words(card),
        card,
        persons(card),
        soft or {},
    )


def test_lemmas_come_from_lemminflect() -> None:
    assert lemma("saw") == "see"
    assert lemma("carrying") == "carry"
    assert lemma("keys") == "key"


def test_a_question_the_card_answers_is_covered() -> None:
    result = check("Who did the gardener see?", "The gardener saw a plumber near the shed.")
    assert result.matched == ("gardener", "see") and not result.attributes_missing  # saw -> see
    assert result.signals() == dict.fromkeys(RULE_NAMES, 0.0)


def test_another_member_of_the_same_kind_is_a_contradiction() -> None:
    result = check("Who is allergic to shellfish?", "Mrs Ortega is allergic to peanuts.")
    assert result.contradicted == ("shellfish",)
    assert "allergic" in result.matched
    assert result.signals()["rule_contradiction"] == 1.0
    assert result.gaps == ("shellfish",)
    # The same kind for doors: the back door is not the front door.
    assert check("Who has a key to the back door?", "The cleaner has a key to the front door.").contradicted == (
        "back",
    )
    assert not check("Who has a key to the back door?", "The cleaner has a key to the back door.").contradicted


def test_an_attribute_the_card_does_not_give_holds_it_back() -> None:
    result = check("Who repaired the boiler?", "The boiler was repaired on Tuesday.")
    assert result.attributes_missing == ("person",)
    assert result.gaps == ("kind:person",)
    colour = check("What colour is the scooter?", "A green scooter stood in the yard.")
    assert not colour.attributes_missing and colour.matched == ("scooter",)
    assert check("What colour is the scooter?", "A scooter stood in the yard.").attributes_missing == ("colour",)
    assert check("What is the plumber's name?", "The plumber came at noon.").attributes_missing == ("name",)
    assert not check("What is the plumber's name?", "The plumber is called Mr Adeyemi.").attributes_missing


def test_a_focus_word_the_card_does_not_say_is_uncovered() -> None:
    result = check("What is the scooter's licence plate?", "A green scooter stood in the yard.")
    assert result.matched == ("scooter",)
    assert set(result.gaps) == {"licence", "plate"}
    assert result.signals()["rule_focus_missing"] == 1.0 and result.signals()["rule_no_focus"] == 0.0


def test_common_words_are_not_focus_words_and_only_they_matching_is_no_focus() -> None:
    result = check("What did you see that night?", "That night I stayed at home watching a film.")
    assert "night" not in result.focus
    assert result.signals()["rule_no_focus"] == 1.0


def test_equivalents_and_digits_match() -> None:
    assert hard_match(card_words("The grey lorry left at 7."), "gray")
    assert hard_match(card_words("The grey lorry left at 7."), "truck")
    assert hard_match(card_words("She waited for two hours."), "2")
    assert "one" in lists().equivalents["1"]


def test_a_soft_match_allows_uncertain_only() -> None:
    result = check("Did the janitor notice anything?", "The caretaker heard a bang.", {"janitor": 0.7, "notice": 0.3})
    assert result.soft == ("janitor",) and not result.matched
    assert result.signals()["rule_focus_missing"] == 1.0 and result.signals()["rule_no_focus"] == 0.0
    assert result.gaps == ("notice",)


def test_chinese_words_match_by_text_or_all_their_characters() -> None:
    result = check("谁对贝类过敏？", "阿尔瓦雷斯太太对花生过敏。")
    assert result.contradicted == ("贝类",) and result.matched == ("过敏",)
    covered_ = check("谁对花生过敏？", "阿尔瓦雷斯太太对花生过敏。")
    assert covered_.matched == ("花生", "过敏") and not covered_.attributes_missing
    assert check("园丁是谁？", "园丁叫老周。").matched == ("园丁",)
    assert check("谁把后门锁上了？", "保安把前门锁上了。").contradicted == ("后门",)


CUTS = Cuts(known=0.5, uncertain=0.2)


@pytest.mark.parametrize(
    ("flags", "score", "verdict", "rule"),
    [
        ({}, 0.9, Certainty.KNOWN, None),
        ({"rule_focus_missing": 1.0}, 0.9, Certainty.UNCERTAIN, CoverageRule.FOCUS_NOT_COVERED),
        ({"rule_attribute_missing": 1.0}, 0.9, Certainty.UNCERTAIN, CoverageRule.ATTRIBUTE_NOT_ANSWERED),
        ({"rule_contradiction": 1.0, "rule_focus_missing": 1.0}, 0.9, Certainty.UNCERTAIN, CoverageRule.CONTRADICTION),
        ({"rule_no_focus": 1.0, "rule_focus_missing": 1.0}, 0.9, Certainty.UNKNOWN, CoverageRule.NO_FOCUS_MATCH),
        ({"rule_no_focus": 1.0, "rule_contradiction": 1.0}, 0.3, Certainty.UNKNOWN, CoverageRule.CONTRADICTION),
        ({"rule_focus_missing": 1.0}, 0.3, Certainty.UNCERTAIN, CoverageRule.FOCUS_NOT_COVERED),  # named all the same
        ({"rule_no_focus": 1.0}, 0.1, Certainty.UNKNOWN, None),
    ],
)
def test_the_rule_over_a_score(flags, score, verdict, rule) -> None:
    judgement = covered(score, CUTS, {"cosine": 0.5, **flags})
    assert judgement.verdict == verdict and judgement.rule == rule
    assert judgement.score <= score
    if rule is not None:  # drawn just below the line it did not cross
        assert judgement.score < (CUTS.known if verdict == Certainty.UNCERTAIN else CUTS.uncertain)
