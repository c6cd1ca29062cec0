"""Plain data returned by the memory gateway, so no layer above it sees PowerMem types."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

CreatedBy = Literal["scenario", "operator", "agent", "system"]
# Memory types that record the conversation itself: context for the X-ray, never evidence.
DERIVED_MEMORY_TYPES: frozenset[str] = frozenset({"session", "task_state"})


@dataclass(frozen=True, slots=True)
class CardDraft:
    """What the game asks the gateway to store. Scope comes separately, from the server."""

    content: str
    topic: str
    kind: str
    memory_type: str = "fact"
    trust: str = "medium"
    created_by: CreatedBy = "operator"
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
        return self.memory_type in DERIVED_MEMORY_TYPES


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
