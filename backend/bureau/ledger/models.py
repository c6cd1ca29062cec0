"""Ledger tables. Only the ledger package imports these models."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    type_annotation_map: ClassVar = {dict[str, Any]: JSON, datetime: DateTime(timezone=True)}


def table(model: type[Base]) -> Table:
    """A model's table, for Core statements: the reads and writes every request makes select and insert
    columns, without ORM objects (ledger/transactions.py: `_read_rows`)."""
    return cast(Table, model.__table__)


class CaseRow(Base):
    __tablename__ = "cases"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    scenario_id: Mapped[str] = mapped_column(String(64))
    language: Mapped[str] = mapped_column(String(8))
    status: Mapped[str] = mapped_column(String(16))  # loading | active
    version: Mapped[int] = mapped_column(Integer, default=1)
    # True once the snapshot's maintained state (case_knowledge, case_latest_answers) covers the whole record:
    # a new case from its start; a case older than that state is folded once, on its first snapshot read.
    knowledge_folded: Mapped[bool] = mapped_column(Boolean, default=True, server_default=false())
    # How many entries the case record holds, kept with each append and reset: a page of the record says it
    # without counting them.
    record_entries: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The case's generation: a token every reset replaces, in the same commit. Every card carries the one it was
    # written in; a command commits only if the generation it began in is still the case's, and reads admit
    # only the case's own, so a reset is one atomic step against every concurrent command (docs/faults.md).
    generation: Mapped[str] = mapped_column(String(32), default="", server_default="")
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class EventRow(Base):
    """The outbox: one row per state change, ordered per deployment by its integer id."""

    __tablename__ = "events"
    # Ids must never be reused after an erase, or a resuming stream would skip or repeat events.
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    case_id: Mapped[str] = mapped_column(String(64), index=True)
    type: Mapped[str] = mapped_column(String(48))
    payload: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]


class PublicationRow(Base):
    """Publish Saga ledger: at most one row per (case, source card). An erased card keeps its row as a
    tombstone (state `erased`) until its case is reset or erased, so no publish can reserve it again."""

    __tablename__ = "publications"
    __table_args__ = (
        UniqueConstraint("case_id", "source_card_id", name="uq_publication_source"),
        Index("ix_publications_state_lease", "state", "lease_expires_at"),  # the maintenance loop's sweep
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    case_id: Mapped[str] = mapped_column(String(64), ForeignKey("cases.id", ondelete="CASCADE"), index=True)
    source_card_id: Mapped[str] = mapped_column(String(32))
    role: Mapped[str] = mapped_column(String(16))
    state: Mapped[str] = mapped_column(String(16))  # pending | ready | erased
    owner: Mapped[str] = mapped_column(String(64))  # a tombstone: the attempt in flight at the erasure, or ""
    lease_expires_at: Mapped[datetime]
    public_card_id: Mapped[str | None] = mapped_column(String(32), default=None)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class RecordEntryRow(Base):
    """The case record: every interrogation and cross-examination of a case, in order. `summary` is
    content-free (card ids, spaces, scores, certainty); `body` (question, answers, conclusion) is sealed under
    a key of its own (`body_item`, in the vault), so destroying that key leaves only ciphertext wherever a
    copy of the row survives."""

    __tablename__ = "case_record"
    __table_args__ = (
        Index("ix_case_record_case", "case_id", "id"),
        Index("ix_case_record_case_kind", "case_id", "kind", "id"),  # the newest entry of one kind
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    case_id: Mapped[str] = mapped_column(String(64), ForeignKey("cases.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(24))  # interrogation | cross_examination
    roles: Mapped[list[str]] = mapped_column(JSON)
    audience: Mapped[str] = mapped_column(String(48))  # Readers label: public | sealed | detective+suspect
    summary: Mapped[dict[str, Any]]
    body: Mapped[str] = mapped_column(Text)
    body_item: Mapped[str | None] = mapped_column(String(48), default=None)  # None: no body, or sealed before items
    created_at: Mapped[datetime]


class KnowledgeCellRow(Base):
    """One cell of the who-knows-what matrix (role -> fact -> cell), kept as the record grows: the newest
    answer that spoke to the fact set it. Content-free (ids and a cell name)."""

    __tablename__ = "case_knowledge"

    case_id: Mapped[str] = mapped_column(String(64), ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True)
    role: Mapped[str] = mapped_column(String(16), primary_key=True)
    fact_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    cell: Mapped[str] = mapped_column(String(16))  # own_memory | board | conflicting | uncertain | unknown


class LatestAnswerRow(Base):
    """Each role's newest answer as the snapshot shows it. `summary` is content-free (certainty, evidence ids,
    responder, conflicts, the trace); the text is the body of the record entry it points at (`entry_id`),
    opened with that body's own key. `answer` is kept empty (it held a sealed copy before the vault)."""

    __tablename__ = "case_latest_answers"

    case_id: Mapped[str] = mapped_column(String(64), ForeignKey("cases.id", ondelete="CASCADE"), primary_key=True)
    role: Mapped[str] = mapped_column(String(16), primary_key=True)
    entry_id: Mapped[int] = mapped_column(Integer)  # the case_record row it came from
    summary: Mapped[dict[str, Any]]
    answer: Mapped[str] = mapped_column(Text, default="")  # always "": the text is the entry's body
    asked_at: Mapped[datetime]


class CaseKeyRow(Base):
    """An earlier version's one sealing key per case. Read once, when this ledger is first bound to a vault:
    its keys move into the vault and the table is emptied (bootstrap/vault_binding.py). Nothing writes it."""

    __tablename__ = "case_keys"

    case_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[bytes] = mapped_column(LargeBinary(32))
    created_at: Mapped[datetime]


