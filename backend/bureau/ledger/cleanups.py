"""Cleanup tasks: card deletes that failed, retried in the background with exponential back-off."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from bureau.ledger.models import CleanupTaskRow
from bureau.ledger.transactions import TransactionRunner, utcnow


@dataclass(frozen=True, slots=True)
class CleanupTask:
    id: int
    case_id: str
    space: str
    card_id: str
    reason: str
    attempts: int


class CleanupLedger(TransactionRunner):
    async def add_cleanup(self, case_id: str, space: str, card_id: str, reason: str) -> None:
        def work(session: Session) -> None:
            now = utcnow()
            session.add(
                CleanupTaskRow(
                    case_id=case_id,
                    space=space,
                    card_id=card_id,
                    reason=reason,
                    attempts=0,
                    next_attempt_at=now,
                    created_at=now,
                )
            )

        await self._run(work)

    async def due_cleanups(self, limit: int = 20) -> list[CleanupTask]:
        def work(session: Session) -> list[CleanupTask]:
            stmt = (
                select(CleanupTaskRow)
                .where(CleanupTaskRow.done_at.is_(None), CleanupTaskRow.next_attempt_at <= utcnow())
                .order_by(CleanupTaskRow.id)
                .limit(limit)
            )
            return [
                CleanupTask(r.id, r.case_id, r.space, r.card_id, r.reason, r.attempts) for r in session.scalars(stmt)
            ]

        return await self._read(work)

    async def finish_cleanup(self, task_id: int) -> None:
        await self._run(
            lambda s: s.execute(update(CleanupTaskRow).where(CleanupTaskRow.id == task_id).values(done_at=utcnow()))
        )

    async def retry_cleanup_later(self, task_id: int, attempts: int) -> None:
        delay = min(300.0, 2.0**attempts)
        await self._run(
            lambda s: s.execute(
                update(CleanupTaskRow)
                .where(CleanupTaskRow.id == task_id)
                .values(attempts=attempts, next_attempt_at=utcnow() + timedelta(seconds=delay))
            )
        )

    async def open_cleanups(self) -> int:
        return await self._read(
            lambda s: int(s.scalar(select(func.count()).where(CleanupTaskRow.done_at.is_(None))) or 0)
        )
