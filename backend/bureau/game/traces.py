"""The X-ray's shapes as the interrogation builds them, typed: each is a plain dict at run time (what the record
keeps, what the events carry, what `game/contract.py: Trace` validates), its keys in the order they are set."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from bureau.scope.vocabulary import Certainty, FallbackReason


class Mark(TypedDict, total=False):
    """One candidate in the X-ray: a hit (`status`) or a miss (`reason`), and who judged it."""

    card_id: str
    space: str
    score: float
    cosine: float
    signals: dict[str, float]
    topic: str
    memory_type: str
    rule: str
    status: str
    reason: str
    judged_by: str
    borderline: bool


class ConflictView(TypedDict):
    topic: str
    card_ids: list[str]


class AnswerSummary(TypedDict):
    """What every record of an answer carries: the trace, the `answer.completed` event, the response."""

    certainty: Certainty
    evidence: list[str]
    responder: str
    fallback_reason: FallbackReason | None
    conflicts: list[ConflictView]


class GrantView(TypedDict):
    purpose: str
    keys: list[str]


class LockedRow(TypedDict):
    space: str
    score: float


class Trace(TypedDict):
    """One role's X-ray: what was searched, every candidate's outcome, the cut points, the answer's summary;
    then what the read policy excluded, the grant, and (the presenter act) what came back locked."""

    role: str
    searched_scopes: list[str]
    hits: list[Mark]
    misses: list[Mark]
    threshold: float
    borderline_floor: float
    relevance_policy: str
    question_language: str
    duration_ms: float
    certainty: Certainty
    evidence: list[str]
    responder: str
    fallback_reason: FallbackReason | None
    conflicts: list[ConflictView]
    owner_mismatch_dropped: NotRequired[int]
    grant: NotRequired[GrantView]
    unfiltered: NotRequired[bool]
    locked: NotRequired[list[LockedRow]]


class Ingredient(TypedDict):
    """Which card in which space something derived from a trace used."""

    card_id: str
    space: str


class Reply(TypedDict):
    """An interrogation's answer as the route returns it (`game/contract.py: Interrogation`)."""

    answer: str
    certainty: Certainty
    evidence: list[str]
    responder: str
    fallback_reason: FallbackReason | None
    conflicts: list[ConflictView]
    trace: Trace