class CleanupTaskRow(Base):
    """A card whose delete failed (a board copy's compensation, an undo, a reset's old generation), or an item
    whose key is still to be destroyed; retried in the background until it is gone."""

    __tablename__ = "cleanup_tasks"
    __table_args__ = (Index("ix_cleanup_due", "done_at", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    case_id: Mapped[str] = mapped_column(String(64))
    space: Mapped[str] = mapped_column(String(16))
    card_id: Mapped[str] = mapped_column(String(32))  # "" when only a key is left to destroy
    reason: Mapped[str] = mapped_column(String(48))
    item: Mapped[str | None] = mapped_column(String(48), default=None)  # a vault item whose key is to be destroyed
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime]
    done_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime]


class SessionRow(Base):
    """Server-side access sessions. Only hashes of the session and CSRF tokens are stored."""

    __tablename__ = "sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    csrf_hash: Mapped[str] = mapped_column(String(64))
    audience: Mapped[str] = mapped_column(String(16))
    # Binds the session to the passcode that opened it: changing a passcode signs its sessions out.
    credential_tag: Mapped[str | None] = mapped_column(String(64), default=None)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)


class ProcessSlotRow(Base):
    """Leases on the 1024 Snowflake (datacenter, worker) slots, one per live process."""

    __tablename__ = "process_slots"

    slot: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    owner: Mapped[str] = mapped_column(String(64))
    heartbeat_at: Mapped[datetime]


class PasscodeFailureRow(Base):
    """A failed sign-in, by a hash of the throttle key (the client address is never stored)."""

    __tablename__ = "passcode_failures"
    __table_args__ = (Index("ix_passcode_failures_key", "key_hash", "failed_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key_hash: Mapped[str] = mapped_column(String(64))
    failed_at: Mapped[datetime]


class StreamSlotRow(Base):
    """One live event stream of a session, leased by the instance serving it (expires if it dies)."""

    __tablename__ = "stream_slots"

    session_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    slot: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    owner: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime]


class UsageCounterRow(Base):
    """A deployment-wide counter, e.g. model requests spent against BUREAU_LLM_REQUEST_BUDGET."""

    __tablename__ = "usage_counters"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    used: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime]


class PolicyDecisionRow(Base):
    """The audit trail of memory-policy decisions: reason codes, types, creators and counts. Never content,
    never a card id from another scope. Goes with its case (erase)."""

    __tablename__ = "policy_decisions"
    __table_args__ = (Index("ix_policy_decisions_case", "case_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    case_id: Mapped[str] = mapped_column(String(64), ForeignKey("cases.id", ondelete="CASCADE"))
    action: Mapped[str] = mapped_column(String(24))  # write_accepted | write_rejected | read_filtered | …
    code: Mapped[str] = mapped_column(String(48))  # the rule's reason code, or "ok"
    detail: Mapped[str] = mapped_column(String(120), default="")  # e.g. the screening's reason codes
    memory_type: Mapped[str] = mapped_column(String(32))
    creator: Mapped[str] = mapped_column(String(16))
    space: Mapped[str] = mapped_column(String(16))
    count: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime]


class MaintenanceLeaseRow(Base):
    """A named lease, so one background job (the retention sweeper) runs in one process at a time."""

    __tablename__ = "maintenance_leases"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime]


class FindingRow(Base):
    """A finding (docs/findings.md): the Saga row of its board card, its support figures and its claim, sealed
    under the case key. `slot` is the claim's keyed pseudonym while the finding is pending or ready (unique per
    case: the same claim promoted twice is one card) and NULL once it is withdrawn; `claim_hash` stays, so a
    card written after the claim was on the board is still recognised as an echo."""

    __tablename__ = "findings"
    __table_args__ = (
        UniqueConstraint("case_id", "slot", name="uq_finding_slot"),
        Index("ix_findings_case", "case_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    case_id: Mapped[str] = mapped_column(String(64), ForeignKey("cases.id", ondelete="CASCADE"))
    claim_hash: Mapped[str] = mapped_column(String(64))
    slot: Mapped[str | None] = mapped_column(String(64), default=None)
    state: Mapped[str] = mapped_column(String(16))  # pending | ready | withdrawn
    owner: Mapped[str] = mapped_column(String(64))
    lease_expires_at: Mapped[datetime]
    public_card_id: Mapped[str | None] = mapped_column(String(32), default=None)
    claim: Mapped[str] = mapped_column(Text)  # sealed under its own key (`claim_item`); "" once withdrawn
    claim_item: Mapped[str | None] = mapped_column(String(48), default=None)
    support: Mapped[int] = mapped_column(Integer)
    leave_one_out: Mapped[int] = mapped_column(Integer)
    min_support: Mapped[int] = mapped_column(Integer)  # the rule it was promoted under
    contradictions: Mapped[int] = mapped_column(Integer)
    trust: Mapped[str] = mapped_column(String(16))
    review_at: Mapped[datetime]
    promoted_at: Mapped[datetime | None] = mapped_column(default=None)
    withdrawn_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class FindingSupportRow(Base):
    """Which cards support which finding: keyed pseudonyms of the card id, the role and the source, never the
    values. Read only by erasure (a deletion, a reset, an erase re-runs leave-one-out from these rows)."""

    __tablename__ = "finding_support"
    __table_args__ = (Index("ix_finding_support_case_card", "case_id", "card"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    finding_id: Mapped[str] = mapped_column(String(32), ForeignKey("findings.id", ondelete="CASCADE"), index=True)
    case_id: Mapped[str] = mapped_column(String(64))
    card: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(64))


class LedgerMetaRow(Base):
    """Facts about the ledger itself: `vault_id`, the vault that holds its keys (stamped once)."""

    __tablename__ = "ledger_meta"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
