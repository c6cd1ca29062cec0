"""One vocabulary: every enumerated value the server stores, sends or checks, defined once.

Each is a `StrEnum`, so a member *is* its string (JSON, SQL and comparisons with stored strings keep
working) and pydantic/OpenAPI list its values. Adding a value is a one-line edit here; the tests that walk
every value (stage projection, console and stage labels in both languages) then say what else it needs.
"""

from __future__ import annotations

from enum import StrEnum


class EventType(StrEnum):
    """Every event the ledger's outbox records. The stage projection in `api/delivery.py` names each one."""

    CASE_CREATED = "case.created"
    CASE_RESET = "case.reset"
    CASE_ERASED = "case.erased"
    MEMORY_WRITTEN = "memory.written"
    RETRIEVAL_COMPLETED = "retrieval.completed"
    ANSWER_COMPLETED = "answer.completed"
    PUBLICATION_STARTED = "publication.started"
    PUBLICATION_COMPLETED = "publication.completed"
    CROSS_EXAMINATION_COMPLETED = "cross_examination.completed"
    CARD_ERASED = "card.erased"


class RecordKind(StrEnum):
    """What a case-record entry records."""

    INTERROGATION = "interrogation"
    CROSS_EXAMINATION = "cross_examination"


class MemoryType(StrEnum):
    """What kind of memory a card is. Derived types record the conversation itself (see `DERIVED`)."""

    FACT = "fact"
    RUMOR = "rumor"
    OBSERVATION = "observation"
    PREFERENCE = "preference"
    SESSION = "session"
    TASK_STATE = "task_state"


# Memory the system derives from conversations ("I was asked X"): context for the X-ray, never evidence.
DERIVED_MEMORY_TYPES: frozenset[str] = frozenset({MemoryType.SESSION, MemoryType.TASK_STATE})


def may_be_evidence(memory_type: str) -> bool:
    """The one rule for what may back an answer or be published: never memory derived from conversations.
    Interrogation, the answering packet, the role voice fallback and publish all ask this."""
    return memory_type not in DERIVED_MEMORY_TYPES


class Kind(StrEnum):
    """What a card says, as the story sees it (a scenario card's `kind`)."""

    SECRET = "secret"  # noqa: S105 (a kind of card, not a credential)
    CLUE = "clue"
    ALIBI = "alibi"
    TIP = "tip"
    RUMOR = "rumor"
    OBSERVATION = "observation"
    PREFERENCE = "preference"
    NOTE = "note"


class Trust(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class CreatedBy(StrEnum):
    SCENARIO = "scenario"
    OPERATOR = "operator"
    AGENT = "agent"
    SYSTEM = "system"


class Certainty(StrEnum):
    """An answer's certainty: a retrieval fact, never a model's mood."""

    KNOWN = "known"
    UNKNOWN = "unknown"


class HitStatus(StrEnum):
    """Why a candidate in a trace is a hit."""

    HIT = "hit"
    BORDERLINE_CONFIRMED = "borderline_confirmed"


class MissReason(StrEnum):
    """Why a candidate in a trace is not evidence."""

    BELOW_THRESHOLD = "below_threshold"
    BORDERLINE_REJECTED = "borderline_rejected"
    DERIVED_CONTEXT = "derived_context"
    DUPLICATE = "duplicate"
    FILTERED_UNSAFE = "filtered_unsafe"


class PublicationState(StrEnum):
    """The Publish Saga: a reservation is `pending` (with a lease) until its board copy is `ready`."""

    PENDING = "pending"
    READY = "ready"


class CaseStatus(StrEnum):
    """Created as `loading` (scenario cards being written), `active`, then `erasing` until it is gone."""

    LOADING = "loading"
    ACTIVE = "active"
    ERASING = "erasing"
