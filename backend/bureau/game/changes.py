"""What a command hands back to be committed: the step that did the work returns it, and the service that runs
the command commits it (so no step reaches back into its caller)."""

from __future__ import annotations

from dataclasses import dataclass, field

from bureau.ledger.event_records import PendingEvent
from bureau.ledger.policy_audit import PolicyDecision
from bureau.ledger.record import RecordDraft
from bureau.memory.types import StoredCard


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One command's commit, all or nothing: the cards it wrote (undone if the commit fails), its events, its
    case-record entry and policy decisions, in the generation it began in."""

    events: list[PendingEvent]
    generation: str
    expected_version: int | None = None
    written: list[StoredCard] = field(default_factory=list)
    record: RecordDraft | None = None
    decisions: list[PolicyDecision] = field(default_factory=list)
