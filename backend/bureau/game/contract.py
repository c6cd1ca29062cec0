"""The shapes the game answers with, as pydantic models: written once here, below the API. The game builds
them; `api/responses.py` re-exports them beside the API's own bodies (stage, health, sessions, errors), every
route declares one as its `response_model`, and the OpenAPI document (and the web client, `make client`) is
generated from them.

Two rules keep the models honest about what the game sends:
- `extra="forbid"`: a key the game sets that no model declares fails, instead of silently vanishing. To send a
  new field, declare it here.
- A response carries exactly the keys the game set (routes use `response_model_exclude_unset=True`). A field
  marked `Absent[...]` is one the game leaves out in some responses; it is never filled with a default (a
  default would be a new key, and on the stage a possible leak).
Enumerated values come from `scope/vocabulary.py` and `scope/keys.py`, never re-spelled here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pydantic.json_schema import SkipJsonSchema
from typing_extensions import TypeAliasType

from bureau.answering.base import ResponderName
from bureau.game.knowledge import FactCell
from bureau.scope import keys, phrases
from bureau.scope.audience import Visibility
from bureau.scope.memory_policy import DERIVED_MEMORY_TYPES
from bureau.scope.vocabulary import (
    CaseStatus,
    Certainty,
    ContributionStatus,
    CoverageRule,
    CreatedBy,
    FallbackReason,
    FindingDecision,
    FindingState,
    HitStatus,
    Kind,
    MemoryType,
    MissReason,
    ModeReason,
    PolicyAction,
    PolicyCode,
    Purpose,
    RecordKind,
    RelevancePolicyName,
    Trust,
)

# The game's literal types under their own names, so the document (and the web client) names them once.
Role = TypeAliasType("Role", keys.Role)
Space = TypeAliasType("Space", keys.Space)
Language = TypeAliasType("Language", phrases.Language)
T = TypeVar("T")
# A key the game omits in some responses: optional in the schema, never `null`, never defaulted on the wire.
Absent: TypeAlias = Union[T, SkipJsonSchema[None]]  # noqa: UP007 (a generic alias mypy can read)
# Timestamps are sent exactly as the server wrote them (ISO 8601 with a UTC offset).
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
# Who may read an item: `public`, `sealed` (nobody), or roles joined by `+` (`detective+suspect`).
Readership = Annotated[str, Field(description="`public`, `sealed`, or roles joined by `+`", examples=["sealed"])]


def _no_null_defaults(schema: dict[str, Any]) -> None:
    """An `Absent` field is left out, never sent as its Python default: the schema shows no default."""
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:
            del prop["default"]


class ResponseModel(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_no_null_defaults)


# ----- cards ---------------------------------------------------------------------------------------------


class FindingFacts(ResponseModel):
    """What a finding's board card holds besides its text (docs/findings.md)."""

    finding_id: str
    support: int = Field(description="independent contributors (distinct roles and sources)")
    leave_one_out: int = Field(description="the smallest support left with any one contributor removed")
    contradictions: int = Field(description="close cards on a contributor's topic that say something else")
    review_at: str = Field(json_schema_extra={"format": "date"})
    scope: Space


class CardSource(ResponseModel):
    role: Role
    card_id: str


# The memory types the system derives from conversations: context, never evidence, never publishable.
NEVER_EVIDENCE = "x-bureau-never-evidence"


class CardMeta(ResponseModel):
    """A card without its content: how the event log records it."""

    id: str
    space: Space
    topic: str
    kind: Kind
    visibility: Visibility
    memory_type: MemoryType = Field(json_schema_extra={NEVER_EVIDENCE: list[JsonValue](sorted(DERIVED_MEMORY_TYPES))})
    key: str | None = Field(description="the preference key of a `user_preference` card, else null")
    trust: Trust
    created_by: CreatedBy
    created_at: Timestamp
    source: CardSource | None = Field(description="the private original of a board copy, else null")
    finding: Absent[FindingFacts] = Field(
        default=None, description="a finding's board card only: its figures, never a contributor"
    )


class Card(CardMeta):
    content: str
    told_by: Absent[str] = Field(default=None, description="who told the role, when named (operator views only)")


class Spaces(ResponseModel):
    detective: list[Card]
    informant: list[Card]
    suspect: list[Card]
    bulletin_board: list[Card]


class FindingContributor(ResponseModel):
    """One card that matches the claim, and whether it counts (operator only, before promotion)."""

    card_id: str
    role: Role | None = Field(description="null for a board card (never a contributor)")
    source: str | None = Field(description="who told the role, when named")
    status: ContributionStatus
    score: float
    created_at: Timestamp
    content: str


class ClaimEvaluation(ResponseModel):
    claim: str
    proposed: bool = Field(description="proposed by the server from matching cards: rewrite it in your words")
    contributors: list[FindingContributor]
    support: int
    leave_one_out: int
    min_support: int
    margin: int = Field(description="leave_one_out - min_support; >= 0 qualifies")
    contradictions: int
    trust: Trust = Field(description="the lowest trust of the counted contributors (support is not truth)")
    decision: FindingDecision
    finding_id: str | None


