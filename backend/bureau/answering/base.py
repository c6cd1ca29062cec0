"""The responder contract: the memory layer decides what can be known; a responder only says it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from bureau.memory.types import Candidate

Certainty = Literal["known", "unknown"]
ResponderName = Literal["evidence", "role_voice"]


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    case_id: str
    role: str
    question: str
    language: str
    hits: tuple[Candidate, ...]
    # Candidates just below the threshold. Only the role voice may confirm them; evidence mode never guesses.
    borderline: tuple[Candidate, ...] = ()


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    certainty: Certainty
    evidence: tuple[str, ...]  # card ids, always a subset of the request's hits (+ confirmed borderline)
    responder: ResponderName
    fallback_reason: str | None = None
    # card id -> True (confirmed relevant, promoted to a hit) / False (rejected)
    borderline_verdicts: dict[str, bool] = field(default_factory=dict)
    # card id -> reason, for evidence withheld from the model (e.g. "unsafe_content")
    filtered: dict[str, str] = field(default_factory=dict)


class Responder(Protocol):
    name: ResponderName

    async def answer(self, request: AnswerRequest) -> Answer: ...
