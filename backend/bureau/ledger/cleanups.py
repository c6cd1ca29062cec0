"""Cleanup tasks: card deletes that failed, and keys still to be destroyed after a commit, retried in the
background with exponential back-off. A command that must destroy keys once it has committed writes its tasks
in its own transaction (`CleanupIntent`, due after a grace period), carries them out at once, and finishes
them: a crash in between leaves them to the background loop."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from bureau.ledger.models import CleanupTaskRow
from bureau.ledger.transactions import Repository, utcnow

INLINE_GRACE_S = 30.0  # a task its own command is carrying out is left to it this long


@dataclass(frozen=True, slots=True)
class CleanupTask:
    id: int
    case_id: str
    space: str  # a space, or "record" for a record item's key
    card_id: str  # "" when only a key is left to destroy
    reason: str
    attempts: int
    item: str | None = None


@dataclass(frozen=True, slots=True)
class CleanupIntent:
    """A task written in a command's own transaction, for what it must do once committed."""

    space: str
    card_id: str
    reason: str
    item: str | None = None


def add_intents(session: Session, case_id: str, intents: Sequence[CleanupIntent]) -> list[CleanupTaskRow]:
    """Inside a command's transaction: its tasks, due only after the grace its own run has."""
    now = utcnow()
    rows = [
        CleanupTaskRow(
            case_id=case_id,
            space=intent.space,
            card_id=intent.card_id,
            item=intent.item,
            reason=intent.reason,
            attempts=0,
            next_attempt_at=now + timedelta(seconds=INLINE_GRACE_S),
            created_at=now,
        )
        for intent in intents
    ]
    session.add_all(rows)
    session.flush()
    return rows


def task_of(row: CleanupTaskRow) -> CleanupTask:
    return CleanupTask(row.id, row.case_id, row.space, row.card_id, row.reason, row.attempts, row.item)


class CleanupRepository(Repository):
    async def add_cleanup(self, case_id: str, space: str, card_id: str, reason: str, item: str | None = None) -> None:
        def work(session: Session) -> None:
            now = utcnow()
            session.add(
                CleanupTaskRow(
                    case_id=case_id,
                    space=space,
                    card_id=card_id,
                    item=item,
                    reason=reason,
                    attempts=0,
                    next_attempt_at=now,
                    created_at=now,
                )
            )

        await self.runner.run(work)

    async def due_cleanups(self, limit: int = 20) -> list[CleanupTask]:
        def work(session: Session) -> list[CleanupTask]:
            stmt = (
                select(CleanupTaskRow)
                .where(CleanupTaskRow.done_at.is_(None), CleanupTaskRow.next_attempt_at <= utcnow())
                .order_by(CleanupTaskRow.id)
                .limit(limit)
            )
            return [task_of(r) for r in session.scalars(stmt)]

        return await self.runner.read(work)

    async def finish_cleanup(self, task_id: int) -> None:
        await self.finish_cleanups([task_id])

    async def finish_cleanups(self, task_ids: Sequence[int]) -> None:
        if not task_ids:
            return
        stmt = update(CleanupTaskRow).where(CleanupTaskRow.id.in_(list(task_ids))).values(done_at=utcnow())
        await self.runner.run(lambda s: s.execute(stmt))

    async def hand_over_cleanups(self, task_ids: Sequence[int]) -> None:
        """Tasks their own command could not carry out: due now, for the background loop."""
        if not task_ids:
            return
        stmt = update(CleanupTaskRow).where(CleanupTaskRow.id.in_(list(task_ids))).values(next_attempt_at=utcnow())
        await self.runner.run(lambda s: s.execute(stmt))

    async def retry_cleanup_later(self, task_id: int, attempts: int) -> None:
        delay = min(300.0, 2.0**attempts)
        await self.runner.run(
            lambda s: s.execute(
                update(CleanupTaskRow)
                .where(CleanupTaskRow.id == task_id)
                .values(attempts=attempts, next_attempt_at=utcnow() + timedelta(seconds=delay))
            )
        )

    async def open_cleanups(self) -> int:
        return await self.runner.read(
            lambda s: int(s.scalar(select(func.count()).where(CleanupTaskRow.done_at.is_(None))) or 0)
        )
