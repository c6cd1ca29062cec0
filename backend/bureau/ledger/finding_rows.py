"""The findings mapping inside a transaction (docs/findings.md): records, the keyed pseudonyms, and
`withdraw_unsupported`, which an erasure, a reset or the findings ledger runs in its own transaction. No
aggregate class here, so `cases` can call it without importing the findings ledger."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from bureau.ledger.event_records import PendingEvent
from bureau.ledger.models import FindingRow, FindingSupportRow
from bureau.ledger.record import redact_card
from bureau.ledger.transactions import aware, utcnow
from bureau.scope.keys import RECORD
from bureau.scope.support import Contribution, leave_one_out, qualifies, support
from bureau.scope.vocabulary import EventType, FindingState
from bureau.vault.grants import Grant
from bureau.vault.items import item_of


def normalised_claim(claim: str) -> str:
    return " ".join(claim.casefold().split())


@dataclass(frozen=True, slots=True)
class FindingFigures:
    support: int
    leave_one_out: int
    min_support: int
    contradictions: int
    trust: str
    review_at: datetime


@dataclass(frozen=True, slots=True)
class FindingRecord:
    id: str
    case_id: str
    state: str
    owner: str
    lease_expires_at: datetime
    public_card_id: str | None
    claim: str  # "" once withdrawn, or without a grant that reads the record
    figures: FindingFigures
    promoted_at: datetime | None
    withdrawn_at: datetime | None
    created_at: datetime

    def lease_live(self) -> bool:
        return self.lease_expires_at > utcnow()


def opened_claims(grant: Grant | None, rows: Sequence[FindingRow]) -> list[str]:
    """The claims of some findings, opened through `grant` (their keys in one vault statement)."""
    if grant is None or not grant.shape.record:
        return ["" for _ in rows]
    grant.load({RECORD: [item for row in rows if row.claim and (item := item_of(row.claim))]})
    claims = []
    for row in rows:
        plain = grant.open(RECORD, row.claim) if row.claim else None
        try:
            claims.append(str(json.loads(plain)) if plain else "")
        except ValueError:
            claims.append("")
    return claims


def records(rows: Sequence[FindingRow], grant: Grant | None) -> list[FindingRecord]:
    return [_record(row, claim) for row, claim in zip(rows, opened_claims(grant, rows), strict=True)]


def _record(row: FindingRow, claim: str) -> FindingRecord:
    return FindingRecord(
        row.id,
        row.case_id,
        row.state,
        row.owner,
        aware(row.lease_expires_at),
        row.public_card_id,
        claim,
        FindingFigures(
            row.support, row.leave_one_out, row.min_support, row.contradictions, row.trust, aware(row.review_at)
        ),
        aware(row.promoted_at) if row.promoted_at else None,
        aware(row.withdrawn_at) if row.withdrawn_at else None,
        aware(row.created_at),
    )


def _mapping(session: Session, finding_id: str) -> list[Contribution]:
    rows = session.scalars(select(FindingSupportRow).where(FindingSupportRow.finding_id == finding_id))
    return [Contribution(r.card, r.role, r.source) for r in rows]


def withdraw_unsupported(
    session: Session, case_id: str, removed_card_ids: Sequence[str], grant: Grant, dropped: list[str] | None = None
) -> list[FindingRecord]:
    """Inside an erasure's transaction: drop the removed cards from every finding's mapping and re-run
    leave-one-out on what is left. A finding that no longer qualifies under the rule it was promoted by is
    withdrawn (its row becomes a tombstone, its mapping goes, entries that quoted its board card lose their
    text). Returns the withdrawn findings (the caller deletes their board cards and sends the events); the
    items of the texts dropped go into `dropped` (their keys are destroyed after the commit). The pseudonyms
    come from `grant` (its purpose key opens no text)."""
    if not removed_card_ids:
        return []
    pseudonyms = [grant.pseudonym("card", card_id) for card_id in removed_card_ids]
    hit = select(FindingSupportRow.finding_id).where(
        FindingSupportRow.case_id == case_id, FindingSupportRow.card.in_(pseudonyms)
    )
    finding_ids = sorted(set(session.scalars(hit)))
    if not finding_ids:
        return []
    session.execute(
        delete(FindingSupportRow).where(FindingSupportRow.case_id == case_id, FindingSupportRow.card.in_(pseudonyms))
    )
    withdrawn: list[FindingRecord] = []
    now = utcnow()
    for finding_id in finding_ids:
        row = session.get(FindingRow, finding_id, with_for_update=True)
        if row is None or row.state == FindingState.WITHDRAWN:
            continue
        left = _mapping(session, finding_id)
        if qualifies(left, row.min_support):
            row.support, row.leave_one_out, row.updated_at = support(left), leave_one_out(left), now
            continue
        withdrawn.append(_withdraw(session, row, now, dropped if dropped is not None else []))
    session.flush()
    return withdrawn


def _withdraw(session: Session, row: FindingRow, now: datetime, dropped: list[str]) -> FindingRecord:
    before = _record(row, "")  # content-free: what the events and the caller need
    if row.public_card_id:
        dropped += redact_card(session, row.case_id, row.public_card_id)[1]
    if row.claim_item:
        dropped.append(row.claim_item)
    session.execute(delete(FindingSupportRow).where(FindingSupportRow.finding_id == row.id))
    row.state, row.slot, row.claim, row.claim_item = FindingState.WITHDRAWN, None, "", None
    row.withdrawn_at = row.updated_at = now
    return before


def withdrawn_events(withdrawn: Sequence[FindingRecord]) -> list[PendingEvent]:
    """Content-free: the finding and its board card, never a contributor."""
    return [
        PendingEvent(EventType.FINDING_WITHDRAWN, {"finding_id": f.id, "public_card_id": f.public_card_id})
        for f in withdrawn
    ]


def forget_findings(session: Session, case_id: str) -> None:
    """A reset or an erase: every finding of the case and its mapping go (their board cards go with the
    case's cards, their claims' keys with the generation's record key)."""
    session.execute(delete(FindingSupportRow).where(FindingSupportRow.case_id == case_id))
    session.execute(delete(FindingRow).where(FindingRow.case_id == case_id))