class FindingEvaluation(ResponseModel):
    min_support: int
    claims: list[ClaimEvaluation]


class Finding(ResponseModel):
    """A promoted or withdrawn finding: figures and state, never a contributor."""

    id: str
    state: FindingState
    claim: str | None = Field(description="null once withdrawn")
    public_card_id: str | None
    support: int
    leave_one_out: int
    min_support: int
    margin: int
    contradictions: int
    trust: Trust
    review_at: str = Field(json_schema_extra={"format": "date"})
    scope: Space
    promoted_at: Timestamp | None
    withdrawn_at: Timestamp | None


class FindingPromotion(ResponseModel):
    finding: Finding
    card: Card
    idempotent: bool = Field(description="true when the claim was promoted before (status 200)")


class FindingList(ResponseModel):
    findings: list[Finding]


class WhisperResult(ResponseModel):
    card: Card


class PublicationResult(ResponseModel):
    public_card: Card
    idempotent: bool = Field(description="true when the card was published before (status 200)")


# ----- traces and answers --------------------------------------------------------------------------------


class Conflict(ResponseModel):
    """Cited cards on one topic that make different claims (the mole's two tips)."""

    topic: str
    card_ids: list[str]


class _Candidate(ResponseModel):
    card_id: str
    space: Space
    score: float = Field(description="the judged relevance, the axis the cut points are drawn on")
    cosine: float
    signals: dict[str, float] = Field(description="every measured relevance signal, `cosine` among them")
    topic: str
    memory_type: MemoryType
    judged_by: Absent[Literal["model"]] = None
    rule: Absent[CoverageRule] = Field(
        default=None, description="the part of the coverage rule that held this candidate back (docs/retrieval.md)"
    )


class TraceHit(_Candidate):
    status: HitStatus


class TraceMiss(_Candidate):
    reason: MissReason
    borderline: Absent[bool] = Field(default=None, description="an uncertain candidate nobody judged")


class _Verdict(ResponseModel):
    certainty: Certainty
    responder: ResponderName
    fallback_reason: FallbackReason | None
    conflicts: list[Conflict]


class AnswerSummary(_Verdict):
    evidence: list[str] = Field(description="ids of the cited cards; always among the trace's hits")


class TraceGrant(ResponseModel):
    """The grant the search ran under: its purpose, and the compartments whose keys the request held to read
    (the X-ray's "keys in this request")."""

    purpose: Purpose
    keys: list[Space]


class LockedRow(ResponseModel):
    """A row of another compartment that came back (the presenter act's statement has no space filter) and
    that no key in the request opens: the space its row names and its score in the asked space's basis,
    nothing else (no text, no card id, no topic)."""

    space: Space
    score: float


class SearchTrace(_Verdict):
    """One retrieval: what was searched, every candidate with its score, and why each is or is not evidence
    (the `retrieval.completed` event carries this; `Trace` adds the cited evidence)."""

    role: Role
    searched_scopes: list[Space]
    grant: Absent[TraceGrant] = None  # absent in records from before grants
    # The presenter act (`POST …/acts/unfiltered`): run without the space filter and the re-check.
    unfiltered: Absent[bool] = None
    locked: Absent[list[LockedRow]] = None
    hits: list[TraceHit]
    misses: list[TraceMiss]
    threshold: float
    borderline_floor: float
    relevance_policy: RelevancePolicyName
    question_language: str
    duration_ms: float
    # Records the gateway dropped because their owner key was not the scope asked for (interrogations only).
    owner_mismatch_dropped: Absent[int] = None


class Trace(SearchTrace, AnswerSummary):
    pass


class Interrogation(AnswerSummary):
    answer: str
    trace: Trace


class Provenance(ResponseModel):
    card_id: str
    space: Space


class RoleResult(ResponseModel):
    """One role's scoped result inside a cross-examination."""

    role: Role
    certainty: Certainty
    audience: Readership
    trace: Trace
    answer: str | None


class Conclusion(ResponseModel):
    """A cross-examination's joint conclusion; its audience is the narrowest of the roles and every hit."""

    certainty: Certainty
    audience: Readership
    sealed: bool = Field(description="true when it mixes two roles' private cards: nobody may read it")
    text: str | None = Field(description="null in the record once an ingredient card was erased")


class JointConclusion(Conclusion):
    text: str
    provenance: list[Provenance]


class CrossExaminationResult(ResponseModel):
    roles: list[Role]
    results: list[RoleResult]
    conclusion: JointConclusion


# ----- the operator snapshot -----------------------------------------------------------------------------


class CaseInfo(ResponseModel):
    id: str
    scenario_id: str
    language: Language
    version: int
    status: CaseStatus
    created_at: Timestamp


