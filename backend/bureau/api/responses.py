"""The API's bodies: every route declares one as its `response_model`, so the OpenAPI document is the contract
and the web client's types are generated from it (`make client`).

The shapes the game answers with (cards, traces, the operator snapshot, the record, subject access, findings,
the policy audit trail) are written once, in `game/contract.py`, and re-exported here; this module adds what
only the API builds: the stage's projections (`api/delivery.py`), health, sessions, the memory policy page and
the error bodies. The rules of `game/contract.py` hold here too (`extra="forbid"`, `Absent`, enums from
`scope/vocabulary.py`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from bureau.answering.base import ResponderName
from bureau.answering.selection import LlmStatus
from bureau.bootstrap.phases import Phase
from bureau.game.contract import (
    NEVER_EVIDENCE,
    RECORD_NEXT,
    Absent,
    AnswerSummary,
    BoardCopy,
    Card,
    CardMeta,
    CardSource,
    CaseInfo,
    CaseMode,
    CaseRecordPage,
    CaseRecordView,
    ClaimEvaluation,
    Conclusion,
    Conflict,
    CrossExaminationEntry,
    CrossExaminationResult,
    DerivedArtifact,
    Finding,
    FindingContributor,
    FindingEvaluation,
    FindingFacts,
    FindingList,
    FindingPromotion,
    HeldCard,
    HeldSpaces,
    Ingredient,
    Interrogation,
    InterrogationEntry,
    JointConclusion,
    KeyFact,
    Knowledge,
    KnowledgeRow,
    Language,
    LanguageLabels,
    LockedRow,
    OperatorSnapshot,
    PolicyDecisionView,
    Provenance,
    PublicationResult,
    Readership,
    RecordEntry,
    ResponseModel,
    Role,
    RoleAnswers,
    RoleResult,
    ScenarioDetail,
    ScenarioSummary,
    SearchTrace,
    Space,
    Spaces,
    StoredAnswer,
    SubjectAccess,
    Timestamp,
    Trace,
    TraceHit,
    TraceMiss,
    WhisperResult,
)
from bureau.scope.audience import Audience
from bureau.scope.vocabulary import CaseStatus, Certainty, Kind, MemoryType, PreferenceKey, RecordKind, StoreFault

__all__ = [
    "NEVER_EVIDENCE",
    "Absent",
    "AnswerSummary",
    "BoardCopy",
    "Card",
    "CardMeta",
    "CardSource",
    "CaseInfo",
    "CaseMode",
    "CaseRecordPage",
    "CaseRecordView",
    "ClaimEvaluation",
    "Conclusion",
    "Conflict",
    "CrossExaminationEntry",
    "CrossExaminationResult",
    "DerivedArtifact",
    "Finding",
    "FindingContributor",
    "FindingEvaluation",
    "FindingFacts",
    "FindingList",
    "FindingPromotion",
    "HeldCard",
    "HeldSpaces",
    "Ingredient",
    "Interrogation",
    "InterrogationEntry",
    "JointConclusion",
    "KeyFact",
    "Knowledge",
    "KnowledgeRow",
    "Language",
    "LanguageLabels",
    "LockedRow",
    "OperatorSnapshot",
    "PolicyDecisionView",
    "Provenance",
    "PublicationResult",
    "Readership",
    "RecordEntry",
    "ResponseModel",
    "Role",
    "RoleAnswers",
    "RoleResult",
    "ScenarioDetail",
    "ScenarioSummary",
    "SearchTrace",
    "Space",
    "Spaces",
    "StoredAnswer",
    "SubjectAccess",
    "Timestamp",
    "Trace",
    "TraceHit",
    "TraceMiss",
    "WhisperResult",
]


# ----- the stage (built only by the delivery gate, api/delivery.py) ----------------------------------------


class PublicCard(ResponseModel):
    """A board copy as the stage sees it: the private source card id is left out."""

    id: str
    content: str
    topic: str
    kind: Kind
    source_role: Role | None
    created_at: Timestamp


class PublicHit(ResponseModel):
    card_id: str
    score: float


class StageRetrieval(ResponseModel):
    role: Role
    searched_scopes: list[Space]
    public_hits: list[PublicHit]
    private_hit_count: int
    verdict: Certainty
    conflicting: bool = Field(description="cited board cards disagree (never a conflict with a private card)")
    duration_ms: float | None
    unfiltered: Absent[bool] = Field(default=None, description="the presenter act: no space filter, no re-check")
    locked: Absent[list[LockedRow]] = Field(
        default=None, description="the presenter act: other compartments' rows, locked (a space and a score)"
    )


class StageInterrogation(ResponseModel):
    """An interrogation in the stage's record: its public retrieval."""

    id: int
    kind: Literal[RecordKind.INTERROGATION]
    created_at: Timestamp
    role: Role
    searched_scopes: list[Space]
    public_hits: list[PublicHit]
    private_hit_count: int
    verdict: Certainty
    conflicting: bool
    duration_ms: float | None
    unfiltered: Absent[bool] = None
    locked: Absent[list[LockedRow]] = None


