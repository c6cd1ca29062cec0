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
    FINDING_PROMOTED = "finding.promoted"
    FINDING_WITHDRAWN = "finding.withdrawn"


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


class PreferenceKey(StrEnum):
    """The allow-listed keys of a `user_preference`; what value each takes is in `scope/memory_policy.py`."""

    PREFERRED_LANGUAGE = "preferred_language"
    ANSWER_STYLE = "answer_style"
    DIETARY_PREFERENCE = "dietary_preference"
    MEETING_TIME = "meeting_time"


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
    FINDING = "finding"  # corroborated knowledge on the board (docs/findings.md)


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


class StoreFault(StrEnum):
    """Why `/api/health` reports the memory store down (docs/faults.md)."""

    STORE_MISSING = "STORE_MISSING"  # the store's files were removed under the running server: never recreated
    STORE_STALLED = "STORE_STALLED"  # a call is stuck past its deadline: calls refused until the store answers
    STORE_UNREACHABLE = "STORE_UNREACHABLE"  # the last ping failed (a reopen follows when the store went away)


class HitStatus(StrEnum):
    """Why a candidate in a trace is a hit."""

    HIT = "hit"
    BORDERLINE_CONFIRMED = "borderline_confirmed"


class PolicyAction(StrEnum):
    """What a memory-policy decision in the audit trail did (docs/memory-policy.md#audit-trail)."""

    WRITE_ACCEPTED = "write_accepted"
    WRITE_REJECTED = "write_rejected"
    READ_FILTERED = "read_filtered"
    RETENTION_PURGED = "retention_purged"


class PolicyCode(StrEnum):
    """The code of a memory-policy decision: `ok` for an accepted write; the rule a refused write broke (also
    its error code on the wire); why a read left a record out (the X-ray's reasons, plus `owner_mismatch`,
    only ever counted); `expired` for a retention purge."""

    OK = "ok"
    MEMORY_TYPE_FORBIDDEN = "MEMORY_TYPE_FORBIDDEN"
    PREFERENCE_KEY_UNKNOWN = "PREFERENCE_KEY_UNKNOWN"
    PREFERENCE_VALUE_INVALID = "PREFERENCE_VALUE_INVALID"
    UNSAFE_INPUT = "UNSAFE_INPUT"
    EXPIRED = "expired"
    FAILED_VALIDATION = "failed_validation"
    TYPE_NOT_EVIDENCE = "type_not_evidence"
    OWNER_MISMATCH = "owner_mismatch"


class MissReason(StrEnum):
    """Why a candidate in a trace is not evidence."""

    BELOW_THRESHOLD = "below_threshold"
    UNCERTAIN = "uncertain"  # close, maybe an answer; not judged by a model (evidence mode never guesses)
    BORDERLINE_REJECTED = "borderline_rejected"
    DERIVED_CONTEXT = "derived_context"
    DUPLICATE = "duplicate"
    FILTERED_UNSAFE = "filtered_unsafe"
    # The read policy (scope/memory_policy.py), applied to every search hit before classification; the audit
    # trail counts the same exclusions under the same codes:
    TYPE_NOT_EVIDENCE = PolicyCode.TYPE_NOT_EVIDENCE.value
    EXPIRED = PolicyCode.EXPIRED.value
    FAILED_VALIDATION = PolicyCode.FAILED_VALIDATION.value


class PublicationState(StrEnum):
    """The Publish Saga: a reservation is `pending` (with a lease) until its board copy is `ready`. `erased`
    is the tombstone a card erasure leaves: the card can never be published (again)."""

    PENDING = "pending"
    READY = "ready"
    ERASED = "erased"


class FindingState(StrEnum):
    """A finding's Saga: `pending` (with a lease) until its board card is `ready`; `withdrawn` once a deletion,
    reset or erasure leaves it without leave-one-out support (its board card and its ledger mapping go)."""

    PENDING = "pending"
    READY = "ready"
    WITHDRAWN = "withdrawn"


class ContributionStatus(StrEnum):
    """Why a card that matches a claim at known grade counts as an independent contributor, or why not."""

    COUNTED = "counted"
    SAME_ROLE = "same_role"  # another card of this role already counts
    SHARED_SOURCE = "shared_source"  # another counted card came from the same source
    ECHO_BOARD = "echo_board"  # written after the claim was on the board
    ECHO_QUESTION = "echo_question"  # written after this role was asked a question matching the claim
    BOARD_COPY = "board_copy"  # on the board already (a published copy or a finding): never a contributor
    UNCERTAIN = "uncertain"  # close, but not a known-grade match