LanguageLabels = dict[Language, str]


class KeyFact(ResponseModel):
    id: str
    label: str
    topic: str
    question: str | None = Field(description="the preset question that tests this fact")
    labels: LanguageLabels


class ScenarioDetail(ResponseModel):
    id: str
    title: str
    description: str
    preset_questions: list[str]
    claims: list[str] = Field(description="one-sentence claims the scenario offers to evaluate as findings")
    key_facts: list[KeyFact]
    topic_labels: dict[str, LanguageLabels]


class StoredAnswer(Interrogation):
    """A role's newest answer as kept with the case."""

    asked_at: Timestamp


class RoleAnswers(ResponseModel):
    detective: Absent[StoredAnswer] = None
    informant: Absent[StoredAnswer] = None
    suspect: Absent[StoredAnswer] = None


KnowledgeRow = Annotated[dict[str, FactCell], Field(description="fact id → how the role knows it")]


class Knowledge(ResponseModel):
    """The who-knows-what matrix; a role or a fact no answer spoke to is absent."""

    detective: Absent[KnowledgeRow] = None
    informant: Absent[KnowledgeRow] = None
    suspect: Absent[KnowledgeRow] = None


class CaseMode(ResponseModel):
    """How this case's answers are worded, and why (a case in a language the model does not speak stays in
    evidence mode)."""

    mode: ResponderName
    reason: ModeReason


class OperatorSnapshot(ResponseModel):
    case: CaseInfo
    mode: CaseMode
    scenario: ScenarioDetail
    spaces: Spaces
    last_trace: Trace | None
    answers: RoleAnswers
    knowledge: Knowledge


class ScenarioSummary(ResponseModel):
    id: str
    title: str
    language: Language
    description: str


# ----- the case record and subject access ----------------------------------------------------------------


class _RecordEntry(ResponseModel):
    """One interrogation or cross-examination of the case, as the operator sees it. Texts are null once an
    ingredient card was erased (or the case's key is gone)."""

    id: int = Field(description="ascending in the order the record was written")
    roles: list[Role]
    audience: Readership
    sealed: bool
    question: str | None
    provenance: list[Provenance]
    erased_ingredients: list[str] = Field(description="ids of cards this entry used that were erased since")
    created_at: Timestamp


class InterrogationEntry(_RecordEntry):
    kind: Literal[RecordKind.INTERROGATION]
    answer: str | None
    certainty: Certainty
    trace: Trace


class CrossExaminationEntry(_RecordEntry):
    kind: Literal[RecordKind.CROSS_EXAMINATION]
    results: list[RoleResult]
    conclusion: Conclusion


RecordEntry = Annotated[InterrogationEntry | CrossExaminationEntry, Field(discriminator="kind")]


class CaseRecordView(ResponseModel):
    """The whole record, oldest first: what the JSON export holds."""

    case_id: str
    entries: list[RecordEntry]


RECORD_NEXT = "pass as `after` for the next (older) page; null on the last page"


class CaseRecordPage(ResponseModel):
    """One page of the record, newest first (as the timeline shows it)."""

    case_id: str
    entries: list[RecordEntry]
    next: int | None = Field(description=RECORD_NEXT)
    total: int = Field(description="entries in the whole record now (the timeline numbers its rows from it)")


class HeldCard(ResponseModel):
    card_id: str
    content: str
    memory_type: MemoryType
    topic: str
    created_by: CreatedBy
    created_at: Timestamp
    audience: Readership


class HeldSpaces(ResponseModel):
    detective: list[HeldCard]
    informant: list[HeldCard]
    suspect: list[HeldCard]
    bulletin_board: list[HeldCard]


class BoardCopy(ResponseModel):
    card_id: str
    source: CardSource
    source_present: bool


class Ingredient(Provenance):
    present: bool


class DerivedArtifact(ResponseModel):
    """A session record (no ingredients) or a record entry with the cards it was derived from."""

    kind: Literal["session_record"] | RecordKind
    audience: Readership
    ingredients: list[Ingredient]
    card_id: Absent[str] = None
    space: Absent[Space] = None
    record_id: Absent[int] = None
    roles: Absent[list[Role]] = None
    sealed: Absent[bool] = None
    erased_ingredients: Absent[list[str]] = None


class SubjectAccess(ResponseModel):
    case_id: str
    spaces: HeldSpaces
    board_copies: list[BoardCopy]
    derived: list[DerivedArtifact]


# ----- the memory-policy audit trail ---------------------------------------------------------------------


class PolicyDecisionView(ResponseModel):
    """One row of the policy audit trail: reason codes and counts, never memory content."""

    id: int
    created_at: Timestamp
    action: PolicyAction
    code: PolicyCode
    detail: str
    memory_type: MemoryType | None = Field(description="null: the record had no type this server knows")
    creator: CreatedBy | None = Field(description="null: the record named no creator this server knows")
    space: Space | None = Field(description="null: not a space of the case")
    count: int
