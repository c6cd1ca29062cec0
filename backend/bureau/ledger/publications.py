"""The publication Saga ledger: reserve (unique on case + source card), take over an expired lease, mark
ready together with the case change, release. See docs/publish-saga.md."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from bureau.ledger.cases import CaseRecord, CaseRepository
from bureau.ledger.event_records import EventRecord, PendingEvent
from bureau.ledger.events import append_event
from bureau.ledger.leases import LostLeaseError, lease_ran_out, lease_until, lock_active_case, take_over_expired
from bureau.ledger.models import PublicationRow
from bureau.ledger.tombstones import the_row
from bureau.ledger.transactions import (
    LedgerConflictError,
    LedgerError,
    Repository,
    TransactionRunner,
    affected,
    aware,
    utcnow,
)
from bureau.scope.vocabulary import EventType, PublicationState


@dataclass(frozen=True, slots=True)
class PublicationRecord:
    case_id: str
    source_card_id: str
    role: str
    state: str
    owner: str
    lease_expires_at: datetime
    public_card_id: str | None

    def lease_live(self) -> bool:
        return self.lease_expires_at > utcnow()


def publication_record(row: PublicationRow) -> PublicationRecord:
    return PublicationRecord(
        row.case_id,
        row.source_card_id,
        row.role,
        row.state,
        row.owner,
        aware(row.lease_expires_at),
        row.public_card_id,
    )


class PublicationRepository(Repository):
    """Completing a publication is a case change (version bump + events), run through the cases repository in
    one transaction."""

    def __init__(self, runner: TransactionRunner, cases: CaseRepository) -> None:
        super().__init__(runner)
        self.cases = cases  # completing a publication commits inside the case's change

    async def reserve_publication(
        self, case_id: str, source_card_id: str, role: str, owner: str, lease_s: float
    ) -> tuple[bool, PublicationRecord]:
        """INSERT the reservation. (True, row) if we own it; (False, existing) on a unique-key conflict (the
        existing row may be an erased card's tombstone)."""

        def insert(session: Session) -> tuple[PublicationRecord, EventRecord]:
            now = utcnow()
            version = lock_active_case(session, case_id).version
            row = PublicationRow(
                case_id=case_id,
                source_card_id=source_card_id,
                role=role,
                state=PublicationState.PENDING,
                owner=owner,
                lease_expires_at=lease_until(now, lease_s),
                created_at=now,
                updated_at=now,
            )
            session.add(row)
            session.flush()
            started = PendingEvent(EventType.PUBLICATION_STARTED, {"role": role, "source_card_id": source_card_id})
            return publication_record(row), append_event(session, case_id, started, version)

        for _ in range(2):  # a conflicting row deleted before we could read it: insert once more
            try:
                record, started = await self.runner.run(insert)
            except LedgerConflictError:
                existing = await self.get_publication(case_id, source_card_id)
                if existing is not None:
                    return False, existing
                continue
            self.runner.notify([started])
            return True, record
        raise LedgerError("publication reservation kept conflicting")

    async def get_publication(self, case_id: str, source_card_id: str) -> PublicationRecord | None:
        def work(session: Session) -> PublicationRecord | None:
            row = session.scalar(select(PublicationRow).where(*the_row(case_id, source_card_id)))
            return publication_record(row) if row else None

        return await self.runner.read(work)

    async def abandoned_publications(self, older_than_s: float) -> list[PublicationRecord]:
        """Pending reservations whose lease ran out more than `older_than_s` ago: their owner died (or
        stalled so long that its client gave up). Also tombstones of cards erased while such an attempt was
        in flight (they keep its owner and lease), whose copy nobody has swept yet. Every one, across cases."""

        def work(session: Session) -> list[PublicationRecord]:
            stmt = select(PublicationRow).where(
                PublicationRow.state.in_([PublicationState.PENDING, PublicationState.ERASED]),
                lease_ran_out(PublicationRow, older_than_s),
                PublicationRow.owner != "",
            )
            return [publication_record(r) for r in session.scalars(stmt.order_by(PublicationRow.id))]

        return await self.runner.read(work)

    async def settle_tombstone(self, case_id: str, source_card_id: str, owner: str) -> bool:
        """The board was swept for the copy of the attempt in flight at the erasure: nothing left to do."""

        def work(session: Session) -> bool:
            stmt = (
                update(PublicationRow)
                .where(
                    *the_row(case_id, source_card_id),
                    PublicationRow.state == PublicationState.ERASED,
                    PublicationRow.owner == owner,
                )
                .values(owner="", updated_at=utcnow())
            )
            return affected(session.execute(stmt)) == 1

        return await self.runner.run(work)

    async def take_over_expired(self, case_id: str, source_card_id: str, owner: str, lease_s: float) -> bool:
        """Claim a pending reservation whose lease ran out (its owner crashed or stalled)."""

        def work(session: Session) -> bool:
            row = the_row(case_id, source_card_id)
            return take_over_expired(session, PublicationRow, *row, owner=owner, lease_s=lease_s)

        return await self.runner.run(work)

    async def complete_publication(
        self,
        case_id: str,
        source_card_id: str,
        owner: str,
        public_card_id: str,
        events: list[PendingEvent],
        generation: str | None = None,
    ) -> CaseRecord | None:
        """Mark ready + bump the case + append the events, only if we still own the lease (None if we lost it)
        and the case is still in `generation` (GenerationMovedError: a reset took the source away)."""

        def mark(session: Session) -> None:
            stmt = (
                update(PublicationRow)
                .where(
                    *the_row(case_id, source_card_id),
                    PublicationRow.owner == owner,
                    PublicationRow.state == PublicationState.PENDING,
                )
                .values(state=PublicationState.READY, public_card_id=public_card_id, updated_at=utcnow())
            )
            if affected(session.execute(stmt)) != 1:
                raise LostLeaseError

        try:
            return await self.cases.apply_change(case_id, events, extra=mark, generation=generation)
        except LostLeaseError:
            return None

    async def reopen_lost_copy(
        self, case_id: str, source_card_id: str, lost_card_id: str, owner: str, lease_s: float
    ) -> bool:
        """A `ready` row whose board copy is gone (deleted outside the Saga): take it back to pending, owned."""

        def work(session: Session) -> bool:
            now = utcnow()
            stmt = (
                update(PublicationRow)
                .where(
                    *the_row(case_id, source_card_id),
                    PublicationRow.state == PublicationState.READY,
                    PublicationRow.public_card_id == lost_card_id,
                )
                .values(
                    state=PublicationState.PENDING,
                    owner=owner,
                    public_card_id=None,
                    lease_expires_at=lease_until(now, lease_s),
                    updated_at=now,
                )
            )
            return affected(session.execute(stmt)) == 1

        return await self.runner.run(work)

    async def is_published_copy(self, case_id: str, card_id: str) -> bool:
        """Whether a ready publication points at this board card (then no cleanup may delete it)."""

        def work(session: Session) -> bool:
            stmt = select(PublicationRow.id).where(
                PublicationRow.case_id == case_id,
                PublicationRow.state == PublicationState.READY,
                PublicationRow.public_card_id == card_id,
            )
            return session.scalar(stmt) is not None

        return await self.runner.read(work)

    async def release_publication(self, case_id: str, source_card_id: str, owner: str) -> None:
        def work(session: Session) -> None:
            session.execute(
                delete(PublicationRow).where(
                    *the_row(case_id, source_card_id),
                    PublicationRow.owner == owner,
                    PublicationRow.state == PublicationState.PENDING,
                )
            )

        await self.runner.run(work)

    async def publications(self, case_id: str) -> list[PublicationRecord]:
        def work(session: Session) -> list[PublicationRecord]:
            stmt = select(PublicationRow).where(PublicationRow.case_id == case_id)
            return [publication_record(r) for r in session.scalars(stmt)]

        return await self.runner.read(work)

    async def forget_publications_of(self, case_id: str, card_ids: list[str]) -> int:
        """Publication rows whose source or board copy no longer exists (retention purged it)."""

        def work(session: Session) -> int:
            gone = PublicationRow.source_card_id.in_(card_ids) | PublicationRow.public_card_id.in_(card_ids)
            return affected(session.execute(delete(PublicationRow).where(PublicationRow.case_id == case_id, gone)))

        return await self.runner.run(work) if card_ids else 0
