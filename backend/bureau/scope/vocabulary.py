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
    """What a record is to the memory policy (who may write it, how long it lives, whether it is evidence):
    the rows of the table in `scope/memory_policy.py`. What it says in the story is its `Kind`."""

    SESSION = "session"
    TASK_STATE = "task_state"
    USER_PREFERENCE = "user_preference"
    LONG_TERM_KNOWLEDGE = "long_term_knowledge"
    OPERATIONAL_MEMORY = "operational_memory"
    AUDIT_RECORD = "audit_record"


class Kind(StrEnum):
    """What a card says, as the story sees it (a scenario card's `kind`)."""

    FACT = "fact"
    SECRET = "secret"  # noqa: S105 (a kind of card, not a credential)
    CLUE = "clue"
    ALIBI = "alibi"
    TIP = "tip"
    RUMOR = "rumor"
    OBSERVATION = "observation"
    PREFERENCE = "preference"
    NOTE = "note"


class Trust(StrEnum):
    """How credible a card's content is (the mole's true and false tip). Not the creator's trust level."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class CreatedBy(StrEnum):
    """Who created a record, which is its trust level: system > scenario > operator > agent > untrusted."""

    SYSTEM = "system"
    SCENARIO = "scenario"
    OPERATOR = "operator"
    AGENT = "agent"
    UNTRUSTED = "untrusted"

    def at_least(self, other: CreatedBy) -> bool:
        order = list(CreatedBy)  # declared most trusted first
        return order.index(self) <= order.index(other)


class Certainty(StrEnum):
    """An answer's certainty: a retrieval fact, never a model's mood. `uncertain`: the closest memory may
    answer the question, and the answer says so; never counted as knowing (docs/retrieval.md)."""

    KNOWN = "known"
    UNCERTAIN = "uncertain"
    UNKNOWN = "unknown"


class HitStatus(StrEnum):
    """Why a candidate in a trace is a hit."""

    HIT = "hit"
    BORDERLINE_CONFIRMED = "borderline_confirmed"


class MissReason(StrEnum):
    """Why a candidate in a trace is not evidence."""

    BELOW_THRESHOLD = "below_threshold"
    UNCERTAIN = "uncertain"  # close, maybe an answer; not judged by a model (evidence mode never guesses)
    BORDERLINE_REJECTED = "borderline_rejected"
    DERIVED_CONTEXT = "derived_context"
    DUPLICATE = "duplicate"
    FILTERED_UNSAFE = "filtered_unsafe"
    # The read policy (scope/memory_policy.py), applied to every search hit before classification:
    TYPE_NOT_EVIDENCE = "type_not_evidence"
    EXPIRED = "expired"
    FAILED_VALIDATION = "failed_validation"


class PublicationState(StrEnum):
    """The Publish Saga: a reservation is `pending` (with a lease) until its board copy is `ready`."""

    PENDING = "pending"
    READY = "ready"


class CaseStatus(StrEnum):
    """Created as `loading` (scenario cards being written), `active`, then `erasing` until it is gone."""

    LOADING = "loading"
    ACTIVE = "active"
    ERASING = "erasing"
