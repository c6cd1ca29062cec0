"""The coverage rule (memory/coverage.py, docs/retrieval.md): `known` only when the card covers the question.

Pure tests on the rule's parts with examples written here (none from either labelled set): no encoder, so
the soft match is given explicitly where a test needs one."""

from __future__ import annotations

import pytest

from bureau.memory.relevance import analyse, answer_types, persons
from bureau.memory.relevance.coverage import cover, question_words
from bureau.memory.relevance.words import card_words, hard_match, lemma, lists
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


# --- round two (docs/retrieval.md, "Round two"): examples written here, none from any set -------------------


def test_clock_times_and_dates_are_read_in_both_languages() -> None:
    from bureau.memory.relevance.times import clock_times, dates, zh_number

    assert zh_number("二十三") == 23 and zh_number("十") == 10 and zh_number("两") == 2 and zh_number("百") is None
    assert clock_times("We met at 9:30 pm, left at 11 o'clock") == {"h9:30", "h11:00"}
    assert clock_times("晚上九点半见，十一点二十分走") == {"h9:30", "h11:20"}
    assert clock_times("21:30") == clock_times("9:30 pm")  # one time on the dial
    assert clock_times("Room 42 at number 10") == frozenset()  # a bare number is no time
    assert dates("On 4th of July and August 9") == {"7/4", "8/9"}
    assert dates("五月六号和12月1日") == {"5/6", "12/1"}


def test_another_clock_time_or_date_is_a_contradiction() -> None:
    card = "The courier rang the bell at 8 pm on March 2."
    assert check("Did the courier ring at 10 pm?", card).contradicted == ("10 pm",)
    assert not check("Did the courier ring at 8 pm?", card).contradicted
    assert check("Did the courier ring on March 5?", card).contradicted == ("march 5",)
    assert check("快递员是下午三点来的吗？", "快递员下午两点来过。").contradicted == ("下午三点",)
    # A card without any clock time is not contradicted by one: it just does not say it.
    assert not check("Did the courier ring at 10 pm?", "The courier rang the bell twice.").contradicted


def test_chinese_relative_periods_are_kinds_and_never_matched_by_their_characters() -> None:
    # 去年 is not said by a card about 年底之前 (its characters are all there) and contradicts 今年.
    assert "去年" in check("去年的会费是多少？", "会费年底之前交，一共两百元。").gaps
    assert check("去年的会费是多少？", "今年的会费是两百元。").contradicted == ("去年",)
    # Another weekday, even when the card has the digit's character elsewhere (周四 against 周五 … 四点).
    assert check("周四谁值班？", "周五值班的是老吴，下午四点交班。").contradicted == ("周四",)
    # 昨晚 and 昨天 are one day.
    assert not check("你昨天在家吗？", "我昨晚一直在家。").contradicted


def test_function_characters_glued_to_a_chinese_word_are_stripped() -> None:
    words = question_words(analyse("马库斯能吃虾吗？").words, "马库斯能吃虾吗？")
    assert all(not w.endswith("能") for w in words.focus)
    assert not question_words(analyse("这首歌由谁来唱？").words, "这首歌由谁来唱？").focus.count("由谁来")


def test_money_and_age_are_attributes_of_their_own() -> None:
    assert "money" in check("How much does the ticket cost?", "The ticket for the ferry is blue.").attributes_missing
    assert not check("How much does the ticket cost?", "The ferry ticket costs 12 euros.").attributes_missing
    assert check("门票多少钱？", "门票是三张。").attributes_missing == ("money",)
    assert not check("门票多少钱？", "门票一张八十元。").attributes_missing
    assert check("园丁几岁？", "园丁有三个孩子。").attributes_missing == ("age",)
    assert not check("园丁几岁？", "园丁今年六十岁。").attributes_missing


def test_one_side_of_a_choice_is_enough_and_the_other_is_no_contradiction() -> None:
    card = "A grey scooter was parked by the north gate."
    result = check("Was the scooter grey or silver?", card)
    assert not result.contradicted and result.signals()["rule_focus_missing"] == 0.0
    assert check("Was the scooter silver?", card).contradicted == ("silver",)
    zh = check("书店在河东还是河西？", "那家书店开在河东的老街上。")
    assert zh.signals()["rule_focus_missing"] == 0.0


def test_a_title_before_a_name_and_the_word_after_how_are_not_focus_words() -> None:
    words = question_words(analyse("Where did Inspector Moreau park?").words, "Where did Inspector Moreau park?")
    assert "inspector" not in words.focus and "moreau" in words.focus
    assert (
        "long"
        not in question_words(analyse("How long was the ferry late?").words, "How long was the ferry late?").focus
    )


COVERED_CUTS = Cuts(known=0.5, uncertain=0.2, covered=0.35)


@pytest.mark.parametrize(
    ("flags", "score", "liftable", "verdict"),
    [
        (dict.fromkeys(RULE_NAMES, 0.0), 0.4, True, Certainty.KNOWN),  # covered in full, above the covered cut
        (dict.fromkeys(RULE_NAMES, 0.0), 0.3, True, Certainty.UNCERTAIN),  # below it
        (dict.fromkeys(RULE_NAMES, 0.0), 0.4, False, Certainty.UNCERTAIN),  # a model cap held it back
        ({**dict.fromkeys(RULE_NAMES, 0.0), "rule_focus_missing": 1.0}, 0.4, True, Certainty.UNCERTAIN),
        ({}, 0.4, True, Certainty.UNCERTAIN),  # signals without the rule's: the score alone
    ],
)
def test_the_covered_cut_lifts_only_a_candidate_the_rule_covers_in_full(flags, score, liftable, verdict) -> None:
    judgement = covered(score, COVERED_CUTS, {"cosine": 0.5, **flags}, liftable=liftable)
    assert judgement.verdict == verdict
    if verdict == Certainty.KNOWN:
        assert judgement.score == COVERED_CUTS.known  # drawn on the known line


def test_a_covered_cut_outside_the_two_cuts_is_refused() -> None:
    from bureau.scope.relevance import RelevanceModelError, policy_from_data

    spec = {"intercept": 0.0, "weights": {}, "known_cut": 0.5, "uncertain_cut": 0.2, "covered_cut": 0.6}
    with pytest.raises(RelevanceModelError, match="covered cut"):
        policy_from_data({"models": {"local": {"languages": {"en": spec}}}}, "local")
    spec["covered_cut"] = None
    assert policy_from_data({"models": {"local": {"languages": {"en": spec}}}}, "local") is not None


def test_ordinals_and_chinese_before_after_are_kinds() -> None:
    """Round three: "the second delivery" is not answered by a card about the fourth one, 之前 not by 以后; the
    same ordinal, or 以前 for 之前 (one meaning), is no contradiction."""
    other = check("Who signed for the second delivery?", "The porter signed for the fourth delivery at noon.")
    assert other.contradicted == ("second",)
    assert other.signals()["rule_contradiction"] == 1.0
    same = check("Who signed for the second delivery?", "The porter signed for the second delivery at noon.")
    assert not same.contradicted and "second" in same.matched
    assert check("开会之前你在哪儿？", "开会以后我一直在车库里修车。").signals()["rule_contradiction"] == 1.0
    assert check("开会之前你在哪儿？", "开会以前我一直在车库里修车。").signals()["rule_contradiction"] == 0.0
