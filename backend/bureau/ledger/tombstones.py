"""The tombstone an erased card leaves in its publication row (see docs/publish-saga.md): written in the
erasure's transaction, it is what a publish racing the erasure collides with."""

from __future__ import annotations

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from bureau.ledger.models import PublicationRow
from bureau.ledger.transactions import utcnow
from bureau.scope.vocabulary import PublicationState


def the_row(case_id: str, source_card_id: str) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    """The one publication row of a source card (the unique key)."""
    return PublicationRow.case_id == case_id, PublicationRow.source_card_id == source_card_id


def entomb_publication(session: Session, case_id: str, card_id: str, role: str) -> str | None:
    """Turn the card's publication row into a tombstone, or insert one. Returns the board copy the row
    named, which the erasure must delete too. A row that was `pending` keeps its owner and lease: that
    attempt may still write a copy, and the maintenance loop sweeps the board for it once the lease is over
    (`Publisher.roll_back_abandoned`). Runs inside the erasure's case change, which holds the case row
    (`FOR UPDATE` on PostgreSQL, the one writer on SQLite); a reservation takes a key-share lock on that row
    before its INSERT, so the two never overlap: the erasure sees a committed reservation, or the reservation
    collides with the tombstone."""
    now = utcnow()
    row = session.scalar(select(PublicationRow).where(*the_row(case_id, card_id)).with_for_update())
    if row is None:
        session.add(
            PublicationRow(
                case_id=case_id,
                source_card_id=card_id,
                role=role,
                state=PublicationState.ERASED,
                owner="",
                lease_expires_at=now,
                public_card_id=None,
                created_at=now,
                updated_at=now,
            )
        )
        session.flush()
        return None
    if row.state == PublicationState.ERASED:
        return None  # erased before (a repeated delete): an attempt it caught in flight is still to be swept
    named = row.public_card_id
    if row.state == PublicationState.READY:
        row.owner, row.lease_expires_at = "", now  # nothing in flight: nothing left to sweep
    row.state, row.public_card_id, row.updated_at = PublicationState.ERASED, None, now
    session.flush()
    return named
