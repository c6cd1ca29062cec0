"""The responder contract: the memory layer decides what can be known; a responder only says it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from bureau.answering.conflicts import Conflict
from bureau.memory.types import Candidate
from bureau.scope.vocabulary import Certainty

ResponderName = Literal["evidence", "role_voice"]

# Fallback reasons: why an answer came from the evidence responder instead of the role voice
# (docs/answering.md lists them all).
# Set by the role voice when it falls back:
UNGROUNDED = "ungrounded_claim"
CITATION_OUTSIDE = "citation_outside_evidence"
CLAIMED_KNOWN = "claimed_known_without_evidence"
MALFORMED = "malformed_output"
TIMEOUT = "provider_timeout"
PROVIDER_ERROR = "provider_error"
BUDGET = "budget_exhausted"
BUSY = "busy"
# Set by the game's final check on any responder's answer (`validate_answer` in game/interrogation.py);
# CLAIMED_KNOWN and CITATION_OUTSIDE above apply there too.
KNOWN_WITHOUT_CITATION = "known_without_citation"
DECLINED_EVIDENCE = "declined_available_evidence"


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


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    certainty: Certainty
    # card ids: a subset of the request's hits (+ confirmed borderline); for "uncertain", the close card quoted
    evidence: tuple[str, ...]
    responder: ResponderName
    fallback_reason: str | None = None
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
