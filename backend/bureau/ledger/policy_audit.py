"""The audit trail of memory-policy decisions (accepted and rejected writes, filtered reads, retention
purges) and named maintenance leases. Reason codes and counts only: no memory content is ever stored here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session

from bureau.ledger.models import CaseRow, MaintenanceLeaseRow, PolicyDecisionRow, table
from bureau.ledger.transactions import LedgerConflictError, Repository, affected, aware, utcnow
from bureau.scope.vocabulary import PolicyAction, PolicyCode

INSERT_DECISION = insert(table(PolicyDecisionRow))


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """One decision (or `count` alike ones) as the audit trail keeps it: no content, by construction."""

    action: PolicyAction
    code: PolicyCode
    # As the record says them, not enums: a read may filter a record whose type or creator this code does not
    # know (kept as stored), and a foreign record's are not shown at all (empty).
    memory_type: str
    creator: str
    space: str
    count: int = 1
    detail: str = ""  # reason codes only (e.g. "phone_number,prompt_injection"), never text


@dataclass(frozen=True, slots=True)
class PolicyDecisionRecord:
    id: int
    case_id: str
    decision: PolicyDecision
    created_at: datetime


def append_decisions(session: Session, case_id: str, decisions: Sequence[PolicyDecision], now: datetime) -> None:
    """Inside a caller's transaction: a command's accepted writes are audited in the commit that keeps them (one
    INSERT for all of them, no ORM objects)."""
    if not decisions:
        return
    session.execute(
        INSERT_DECISION,
        [
            {
                "case_id": case_id,
                "action": d.action,
                "code": d.code,
                "detail": d.detail[:120],
                "memory_type": d.memory_type,
                "creator": d.creator,
                "space": d.space,
                "count": d.count,
                "created_at": now,
            }
            for d in decisions
        ],
    )


class PolicyAuditRepository(Repository):
    async def record_policy(self, case_id: str, decisions: Sequence[PolicyDecision]) -> int:
        """Append decisions for a case that exists (a rejected write to an unknown case has nobody to
        audit it for). Returns how many rows were written."""
        if not decisions:
            return 0

        def work(session: Session) -> int:
            if session.get(CaseRow, case_id) is None:
                return 0
            append_decisions(session, case_id, decisions, utcnow())
            return len(decisions)

        return await self.runner.run(work)

    async def policy_decisions(self, case_id: str, after_id: int = 0, limit: int = 100) -> list[PolicyDecisionRecord]:
        """One page of a case's decisions in order; page on with the last id (no silent limit)."""

        def work(session: Session) -> list[PolicyDecisionRecord]:
            rows = session.scalars(
                select(PolicyDecisionRow)
                .where(PolicyDecisionRow.case_id == case_id, PolicyDecisionRow.id > after_id)
                .order_by(PolicyDecisionRow.id)
                .limit(limit)
            )
            return [
                PolicyDecisionRecord(
                    r.id,
                    r.case_id,
                    PolicyDecision(
                        PolicyAction(r.action), PolicyCode(r.code), r.memory_type, r.creator, r.space, r.count, r.detail
                    ),
                    aware(r.created_at),
                )
                for r in rows
            ]

        return await self.runner.read(work)

    # ----- maintenance leases ----------------------------------------------------------------------------

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> bool:
        """Take (or renew) the named lease unless another owner holds a live one. Safe across processes:
        a conditional UPDATE, or an INSERT whose unique-key conflict means someone else won."""

        def work(session: Session) -> bool:
            now = utcnow()
            expires = now + timedelta(seconds=ttl_s)
            taken = affected(
                session.execute(
                    update(MaintenanceLeaseRow)
                    .where(
                        MaintenanceLeaseRow.name == name,
                        (MaintenanceLeaseRow.owner == owner) | (MaintenanceLeaseRow.expires_at <= now),
                    )
                    .values(owner=owner, expires_at=expires)
                )
            )
            if taken:
                return True
            if session.get(MaintenanceLeaseRow, name) is not None:
                return False  # held, live, by someone else
            session.add(MaintenanceLeaseRow(name=name, owner=owner, expires_at=expires))
            session.flush()
            return True

        try:
            return await self.runner.run(work)
        except LedgerConflictError:
            return False  # another process inserted it first

    async def release_lease(self, name: str, owner: str) -> None:
        def work(session: Session) -> None:
            session.execute(
                update(MaintenanceLeaseRow)
                .where(MaintenanceLeaseRow.name == name, MaintenanceLeaseRow.owner == owner)
                .values(expires_at=utcnow())
            )

        await self.runner.run(work)