class StageCrossExamination(ResponseModel):
    """A cross-examination in the stage's record: each role's public retrieval, unless it is sealed (then it
    is only announced: `{id, kind, created_at, sealed: true}`)."""

    id: int
    kind: Literal[RecordKind.CROSS_EXAMINATION]
    created_at: Timestamp
    sealed: bool
    roles: Absent[list[Role]] = None
    retrievals: Absent[list[StageRetrieval | None]] = None


StageRecordEntry = Annotated[StageInterrogation | StageCrossExamination, Field(discriminator="kind")]


class StageRecord(ResponseModel):
    """One page of the record's public projection, newest first."""

    case_id: str
    entries: list[StageRecordEntry]
    next: int | None = Field(description=RECORD_NEXT)


class StageCase(ResponseModel):
    id: str
    version: int
    status: CaseStatus
    language: Language


class RoleCounts(ResponseModel):
    detective: int
    informant: int
    suspect: int


class StageSnapshot(ResponseModel):
    case: StageCase
    counts: RoleCounts = Field(description="cards per role, session records left out")
    bulletin_board: list[PublicCard]
    last_retrieval: StageRetrieval | None
    last_conclusion: StageCrossExamination | None = Field(description="the newest cross-examination")


class LatestCase(ResponseModel):
    case_id: str


# ----- health, sessions, memory policy -------------------------------------------------------------------


class MemoryHealth(ResponseModel):
    status: Literal["up", "down"]
    reason: StoreFault | None = Field(description="why the store is down (docs/faults.md); null while it is up")
    backend: str
    embedder: str
    threshold: float


class LlmHealth(ResponseModel):
    status: LlmStatus
    model: str | None
    base_url_host: str | None


class Health(ResponseModel):
    status: Literal["ok", "degraded"]
    version: str
    memory: MemoryHealth
    llm: LlmHealth
    mode: ResponderName
    access: Literal["open", "passcodes"]
    presenter_acts: bool = Field(
        description="the presenter act (`POST …/acts/unfiltered`) is on: BUREAU_PRESENTER_ACTS=1; the console offers it"
    )


class Ready(ResponseModel):
    status: Literal["ready"]


class SessionInfo(ResponseModel):
    audience: Audience | None
    csrf_token: str | None
    passcodes_enabled: bool


class PolicyDecisionPage(ResponseModel):
    decisions: list[PolicyDecisionView]
    next_after: int | None = Field(description="pass as `after` for the next page; null on the last page")


class MemoryPolicyView(ResponseModel):
    """What the operator may write (the console's whisper box offers exactly this)."""

    writable_types: list[MemoryType]
    default_type: MemoryType
    preference_keys: list[PreferenceKey]


# ----- errors --------------------------------------------------------------------------------------------
# What `api/errors.py` sends: always {"detail": {"code", "message"}}, plus `fields` on a 422 and the current
# `snapshot` on a 409 VERSION_CONFLICT.


class ErrorDetail(ResponseModel):
    code: str = Field(description="machine-readable, e.g. CASE_NOT_FOUND")
    message: str = Field(description="for people; never echoes the rejected input")
    phase: Phase | None = Field(default=None, description="STARTING only: the start-up phase the server is in")


class ErrorBody(ResponseModel):
    detail: ErrorDetail


class FieldError(ResponseModel):
    loc: list[str] = Field(description='where, e.g. ["body", "role"]; an unknown field is "<unknown field>"')
    type: str = Field(description="pydantic's error type, e.g. missing, literal_error")


class ValidationErrorDetail(ErrorDetail):
    code: Literal["VALIDATION_ERROR"]
    fields: list[FieldError] = Field(description="at most 20")
    truncated: Absent[bool] = Field(default=None, description="true when there were more than 20 problems")


class ValidationErrorBody(ResponseModel):
    detail: ValidationErrorDetail


class ConflictDetail(ErrorDetail):
    snapshot: Absent[OperatorSnapshot] = Field(default=None, description="VERSION_CONFLICT: the current case")


class ConflictBody(ResponseModel):
    detail: ConflictDetail
