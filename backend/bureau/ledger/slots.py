"""Process slots: each live process leases a Snowflake slot 0..1023, so no two generate the same card ids."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from bureau.ledger.models import ProcessSlotRow
from bureau.ledger.transactions import LedgerConflictError, LedgerError, Repository, affected, aware, utcnow

SLOT_COUNT = 1024


class SlotRepository(Repository):
    async def claim_slot(self, owner: str, stale_after_s: float = 120.0, wanted: int | None = None) -> int:
        """Lease the lowest free Snowflake slot (or exactly `wanted`), so no two live processes sharing this
        ledger generate the same card ids. A `wanted` slot held by a live process raises LedgerConflictError."""

        def work(session: Session) -> int:
            now = utcnow()
            stale = now - timedelta(seconds=stale_after_s)
            taken = {
                slot: aware(beat)
                for slot, beat in session.execute(select(ProcessSlotRow.slot, ProcessSlotRow.heartbeat_at))
            }
            for slot in range(SLOT_COUNT) if wanted is None else (wanted,):
                beat = taken.get(slot)
                if beat is None:
                    session.add(ProcessSlotRow(slot=slot, owner=owner, heartbeat_at=now))
                    session.flush()
                    return slot
                if beat < stale:
                    stmt = (
                        update(ProcessSlotRow)
                        .where(ProcessSlotRow.slot == slot, ProcessSlotRow.heartbeat_at < stale)
                        .values(owner=owner, heartbeat_at=now)
                    )
                    if affected(session.execute(stmt)) == 1:
                        return slot
            if wanted is not None:
                raise LedgerConflictError(f"worker id {wanted} is held by another live process")
            raise LedgerError("no free process slot")

        for _ in range(5):
            try:
                return await self.runner.run(work)
            except LedgerConflictError:
                if wanted is not None:
                    raise
                continue  # another process took the same slot first
        raise LedgerError("could not claim a process slot")

    async def heartbeat_slot(self, slot: int, owner: str) -> bool:
        """Renew the lease. False means another process took the slot over: ids could now collide."""

        def work(session: Session) -> bool:
            stmt = (
                update(ProcessSlotRow)
                .where(ProcessSlotRow.slot == slot, ProcessSlotRow.owner == owner)
                .values(heartbeat_at=utcnow())
            )
            return affected(session.execute(stmt)) == 1

        return await self.runner.run(work)

    async def release_slot(self, slot: int, owner: str) -> None:
        await self.runner.run(
            lambda s: s.execute(
                delete(ProcessSlotRow).where(ProcessSlotRow.slot == slot, ProcessSlotRow.owner == owner)
            )
        )

    async def live_slots(self, stale_after_s: float = 120.0) -> set[int]:
        """Slots leased by processes that renewed their lease recently (for `bureau preflight`)."""
        stale = utcnow() - timedelta(seconds=stale_after_s)
        rows = await self.runner.read(
            lambda s: list(s.execute(select(ProcessSlotRow.slot, ProcessSlotRow.heartbeat_at)))
        )
        return {slot for slot, beat in rows if aware(beat) >= stale}
