"""The who-knows-what matrix and each role's latest answer, from the case record.

Kept with the case on the server, so a reload or a second console sees the same matrix, "unknown" cells
included. The ledger maintains them step by step (`answer_step`, one per interrogation, in its commit;
`ledger/case_knowledge.py`); `fold_knowledge` and `latest_answers` fold the whole record at once and stay the
reference the maintained state is tested against.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

from bureau.game.scenario_schema import KeyFact
from bureau.ledger.record import RecordEntry
from bureau.ledger.repository import AnswerStep, LatestAnswer, StepOf
from bureau.scope.content_policy import normalise_whisper
from bureau.scope.keys import BOARD

FactCell = Literal["own_memory", "board", "conflicting", "uncertain", "unknown"]


def cells_for_answer(
    key_facts: Sequence[KeyFact],
    role: str,
    question: str | None,
    evidence: Iterable[dict[str, Any]],
    conflicting_topics: Iterable[str],
    certainty: str = "known",
) -> dict[str, FactCell]:
    """Only the facts one answer speaks to. `evidence`: the cited hits ({space, topic}). Evidence on the
    fact's topic says where the role knows it from (or that it disagrees); no such evidence shows the role
    does not know it only when the question was the fact's own; an uncertain answer (it quotes a close card
    but never counts as knowing) marks only the fact whose own question it answered. Any other answer says
    nothing about a fact."""
    cards = list(evidence)
    disputed = set(conflicting_topics)
    # The asked question was stored normalised (NFKC turns "？" into "?"): compare like with like.
    asked = normalise_whisper(question) if question else None
    cells: dict[str, FactCell] = {}
    for fact in key_facts:
        own_question = asked is not None and fact.question is not None and asked == normalise_whisper(fact.question)
        if certainty == "uncertain":
            if own_question:
                cells[fact.id] = "uncertain"
            continue
        on_topic = [card for card in cards if card.get("topic") == fact.topic]
        if on_topic and fact.topic in disputed:
            cells[fact.id] = "conflicting"
        elif any(card.get("space") == role for card in on_topic):
            cells[fact.id] = "own_memory"
        elif any(card.get("space") == BOARD for card in on_topic):
            cells[fact.id] = "board"
        elif own_question:
            cells[fact.id] = "unknown"
    return cells


def _cited_hits(trace: dict[str, Any]) -> list[dict[str, Any]]:
    cited = set(trace.get("evidence", []))
    return [hit for hit in trace.get("hits", []) if hit.get("card_id") in cited]


def _asked(interrogations: Sequence[RecordEntry]) -> Iterator[tuple[str, dict[str, Any], RecordEntry]]:
    """Each interrogation entry in order, with the role that was asked and its trace (an entry that
    names no role is skipped)."""
    for entry in interrogations:
        trace = entry.summary.get("trace") or {}
        role = trace.get("role") or (entry.roles[0] if entry.roles else None)
        if role is not None:
            yield role, trace, entry


def fold_knowledge(key_facts: Sequence[KeyFact], interrogations: Sequence[RecordEntry]) -> dict[str, dict[str, str]]:
    """Role -> fact id -> cell, the newest answer that speaks to a fact winning. An entry whose text was
    dropped (a cited card was erased) can still show where a fact was known, never that it was unknown."""
    matrix: dict[str, dict[str, str]] = {}
    for role, trace, entry in _asked(interrogations):
        conflicts = [conflict.get("topic") for conflict in trace.get("conflicts", []) or []]
        question = entry.body.get("question")
        certainty = trace.get("certainty", "known")
        cells = cells_for_answer(key_facts, role, question, _cited_hits(trace), conflicts, certainty)
        matrix.setdefault(role, {}).update(cells)
    return matrix


def _answer_summary(trace: dict[str, Any]) -> dict[str, Any]:
    """The content-free part of a latest answer (the ledger keeps it as it is; the text is sealed apart)."""
    return {
        "certainty": trace.get("certainty", "unknown"),
        "evidence": list(trace.get("evidence", [])),
        "responder": trace.get("responder", "evidence"),
        "fallback_reason": trace.get("fallback_reason"),
        "conflicts": list(trace.get("conflicts", []) or []),
        "trace": trace,
    }


def latest_answers(interrogations: Sequence[RecordEntry]) -> dict[str, dict[str, Any]]:
    """Role -> its newest answer as the console shows it: the text, the certainty and evidence, the trace."""
    answers: dict[str, dict[str, Any]] = {}
    for role, trace, entry in _asked(interrogations):
        answers[role] = {
            "answer": entry.body.get("answer", ""),
            **_answer_summary(trace),
            "asked_at": entry.created_at.isoformat(),
        }
    return answers


def answer_step(
    key_facts: Sequence[KeyFact], role: str, question: str | None, answer: str, trace: dict[str, Any]
) -> AnswerStep:
    """What one interrogation changes in the maintained state: exactly one step of the two folds above."""
    conflicts = [conflict.get("topic") for conflict in trace.get("conflicts", []) or []]
    certainty = trace.get("certainty", "known")
    cells = cells_for_answer(key_facts, role, question, _cited_hits(trace), conflicts, certainty)
    return AnswerStep(role, dict(cells), _answer_summary(trace), answer)


def step_of(key_facts: Sequence[KeyFact]) -> StepOf:
    """The step of one record entry, for the ledger when it folds a case again (an older case, an entry
    that lost its text)."""

    def step(entry: RecordEntry) -> AnswerStep | None:
        for role, trace, asked in _asked([entry]):
            return answer_step(key_facts, role, asked.body.get("question"), asked.body.get("answer", ""), trace)
        return None

    return step


def answer_view(latest: LatestAnswer) -> dict[str, Any]:
    """A maintained latest answer in the shape `latest_answers` gives."""
    return {"answer": latest.answer, **latest.summary, "asked_at": latest.asked_at.isoformat()}
