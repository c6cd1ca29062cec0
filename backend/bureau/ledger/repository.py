"""The ledger's repositories, one per aggregate, built together over one engine and one transaction runner.

Each aggregate lives in its own module: `cases` (cases, case changes, sealing keys, erasing), `record` (the case
record), `case_knowledge` (the snapshot's maintained matrix and latest answers, beneath `cases`), `events` (the
outbox), `publications` and `findings` (the Sagas, whose completions are case changes), `cleanups`, `sessions`,
`limits`, `slots`, `policy_audit` (the memory-policy audit trail, maintenance leases), `vault_binding` and
`resealing`. A state change and the event that records it commit in one transaction; a command that changes
several aggregates does so in one transaction of `CaseRepository.apply_change`. `Ledger` only groups them for
the composition root (bootstrap), which hands each part of the program the repositories it uses.
"""

from __future__ import annotations

from sqlalchemy import Engine

from bureau.ledger.case_knowledge import AnswerStep, KnowledgeRepository, KnowledgeState, LatestAnswer, StepOf
from bureau.ledger.cases import ACTIVE, ERASING, LOADING, CaseRecord, CaseRepository, CaseView
from bureau.ledger.cleanups import CleanupIntent, CleanupRepository, CleanupTask
from bureau.ledger.event_records import EventRecord, PendingEvent
from bureau.ledger.events import EVENT_APPEND_LOCK, EventRepository
from bureau.ledger.finding_rows import FindingFigures, FindingRecord
from bureau.ledger.findings import FindingRepository
from bureau.ledger.limits import LimitRepository
from bureau.ledger.policy_audit import PolicyAuditRepository, PolicyDecision, PolicyDecisionRecord
from bureau.ledger.publications import PublicationRecord, PublicationRepository
from bureau.ledger.record import RecordEntry, RecordRepository
from bureau.ledger.resealing import ResealRepository
from bureau.ledger.sessions import SessionRecord, SessionRepository
from bureau.ledger.slots import SLOT_COUNT, SlotRepository
from bureau.ledger.transactions import (
    CaseMissingError,
    GenerationMovedError,
    LedgerConflictError,
    LedgerError,
    TransactionRunner,
    VersionMismatchError,
    utcnow,
)
from bureau.ledger.vault_binding import VaultBindingRepository

__all__ = [
    "ACTIVE",
    "ERASING",
    "EVENT_APPEND_LOCK",
    "LOADING",
    "SLOT_COUNT",
    "AnswerStep",
    "CaseMissingError",
    "CaseRecord",
    "CaseRepository",
    "CaseView",
    "CleanupIntent",
    "CleanupRepository",
    "CleanupTask",
    "EventRecord",
    "EventRepository",
    "FindingFigures",
    "FindingRecord",
    "FindingRepository",
    "GenerationMovedError",
    "KnowledgeRepository",
    "KnowledgeState",
    "LatestAnswer",
    "Ledger",
    "LedgerConflictError",
    "LedgerError",
    "LimitRepository",
    "PendingEvent",
    "PolicyAuditRepository",
    "PolicyDecision",
    "PolicyDecisionRecord",
    "PublicationRecord",
    "PublicationRepository",
    "RecordEntry",
    "RecordRepository",
    "ResealRepository",
    "SessionRecord",
    "SessionRepository",
    "SlotRepository",
    "StepOf",
    "TransactionRunner",
    "VaultBindingRepository",
    "VersionMismatchError",
    "utcnow",
]


class Ledger:
    """The repositories of one ledger over one runner, built once by the composition root. No methods of its
    own: every statement is a repository's."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.runner = runner = TransactionRunner(engine)
        self.knowledge = KnowledgeRepository(runner)
        self.cases = CaseRepository(runner, self.knowledge)
        self.record = RecordRepository(runner)
        self.publications = PublicationRepository(runner, self.cases)
        self.findings = FindingRepository(runner, self.cases)
        self.events = EventRepository(runner)
        self.cleanups = CleanupRepository(runner)
        self.sessions = SessionRepository(runner)
        self.limits = LimitRepository(runner)
        self.slots = SlotRepository(runner)
        self.policy_audit = PolicyAuditRepository(runner)
        self.vault_binding = VaultBindingRepository(runner)
        self.resealing = ResealRepository(runner)
