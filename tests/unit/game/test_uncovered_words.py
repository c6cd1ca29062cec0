"""The coverage rule in the interrogation's records: the rule's code in the X-ray, the question's uncovered
words only in the sealed body, and the evidence answer that names them (issue 23)."""

from __future__ import annotations

from dataclasses import replace

from bureau.answering.base import AnswerRequest
from bureau.answering.evidence import evidence_answer
from bureau.game.interrogation import build_trace, classify, held_back_gaps, interrogation_entry
from bureau.scope.relevance import ThresholdPolicy
from bureau.scope.vocabulary import Certainty
from factories import candidate, card

FLAGS = {"rule_focus_missing": 1.0, "rule_contradiction": 1.0, "rule_attribute_missing": 0.0, "rule_no_focus": 0.0}


def _classified(language: str = "en"):
    close = replace(
        candidate(card("c1", "Mrs Alvarez is allergic to peanuts.", space="detective"), 0.7),
        signals={"cosine": 0.7, **FLAGS},
        gaps=("shellfish", "kind:person"),
    )
    plain = replace(
        candidate(card("c2", "The gallery opens at nine.", space="detective"), 0.1), signals={"cosine": 0.1}
    )
    return classify([close, plain], "detective", ThresholdPolicy(threshold=0.4, band=0.1), language)


def test_the_rule_holds_a_close_card_back_and_the_xray_names_it() -> None:
    classified = _classified()
    assert classified.hits == [] and [c.card.id for c in classified.borderline] == ["c1"]
    request = AnswerRequest(
        "case", "detective", "Who is allergic to shellfish?", "en", (), tuple(classified.borderline)
    )
    answer = evidence_answer(request)
    assert answer.certainty == Certainty.UNCERTAIN and answer.evidence == ("c1",)
    assert answer.text == (
        "What I know, in my own memory: “Mrs Alvarez is allergic to peanuts.” — but nothing about shellfish, who."
    )
    trace = build_trace(["detective", "bulletin_board"], classified, answer, 1.0)
    [close] = [m for m in trace["misses"] if m["card_id"] == "c1"]
    assert close["rule"] == "contradiction" and close["score"] < trace["threshold"]
    assert "rule" not in next(m for m in trace["misses"] if m["card_id"] == "c2")
    assert "shellfish" not in str(trace)
    entry = interrogation_entry("detective", request.question, answer.text, trace, held_back_gaps(classified))
    assert entry.body["uncovered"] == {"c1": ["shellfish", "kind:person"]}
    assert "shellfish" not in str(entry.summary)


def test_the_chinese_answer_names_the_gaps_in_chinese() -> None:
    classified = _classified("zh")
    request = AnswerRequest("case", "detective", "谁对贝类过敏？", "zh", (), tuple(classified.borderline))
    text = evidence_answer(request).text
    assert text.endswith("——但没有关于shellfish、是谁的任何信息。"), text
