"""Does the sentence say what the server decided (answering/statement.py)? Pure, no model."""

from __future__ import annotations

import pytest

from bureau.answering.statement import fact_keys, invents_nothing, rambles, states_certainty, states_fact
from bureau.scope.vocabulary import Certainty

SAFE = "The safe combination is 0427."
PAINTING = "The safe is hidden behind the oil painting in the study."
DEBT = "I borrowed money from the gallery owner last month and haven't paid it back."


def test_the_key_of_a_fact_is_its_number_or_name_unless_the_question_already_says_it():
    assert fact_keys(SAFE, "What is the safe combination?") == {"0427"}
    assert fact_keys("The mole is Agent Lin from the records office.", "Who is the mole?") == {"Agent", "Lin"}
    assert fact_keys("Lin has the files.", "What does Lin have?") == {"files"}  # content words instead
    assert "painting" in fact_keys(PAINTING, "Where is the safe hidden?")
    assert "safe" not in fact_keys(PAINTING, "Where is the safe hidden?")


@pytest.mark.parametrize(
    ("answer", "stated"),
    [
        ("Psst. It's 0427.", True),
        ("Behind the paintings, chief.", True),  # any inflection of a content word
        ("No idea, chief.", False),  # a spoken "no idea" on a known answer
        ("It is not 0427.", False),  # the fact negated
        ("The safe is hidden.", False),  # only the question's words
        ("It's 04270.", False),  # a longer number is not the number
    ],
)
def test_a_known_answer_states_the_fact_without_negating_it(answer, stated):
    question = "Where is the safe hidden?" if "paint" in answer or "hidden" in answer else "What is the code?"
    fact = PAINTING if question.startswith("Where") else SAFE
    assert states_fact(answer, fact, question) is stated


def test_a_negation_the_fact_itself_contains_is_allowed():
    assert states_fact("I haven't paid the gallery owner back.", DEBT, "Do you owe anyone money?")


def test_chinese_facts_are_stated_by_their_number_or_their_words():
    assert states_fact("密码是０４２７。", "保险箱密码是 0427。", "密码是多少？")
    assert states_fact("在书房的油画后面。", "保险柜藏在书房的油画后面。", "保险柜藏在哪里？")
    assert not states_fact("我不知道。", "保险柜藏在书房的油画后面。", "保险柜藏在哪里？")


def test_unsure_and_unknown_answers_say_so_and_invent_nothing():
    q = "What did we order for dessert?"
    assert states_certainty("No idea, chief.", Certainty.UNKNOWN, None, q)
    assert not states_certainty("Dessert, chief.", Certainty.UNKNOWN, None, q)  # does not say it does not know
    assert not states_certainty("No idea, but we ordered a chocolate cake.", Certainty.UNKNOWN, None, q)
    assert not invents_nothing("No idea, but we ordered a chocolate cake.", [q])
    lead = "I ordered a mango cheesecake."
    assert states_certainty("Not sure. Maybe a mango cheesecake?", Certainty.UNCERTAIN, lead, q)
    assert not states_certainty("A mango cheesecake.", Certainty.UNCERTAIN, lead, q)  # sounds sure


def test_a_loop_is_rambling():
    assert rambles("I'm not sure. I'm not sure. I'm not sure. I'm not sure.")
    assert not rambles("The combination is 0427, and the safe is behind the painting.")
