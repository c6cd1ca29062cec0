"""The lease a Saga row is held by (a publication, a finding): one owner at a time, reclaimable once it runs
out. The statements both Sagas run on their `owner` / `lease_expires_at` columns, written once."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, update
from sqlalchemy.orm import Session

from bureau.ledger.models import CaseRow, FindingRow, PublicationRow
from bureau.ledger.transactions import CaseMissingError, affected, utcnow
from bureau.scope.vocabulary import CaseStatus

LeasedRow = type[FindingRow] | type[PublicationRow]
PENDING = "pending"  # the state a leased row is in while its owner works (`FindingState` / `PublicationState`)


class LostLeaseError(Exception):
    """The row is no longer ours: another owner took it over, or it was released or erased."""


def lock_active_case(session: Session, case_id: str) -> CaseRow:
    """Before a Saga inserts its row: the lock the INSERT's foreign key would take on the case row, taken first
    (PostgreSQL). An erasure holding the case row makes us wait here, before our key is in the unique index
    (not after it, with the erasure's tombstone INSERT waiting on that key: a deadlock); afterwards we collide
    with its tombstone. SQLite ignores it (one writer at a time). A case not active is missing."""
    case = session.get(CaseRow, case_id, with_for_update={"key_share": True})
    if case is None or case.status != CaseStatus.ACTIVE:
        raise CaseMissingError(case_id)
    return case


def lease_until(now: datetime, lease_s: float) -> datetime:
    return now + timedelta(seconds=lease_s)


def lease_ran_out(table: LeasedRow, older_than_s: float = 0.0) -> ColumnElement[bool]:
    """The row's lease ran out (more than `older_than_s` ago)."""
    return table.lease_expires_at <= utcnow() - timedelta(seconds=older_than_s)


def take_over_expired(
    session: Session, table: LeasedRow, *row: ColumnElement[bool], owner: str, lease_s: float
) -> bool:
    """Claim a pending row whose lease ran out (its owner crashed or stalled); False if it is not one."""
    now = utcnow()
    stmt = (
        update(table)
        .where(*row, table.state == PENDING, table.lease_expires_at <= now)
        .values(owner=owner, lease_expires_at=lease_until(now, lease_s), updated_at=now)
    )
    return affected(session.execute(stmt)) == 1
