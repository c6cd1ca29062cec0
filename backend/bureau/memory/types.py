"""Plain data returned by the memory gateway, so no layer above it sees PowerMem types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from bureau.scope.memory_policy import RecordFacts, WritePath, may_be_evidence
from bureau.scope.vocabulary import CreatedBy, MemoryType, PolicyCode, Trust


@dataclass(frozen=True, slots=True)
class FindingMark:
    """What a finding's board card holds besides its text: its id (so a crashed promotion finds the card
    again), the support figures, the scope and the review date. Never a card id, a role or a source."""

    finding_id: str
    support: int
    leave_one_out: int
    contradictions: int
    review_at: str  # ISO date
    scope: str = "bulletin_board"

    def as_metadata(self) -> dict[str, object]:
        return {
            "finding_id": self.finding_id,
            "support": self.support,
            "leave_one_out": self.leave_one_out,
            "contradictions": self.contradictions,
            "review_at": self.review_at,
            "scope": self.scope,
        }

    @classmethod
    def from_metadata(cls, value: object) -> FindingMark | None:
        if not isinstance(value, Mapping):
            return None
        try:
            return cls(
                str(value["finding_id"]),
                int(value["support"]),
                int(value["leave_one_out"]),
                int(value["contradictions"]),
                str(value["review_at"]),
                str(value.get("scope", "bulletin_board")),
            )
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class CardDraft:
    """What the game asks the gateway to store. Scope comes separately, from the server."""

    content: str
    topic: str
    kind: str
    memory_type: MemoryType = MemoryType.LONG_TERM_KNOWLEDGE
    trust: str = Trust.MEDIUM  # how credible the content is; the creator's trust level is `created_by`
    created_by: CreatedBy = CreatedBy.OPERATOR
    path: WritePath = WritePath.ORDINARY
    key: str | None = None  # user_preference only: the allow-listed preference key
    expires_at: datetime | None = None  # None: the type's configured retention decides
    source_role: str | None = None
    source_card_id: str | None = None
    # The text whose sentence vector indexes the card; None: its content. A session record is indexed by the
    # question it records, whose vector the search has just computed. Never for a card that may be evidence:
    # its retrieval score must be its own content's.
    index_text: str | None = None
    # Who told it (a whisper's optional `source`, a scenario card's declared one): sealed like the text.
    told_by: str | None = None
    finding: FindingMark | None = None  # a finding's board card only

    def __post_init__(self) -> None:
        if self.index_text is not None and may_be_evidence(self.memory_type):
            raise ValueError("a card that may be evidence is indexed by its own content")

    @property
    def indexed_by(self) -> str:
        return self.index_text or self.content


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
    key: str | None = None
    owner: str = ""  # the composite key stored with the record (checked against the scope on every read)
    generation: str = ""  # the case's generation it was written in (scope/keys.py: MemoryScope)
    item: str = ""  # the vault item whose key opens its text (its named source: `<item>.source`)
    told_by: str | None = None  # the named source, if any (private to the operator)
    finding: FindingMark | None = None  # set on a finding's board card

    @property
    def is_derived(self) -> bool:
        """Recorded from the conversation itself (a session or task-state record), not told to the role."""
        return not may_be_evidence(self.memory_type)

    @property
    def may_be_evidence(self) -> bool:
        return may_be_evidence(self.memory_type)

    @property
    def facts(self) -> RecordFacts:
        return RecordFacts(self.memory_type, self.created_by, self.content, self.expires_at)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A search result: the card, its cosine similarity to the query (-1..1) and its relevance signals
    (`memory/relevance/`; `cosine` is always among them once the gateway has scored the candidate)."""

    card: StoredCard
    score: float
    signals: Mapping[str, float] = field(default_factory=dict)
    # What the question asked that the card does not cover (memory/relevance/coverage.py): question words, and attribute
    # kinds as `kind:<kind>`. Question text: for the answer and the sealed record, never a content-free summary.
    gaps: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Excluded:
    """A search hit the read policy kept out of evidence, with its reason. `card` is None for a record
    outside the requested scope: nothing of it (not even its id) leaves the gateway."""

    card: StoredCard | None
    space: str
    score: float
    reason: PolicyCode


@dataclass(frozen=True, slots=True)
class Locked:
    """A row another compartment's statement handed back (the presenter act's, or a filter bug's) that no key
    in the request opens: only the space its row names and its score in the asked space's basis."""

    space: str
    score: float


@dataclass(slots=True)
class Retrieval:
    candidates: list[Candidate] = field(default_factory=list)
    excluded: list[Excluded] = field(default_factory=list)
    locked: list[Locked] = field(default_factory=list)  # rows of other compartments, never opened


@dataclass(frozen=True, slots=True)
class RowFacts:
    """What a stored row says without opening it: ids and metadata, for work that reads no text (deletes, the
    retention, a reset's old generation, a board copy found by its source)."""

    id: str
    space: str
    item: str
    generation: str
    memory_type: str
    created_by: str
    created_at: datetime
    expires_at: datetime | None = None
    source_card_id: str | None = None
    finding_id: str | None = None

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


class MemoryUnavailableError(RuntimeError):
    """The store could not answer. Mapped to 503 MEMORY_UNAVAILABLE; never carries user text."""


class CaseErasedError(RuntimeError):
    """The case has no keys any more: it was erased (or its erase has begun) while a command was in flight.
    Nothing was written. Not a store fault: the store is fine, the case is gone (404 CASE_NOT_FOUND)."""


class WorkerIdLostError(MemoryUnavailableError):
    """This process lost its Snowflake worker id: a new card could overwrite another process's card.
    Mapped to 503 WORKER_ID_LOST; the process stays fenced (no store writes) until it is restarted."""


class StoreDiskTooSmallError(RuntimeError):
    """A new embedded seekdb store cannot be created on this filesystem (it reserves 2 GiB for its redo log);
    raised at start-up, before seekdb is started, instead of the hang that follows its failed bootstrap."""
