"""The findings ledger (docs/findings.md): the Saga of a finding's board card, like a publication's, and the
one place that knows which cards supported it, as keyed pseudonyms under the case's pseudonym key (the vault's,
reached through a findings grant).

reserve (unique on case + claim pseudonym, with the support mapping) → the game writes the board card (its
metadata carries the finding id) → complete (ready, with the case change and its events). A deletion, a reset
or an erase re-runs leave-one-out from the mapping inside its own transaction (`withdraw_unsupported`); a
finding that no longer qualifies is withdrawn there: the row stays as a content-free tombstone (`withdrawn`,
claim dropped), its mapping rows go, record entries that quoted it lose their text, and the game deletes its
board card (or leaves a cleanup task).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from bureau.ledger.case_knowledge import fold_again
from bureau.ledger.cases import CaseRecord, CaseRepository, destroy_unstored
from bureau.ledger.event_records import PendingEvent
from bureau.ledger.finding_rows import (
    FindingFigures,
    FindingRecord,
    _mapping,
    normalised_claim,
    records,
    withdraw_unsupported,
    withdrawn_events,
)
from bureau.ledger.leases import LostLeaseError, lease_ran_out, lease_until, lock_active_case, take_over_expired
from bureau.ledger.models import FindingRow, FindingSupportRow
from bureau.ledger.transactions import (
    GenerationMovedError,
    LedgerConflictError,
    LedgerError,
    Repository,
    TransactionRunner,
    aware,
    utcnow,
)
from bureau.scope.keys import RECORD
from bureau.scope.support import Contribution, qualifies
from bureau.scope.vocabulary import FindingState
from bureau.vault.errors import GenerationRetiredError
from bureau.vault.grants import Grant
from bureau.vault.items import new_item_id


class _NoLongerSupported(Exception):
    pass


class FindingRepository(Repository):
    """Completing a finding, or withdrawing those a card's departure leaves unsupported, is a case change, run
    through the cases repository in one transaction."""

    def __init__(self, runner: TransactionRunner, cases: CaseRepository) -> None:
        super().__init__(runner)
        self.cases = cases  # completing or withdrawing a finding commits inside the case's change

    async def reserve_finding(
        self,
        case_id: str,
        finding_id: str,
        claim: str,
        owner: str,
        lease_s: float,
        figures: FindingFigures,
        contributions: Sequence[Contribution],
        grant: Grant,
    ) -> tuple[bool, FindingRecord]:
        """INSERT the finding (pending, leased to `owner`) with its mapping, in one transaction: ledger first.
        (True, row) if we own it; (False, existing) when the claim is pending or promoted already. The claim is
        sealed under a key of its own in the record compartment, the mapping pseudonymised, through `grant`."""
        claim_item = new_item_id()
        slot = grant.pseudonym("claim", normalised_claim(claim))
        mapping = [
            (grant.pseudonym("card", c.card), grant.pseudonym("role", c.role), grant.pseudonym("source", c.source))
            for c in contributions
        ]
        sealed: list[str] = []

        def seal() -> None:  # on the ledger's thread, before the transaction: the key goes into the vault first
            if not sealed:
                try:
                    sealed.append(grant.seal(RECORD, claim_item, json.dumps(claim, ensure_ascii=False)))
                except GenerationRetiredError as exc:  # a reset since the promotion began retired the record
                    raise GenerationMovedError(case_id) from exc
                grant.store_new_keys()

        def insert(session: Session) -> FindingRecord:
            now = utcnow()
            lock_active_case(session, case_id)
            row = FindingRow(
                id=finding_id,
                case_id=case_id,
                claim_hash=slot,
                slot=slot,
                state=FindingState.PENDING,
                owner=owner,
                lease_expires_at=lease_until(now, lease_s),
                public_card_id=None,
                claim=sealed[0],
                claim_item=claim_item,
                support=figures.support,
                leave_one_out=figures.leave_one_out,
                min_support=figures.min_support,
                contradictions=figures.contradictions,
                trust=figures.trust,
                review_at=figures.review_at,
                created_at=now,
                updated_at=now,
            )
            session.add(row)
            session.flush()
            session.add_all(
                FindingSupportRow(finding_id=finding_id, case_id=case_id, card=card, role=role, source=source)
                for card, role, source in mapping
            )
            session.flush()
            [record] = records([row], None)
            return replace(record, claim=claim)

        try:
            for _ in range(2):
                try:
                    return True, await self.runner.run(insert, before=seal)
                except LedgerConflictError:
                    existing = await self.finding_for_claim(case_id, claim, grant)
                    if existing is not None:
                        await destroy_unstored(grant, [claim_item])
                        return False, existing
            raise LedgerError("finding reservation kept conflicting")
        except BaseException:
            await destroy_unstored(grant, [claim_item] if sealed else [])
            raise

    async def finding_for_claim(self, case_id: str, claim: str, grant: Grant) -> FindingRecord | None:
        """The pending or promoted finding of this claim, if any (found by its pseudonym under `grant`)."""
        slot = grant.pseudonym("claim", normalised_claim(claim))

        def work(session: Session) -> FindingRecord | None:
            row = session.scalar(select(FindingRow).where(FindingRow.case_id == case_id, FindingRow.slot == slot))
            return records([row], grant)[0] if row else None

        return await self.runner.read(work)

    async def claim_first_promoted(self, case_id: str, claim: str, grant: Grant) -> datetime | None:
        """When a finding of this claim first reached the board (withdrawn ones included), or None."""
        claim_hash = grant.pseudonym("claim", normalised_claim(claim))

        def work(session: Session) -> datetime | None:
            stmt = select(FindingRow.promoted_at).where(
                FindingRow.case_id == case_id, FindingRow.claim_hash == claim_hash, FindingRow.promoted_at.is_not(None)
            )
            times = [aware(t) for t in session.scalars(stmt) if t is not None]
            return min(times) if times else None

        return await self.runner.read(work)

    async def take_over_finding(self, case_id: str, finding_id: str, owner: str, lease_s: float) -> bool:
        def work(session: Session) -> bool:
            row = (FindingRow.id == finding_id, FindingRow.case_id == case_id)
            return take_over_expired(session, FindingRow, *row, owner=owner, lease_s=lease_s)

        return await self.runner.run(work)

    async def complete_finding(
        self,
        case_id: str,
        finding_id: str,
        owner: str,
        public_card_id: str,
        events: list[PendingEvent],
        generation: str | None = None,
    ) -> CaseRecord | None:
        """Mark ready + bump the case + append the events, only if we still own the lease and the mapping
        still qualifies (a deletion in between may have withdrawn it). None otherwise. GenerationMovedError
        when a reset came first."""

        def mark(session: Session) -> None:
            row = session.get(FindingRow, finding_id, with_for_update=True)
            if row is None or row.state != FindingState.PENDING or row.owner != owner or row.case_id != case_id:
                raise LostLeaseError
            if not qualifies(_mapping(session, finding_id), row.min_support):
                raise _NoLongerSupported
            now = utcnow()
            row.state, row.public_card_id, row.promoted_at, row.updated_at = (
                FindingState.READY,
                public_card_id,
                now,
                now,
            )

        try:
            return await self.cases.apply_change(case_id, events, extra=mark, generation=generation)
        except (LostLeaseError, _NoLongerSupported):
            return None

    async def release_finding(self, case_id: str, finding_id: str, owner: str) -> None:
        """A failed promotion frees the claim: the pending row and its mapping go."""

        def work(session: Session) -> None:
            row = session.get(FindingRow, finding_id, with_for_update=True)
            if row is None or row.case_id != case_id or row.owner != owner or row.state != FindingState.PENDING:
                return
            session.execute(delete(FindingSupportRow).where(FindingSupportRow.finding_id == finding_id))
            session.delete(row)

        await self.runner.run(work)

    async def abandoned_findings(self, older_than_s: float) -> list[FindingRecord]:
        """Pending promotions whose lease ran out more than `older_than_s` ago, across cases: their owner died
        (or stalled so long that its client gave up)."""

        def work(session: Session) -> list[FindingRecord]:
            stmt = select(FindingRow).where(
                FindingRow.state == FindingState.PENDING, lease_ran_out(FindingRow, older_than_s)
            )
            return records(list(session.scalars(stmt.order_by(FindingRow.id))), None)  # content-free

        return await self.runner.read(work)

    async def findings(self, case_id: str, grant: Grant | None) -> list[FindingRecord]:
        """Every finding of the case (pending, promoted and withdrawn), oldest first; claims open through
        `grant`."""

        def work(session: Session) -> list[FindingRecord]:
            stmt = (
                select(FindingRow).where(FindingRow.case_id == case_id).order_by(FindingRow.created_at, FindingRow.id)
            )
            return records(list(session.scalars(stmt)), grant)

        return await self.runner.read(work)

    async def finding(self, case_id: str, finding_id: str, grant: Grant | None) -> FindingRecord | None:
        def work(session: Session) -> FindingRecord | None:
            row = session.get(FindingRow, finding_id)
            if row is None or row.case_id != case_id:
                return None
            return records([row], grant)[0]

        return await self.runner.read(work)

    async def withdraw_cards(
        self, case_id: str, removed_card_ids: Sequence[str], grant: Grant, dropped: list[str]
    ) -> list[FindingRecord]:
        """Re-run leave-one-out without these cards (which left by another path than an erasure, e.g. the
        retention), as a case change with the withdrawal events. Returns the withdrawn findings; the items of
        the texts dropped go into `dropped`."""
        withdrawn: list[FindingRecord] = []

        def extra(session: Session) -> list[PendingEvent]:
            withdrawn.extend(withdraw_unsupported(session, case_id, removed_card_ids, grant, dropped))
            if withdrawn:  # the entries that quoted a withdrawn finding lost their text
                fold_again(session, case_id)
            return withdrawn_events(withdrawn)

        await self.cases.apply_change(case_id, [], extra=extra)
        return withdrawn

    async def support_rows(self, case_id: str) -> list[tuple[str, str, str, str]]:
        """Test and erasure-check seam: the mapping rows of a case as (finding id, card, role, source)
        pseudonyms. Never served by any route."""

        def work(session: Session) -> list[tuple[str, str, str, str]]:
            stmt = select(FindingSupportRow).where(FindingSupportRow.case_id == case_id)
            return [(r.finding_id, r.card, r.role, r.source) for r in session.scalars(stmt)]

        return await self.runner.read(work)
