"""The ledger facade: one object over the aggregates, so callers keep one handle (`Ledger`).

Each aggregate lives in its own module over the shared `TransactionRunner`: `cases` (cases, case changes,
sealing keys, erasing), `record` (the case record), `case_knowledge` (the snapshot's maintained matrix and
latest answers, beneath `cases`), `events` (the outbox), `publications` (the Saga),
`cleanups`, `sessions`, `slots`, `policy_audit` (the memory-policy audit trail, maintenance leases).
State changes and the event that records them commit in one transaction.
"""

from __future__ import annotations

from bureau.ledger.case_knowledge import AnswerStep, KnowledgeState, LatestAnswer, StepOf
from bureau.ledger.cases import ACTIVE, ERASING, LOADING, CaseLedger, CaseRecord, CaseView
from bureau.ledger.cleanups import CleanupIntent, CleanupLedger, CleanupTask
from bureau.ledger.event_records import EventRecord, PendingEvent
from bureau.ledger.events import EVENT_APPEND_LOCK, EventLedger
from bureau.ledger.finding_rows import FindingFigures, FindingRecord
from bureau.ledger.findings import FindingLedger
from bureau.ledger.limits import LimitLedger
from bureau.ledger.policy_audit import PolicyAuditLedger, PolicyDecision, PolicyDecisionRecord
from bureau.ledger.publications import PublicationLedger, PublicationRecord
from bureau.ledger.record import RecordEntry, RecordLedger
from bureau.ledger.resealing import ResealLedger
from bureau.ledger.sessions import SessionLedger, SessionRecord
from bureau.ledger.slots import SLOT_COUNT, SlotLedger
from bureau.ledger.transactions import (
    CaseMissingError,
    GenerationMovedError,
    LedgerConflictError,
    LedgerError,
    VersionMismatchError,
    utcnow,
)
from bureau.ledger.vault_binding import VaultBindingLedger

__all__ = [
    "ACTIVE",
    "ERASING",
    "EVENT_APPEND_LOCK",
    "LOADING",
    "SLOT_COUNT",
    "AnswerStep",
    "CaseMissingError",
    "CaseRecord",
    "CaseView",
    "CleanupIntent",
    "CleanupTask",
    "EventRecord",
    "FindingFigures",
    "FindingRecord",
    "GenerationMovedError",
    "KnowledgeState",
    "LatestAnswer",
    "Ledger",
    "LedgerConflictError",
    "LedgerError",
    "PendingEvent",
    "PolicyDecision",
    "PolicyDecisionRecord",
    "PublicationRecord",
    "RecordEntry",
    "SessionRecord",
    "StepOf",
    "VersionMismatchError",
    "utcnow",
]


class Ledger(
    FindingLedger,
    PublicationLedger,
    EventLedger,
    CleanupLedger,
    SessionLedger,
    SlotLedger,
    RecordLedger,
    PolicyAuditLedger,
    CaseLedger,
    LimitLedger,
    VaultBindingLedger,
    ResealLedger,
):
    """Every aggregate of the ledger over one engine and one transaction runner."""
