"""Grounding: every number, code and name an answer states must be in the evidence it cites."""

from __future__ import annotations

import pytest

from bureau.answering.grounding import extract_claims, normalise, ungrounded_claims

EVIDENCE = [
    "The safe combination is 0427.",
    "Marco meets the fence at the Blue Lotus at 7pm on Friday.",
    "The getaway van has plate KX-4471.",
    "保险箱密码是 0427，放在 302 房间，联系人是“老周”。",
]


@pytest.mark.parametrize(
    "answer",
    [
        "The combination is 0427.",
        "The combination is ０４２７.",  # full-width digits
        "Psst... Marco, the Blue Lotus, 7pm. Friday.",
        "I heard Marco meets someone at 7 pm.",  # digits still match
        "Check the van: plate KX-4471.",
        "Check the van, plate kx 4471.",  # codes ignore case and separators
        "密码是０４２７，在302房间。",
        "去找“老周”。",
        "Yes, Detective. I'm sure.",  # game words and pronouns are not claims
        "Four two seven? No, 0427.",  # numbers in words are not checked
        "That's all I know.",
    ],
)
def test_grounded_answers_pass(answer):
    assert ungrounded_claims(answer, EVIDENCE) == []


@pytest.mark.parametrize(
    ("answer", "missing"),
    [
        ("The combination is 0428.", ["0428"]),
        ("The combination is 427.", ["427"]),  # a digit run must match whole, not as a substring
        ("It's 0427, room 12.", ["12"]),
        ("Marco meets Anna at 7pm.", ["Anna"]),
        ("He drives to the FBI office.", ["FBI"]),
        ("The plate is KX-4472.", ["4472", "KX-4472"]),
        ("The code is B12.", ["12", "B12"]),
        ("密码是０４２８。", ["0428"]),
        ("联系人是“老王”。", ["老王"]),
        ("It cost 1,000 dollars.", ["1000"]),
    ],
)
def test_invented_claims_are_reported(answer, missing):
    assert ungrounded_claims(answer, EVIDENCE) == sorted(missing)


def test_only_cited_sources_count():
    assert ungrounded_claims("Plate KX-4471 at 7pm.", [EVIDENCE[2]]) == ["7", "7pm"]


def test_sentence_initial_words_are_not_names():
    claims = extract_claims("Yesterday it rained. Nobody came! Then Marco left.")
    assert claims.names == frozenset({"Marco"})


def test_claims_extraction_shapes():
    claims = extract_claims("At 7pm, agent Smith opened locker A-12 with code ４４７１ and said “蓝莲花”.")
    assert claims.numbers == frozenset({"7", "12", "4471"})
    assert claims.codes == frozenset({"7pm", "A-12"})
    assert claims.names == frozenset({"Smith"})
    assert claims.quoted == frozenset({"蓝莲花"})
    assert not extract_claims("nothing specific here.")


def test_normalise():
    assert normalise("０４２７ １,２３４") == "0427 1234"