class FindingDecision(StrEnum):
    """The outcome of evaluating a claim."""

    QUALIFIES = "qualifies"
    NOT_QUALIFIED = "not_qualified"
    PROMOTED = "promoted"  # already on the board as a finding


class CaseStatus(StrEnum):
    """Created as `loading` (scenario cards being written), `active`, then `erasing` until it is gone."""

    LOADING = "loading"
    ACTIVE = "active"
    ERASING = "erasing"


class FallbackReason(StrEnum):
    """Why an answer came from the evidence responder instead of the role voice (docs/answering.md)."""

    # Set by the role voice when it falls back:
    UNGROUNDED_CLAIM = "ungrounded_claim"
    CITATION_OUTSIDE_EVIDENCE = "citation_outside_evidence"
    CLAIMED_KNOWN_WITHOUT_EVIDENCE = "claimed_known_without_evidence"
    # The sentence does not say what the server decided: a known answer that leaves out the cited fact's key
    # (name, number, words) or negates it; an uncertain / unknown answer that does not say so.
    FACT_NOT_STATED = "fact_not_stated"
    MALFORMED_OUTPUT = "malformed_output"
    PROVIDER_TIMEOUT = "provider_timeout"
    PROVIDER_ERROR = "provider_error"
    BUDGET_EXHAUSTED = "budget_exhausted"
    BUSY = "busy"
    # Set by the game's final check on any responder's answer (`validate_answer` in game/interrogation.py);
    # the two "claimed"/"citation" reasons above apply there too.
    KNOWN_WITHOUT_CITATION = "known_without_citation"
    DECLINED_AVAILABLE_EVIDENCE = "declined_available_evidence"


class ModeReason(StrEnum):
    """Why a case answers in evidence mode or in the role voice (the snapshot's `mode`, the console header)."""

    NO_MODEL = "no_model"  # BUREAU_LLM_BASE_URL is empty
    MODEL_SPEAKS_LANGUAGE = "model_speaks_language"
    LANGUAGE_NOT_SPOKEN = "language_not_spoken"  # e.g. a Chinese case with the English-only local model


class CoverageRule(StrEnum):
    """Which part of the coverage rule held a candidate back (docs/retrieval.md, memory/relevance/coverage.py): shown
    in the X-ray beside the candidate. A code only, never the words."""

    CONTRADICTION = "contradiction"  # a question word meets another member of its kind in the card
    FOCUS_NOT_COVERED = "focus_not_covered"  # a focus word of the question is not in the card: uncertain at best
    ATTRIBUTE_NOT_ANSWERED = "attribute_not_answered"  # the card has no phrase of the type asked for
    NO_FOCUS_MATCH = "no_focus_match"  # not one focus word matched, even softly: unknown


class RelevancePolicyName(StrEnum):
    """Which relevance policy judged a retrieval (a trace's `relevance_policy`, docs/retrieval.md): the
    calibrated logistic model of the embedder, or the single cosine threshold of an embedder without one."""

    LOGISTIC_LOCAL = "logistic-local"
    LOGISTIC_HASHING = "logistic-hashing"
    LOGISTIC_OPENAI = "logistic-openai"
    COSINE_THRESHOLD = "cosine-threshold"

    @classmethod
    def logistic(cls, embedder: str) -> RelevancePolicyName:
        """The calibrated model of `embedder`; ValueError for an embedder this vocabulary does not name."""
        return cls(f"logistic-{embedder}")


class Purpose(StrEnum):
    """What a grant is for (vault/grants.py): it names the command, and it limits what may be done under the
    keys it holds. The X-ray names it beside the compartments whose keys the request held."""

    INTERROGATION = "interrogation"
    CROSS_EXAMINATION = "cross_examination"
    WHISPER = "whisper"
    PUBLISH = "publish"
    FINDINGS = "findings"  # nothing read under it reaches a role, a prompt or the stage
    CASE_SETUP = "case_setup"  # create and reset: write every space
    OPERATOR = "operator"  # the operator's views: snapshot, record, export, subject access
    STAGE = "stage"  # the stage's views: the board, public already
    LIFECYCLE = "lifecycle"  # deletes, erasure, cleanups, retention: ids and metadata, never text
    MIGRATION = "migration"  # re-sealing a case sealed under one case key into its compartments, once
