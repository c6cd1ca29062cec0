"""Plain data returned by the memory gateway, so no layer above it sees PowerMem types."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bureau.scope.vocabulary import CreatedBy, MemoryType, Trust, may_be_evidence


@dataclass(frozen=True, slots=True)
class CardDraft:
    """What the game asks the gateway to store. Scope comes separately, from the server."""

    content: str
    topic: str
    kind: str
    memory_type: str = MemoryType.FACT
    trust: str = Trust.MEDIUM
    created_by: str = CreatedBy.OPERATOR
    expires_at: datetime | None = None
    source_role: str | None = None
    source_card_id: str | None = None


@dataclass(frozen=True, slots=True)
class StoredCard:
    id: str
    case_id: str
    space: str
    content: str
    topic: str
    kind: str
    visibility: str
    memory_type: str
    trust: str
    created_by: str
    created_at: datetime
    expires_at: datetime | None = None
    source_role: str | None = None
    source_card_id: str | None = None

    @property
    def is_derived(self) -> bool:
        """Recorded from the conversation itself (a session or task-state record), not told to the role."""
        return not may_be_evidence(self.memory_type)

    @property
    def may_be_evidence(self) -> bool:
        return may_be_evidence(self.memory_type)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A search result: the card and its cosine similarity to the query (-1..1)."""

    card: StoredCard
    score: float


class MemoryUnavailableError(RuntimeError):
    """The store could not answer. Mapped to 503 MEMORY_UNAVAILABLE; never carries user text."""


class WorkerIdLostError(MemoryUnavailableError):
    """This process lost its Snowflake worker id: a new card could overwrite another process's card.
    Mapped to 503 WORKER_ID_LOST; the process stays fenced (no store writes) until it is restarted."""
