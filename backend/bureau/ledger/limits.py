"""Limits that must hold for the whole deployment, not per process: N instances behind a proxy behave as one.

Passcode failures (the throttle), live stream slots per session (leased, so a killed instance's slots
expire), and usage counters (the model request budget).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from bureau.ledger.models import PasscodeFailureRow, StreamSlotRow, UsageCounterRow
from bureau.ledger.transactions import LedgerConflictError, Repository, affected, aware, utcnow


def _key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class LimitRepository(Repository):
    # ----- passcode throttle ---------------------------------------------------------------------------

    async def recent_failures(self, key: str, window_s: float) -> tuple[int, datetime | None]:
        """(failures of `key` inside the window, the oldest of them)."""

        def work(session: Session) -> tuple[int, datetime | None]:
            stmt = select(func.count(), func.min(PasscodeFailureRow.failed_at)).where(
                PasscodeFailureRow.key_hash == _key_hash(key),
                PasscodeFailureRow.failed_at > utcnow() - timedelta(seconds=window_s),
            )
            count, oldest = session.execute(stmt).one()
            return int(count), aware(oldest) if oldest is not None else None

        return await self.runner.read(work)

    async def record_failure(self, key: str) -> None:
        await self.runner.run(lambda s: s.add(PasscodeFailureRow(key_hash=_key_hash(key), failed_at=utcnow())))

    async def clear_failures(self, key: str) -> None:
        await self.runner.run(
            lambda s: s.execute(delete(PasscodeFailureRow).where(PasscodeFailureRow.key_hash == _key_hash(key)))
        )

    async def purge_old_failures(self, window_s: float) -> None:
        cutoff = utcnow() - timedelta(seconds=window_s)
        await self.runner.run(
            lambda s: s.execute(delete(PasscodeFailureRow).where(PasscodeFailureRow.failed_at <= cutoff))
        )

    # ----- live stream slots ---------------------------------------------------------------------------

    async def claim_stream_slot(self, session_key: str, cap: int, owner: str, lease_s: float) -> int | None:
        """The lowest free (or expired) slot below `cap`, leased to `owner`; None when all are taken.
        The primary key (session, slot) makes two instances claiming the same slot impossible."""

        def work(session: Session) -> int | None:
            now = utcnow()
            held = {
                slot: aware(expires)
                for slot, expires in session.execute(
                    select(StreamSlotRow.slot, StreamSlotRow.expires_at).where(StreamSlotRow.session_key == session_key)
                )
            }
            for slot in range(cap):
                expires = held.get(slot)
                if expires is None:
                    session.add(
                        StreamSlotRow(
                            session_key=session_key, slot=slot, owner=owner, expires_at=now + timedelta(seconds=lease_s)
                        )
                    )
                    session.flush()
                    return slot
                if expires <= now:
                    stmt = (
                        update(StreamSlotRow)
                        .where(
                            StreamSlotRow.session_key == session_key,
                            StreamSlotRow.slot == slot,
                            StreamSlotRow.expires_at <= now,
                        )
                        .values(owner=owner, expires_at=now + timedelta(seconds=lease_s))
                    )
                    if affected(session.execute(stmt)) == 1:
                        return slot
            return None

        for _ in range(5):
            try:
                return await self.runner.run(work)
            except LedgerConflictError:
                continue  # another instance took that slot first: look again
        return None

    async def renew_stream_slots(self, owner: str, lease_s: float) -> None:
        expires = utcnow() + timedelta(seconds=lease_s)
        await self.runner.run(
            lambda s: s.execute(update(StreamSlotRow).where(StreamSlotRow.owner == owner).values(expires_at=expires))
        )

    async def release_stream_slot(self, session_key: str, slot: int, owner: str) -> None:
        await self.runner.run(
            lambda s: s.execute(
                delete(StreamSlotRow).where(
                    StreamSlotRow.session_key == session_key, StreamSlotRow.slot == slot, StreamSlotRow.owner == owner
                )
            )
        )

    # ----- usage counters ------------------------------------------------------------------------------

    async def take_from_budget(self, name: str, limit: int) -> bool:
        """Spend one unit of a deployment-wide budget; False when it is spent. One conditional UPDATE, so
        concurrent instances can never overspend it."""

        def work(session: Session) -> bool:
            stmt = (
                update(UsageCounterRow)
                .where(UsageCounterRow.name == name, UsageCounterRow.used < limit)
                .values(used=UsageCounterRow.used + 1, updated_at=utcnow())
            )
            if affected(session.execute(stmt)) == 1:
                return True
            if session.get(UsageCounterRow, name) is not None or limit <= 0:
                return False
            session.add(UsageCounterRow(name=name, used=1, updated_at=utcnow()))
            session.flush()
            return True

        for _ in range(3):
            try:
                return await self.runner.run(work)
            except LedgerConflictError:
                continue  # another instance created the counter first: spend from it
        return False

    async def budget_used(self, name: str) -> int:
        def work(session: Session) -> int:
            row = session.get(UsageCounterRow, name)
            return int(row.used) if row is not None else 0

        return await self.runner.read(work)
