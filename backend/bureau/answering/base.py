"""The responder contract: the memory layer decides what can be known; a responder only says it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from bureau.answering.conflicts import Conflict
from bureau.memory.types import Candidate
from bureau.scope.content_policy import BUILT_IN, Screening
from bureau.scope.vocabulary import Certainty, FallbackReason

ResponderName = Literal["evidence", "role_voice"]


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    case_id: str
    role: str
    question: str
    language: str
    hits: tuple[Candidate, ...]
    # Uncertain candidates: close, but maybe not an answer. Only the role voice may confirm them (or reject
    # them); evidence mode never guesses and says "uncertain" out loud.
    borderline: tuple[Candidate, ...] = ()
    # The screening in force (the configured patterns too): a card is replayed into a model only if it passes.
    screening: Screening = BUILT_IN


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    certainty: Certainty
    # card ids: a subset of the request's hits (+ confirmed borderline); for "uncertain", the close card quoted
    evidence: tuple[str, ...]
    responder: ResponderName
    fallback_reason: FallbackReason | None = None
    # card id -> True (confirmed relevant, promoted to a hit) / False (rejected)
    borderline_verdicts: dict[str, bool] = field(default_factory=dict)
    # card id -> reason, for evidence withheld from the model (e.g. "unsafe_content")
    filtered: dict[str, str] = field(default_factory=dict)
    # Topics on which the cited evidence disagrees; set by the game from the evidence, whatever the responder.
    conflicts: tuple[Conflict, ...] = ()


class Responder(Protocol):
    name: ResponderName

    @property
    def degraded(self) -> bool:
        """True when the responder is up but failing (reported as "degraded" by /api/health)."""
        ...

    def warm_up(self) -> None:
        """Do any slow one-off set-up now (called once at start-up, in a thread); may be a no-op."""
        ...

    async def answer(self, request: AnswerRequest) -> Answer: ...
