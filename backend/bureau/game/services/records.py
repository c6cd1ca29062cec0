"""The case record and subject access: the timeline a page at a time, the export streamed, who holds what,
and the policy audit trail."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from bureau.game.case_access import CaseAccess, in_play
from bureau.game.contract import PolicyDecisionView
from bureau.game.keys import Keys
from bureau.game.subject_access import subject_access_json
from bureau.game.views import policy_decision_view
from bureau.ledger.record import RecordEntry
from bureau.ledger.repository import CaseRecord, CaseRepository, PolicyAuditRepository, RecordRepository

EXPORT_PAGE = 200  # entries an export reads from the ledger at a time


@dataclass(frozen=True, slots=True)
class RecordExport:
    case: CaseRecord
    count: int
    pages: AsyncIterator[list[RecordEntry]]  # oldest first


@dataclass(frozen=True, slots=True)
class RecordPage:
    entries: list[RecordEntry]  # newest first
    next: int | None  # the cursor of the next (older) page; None on the last
    total: int  # entries in the whole record


class RecordService:
    def __init__(
        self,
        keys: Keys,
        access: CaseAccess,
        *,
        cases: CaseRepository,
        record: RecordRepository,
        policy_audit: PolicyAuditRepository,
    ) -> None:
        """`cases`: a record page with its case, in one read; `record`: an export's pages."""
        self.keys, self.access = keys, access
        self.cases, self.record, self.policy_audit = cases, record, policy_audit

    async def record_page(
        self, case_id: str, after: int | None, limit: int, *, texts: bool = True
    ) -> tuple[CaseRecord, RecordPage]:
        """One page of the record, newest first (as the timeline shows it): the `limit` entries older than the
        cursor `after` (none: the newest), and the cursor of the next page (None on the last one). `texts`:
        the operator's page, bodies opened; without, content-free (the stage's projection)."""
        # One more: is there a next page? The case comes with the page, in one read.
        case = await self.access.require_case(case_id)
        if texts:
            async with self.keys.operator(case) as grant:
                found_case, found, total = await self.cases.record_page(case_id, after, limit + 1, grant)
        else:
            found_case, found, total = await self.cases.record_page(case_id, after, limit + 1, None)
        case = in_play(case_id, found_case)
        entries = found[:limit]
        return case, RecordPage(entries, entries[-1].id if len(found) > limit else None, total)

    async def record_export(self, case_id: str) -> RecordExport:
        """What an export streams: the case, how many entries it has now, and every one of them up to the newest
        (an entry appended meanwhile is left to the next export), oldest first, a page at a time: no limit, and
        never the whole record in memory. Each page is read under a grant of its own."""
        case = await self.access.require_case(case_id)
        count, newest = await self.record.record_bounds(case_id)

        async def pages() -> AsyncIterator[list[RecordEntry]]:
            cursor = 0
            while cursor < newest:
                async with self.keys.operator(case) as grant:
                    page = await self.record.record_since(case_id, cursor, EXPORT_PAGE, newest, grant=grant)
                if not page:
                    return
                yield page
                cursor = page[-1].id

        return RecordExport(case, count, pages())

    async def subject_access(self, case_id: str) -> AsyncIterator[str]:
        """Which spaces hold which cards, every board copy with its source, every derived artifact with its
        ingredients and audience: the `SubjectAccess` JSON, streamed (the record's artifacts a page at a time).
        The case is checked before the first byte."""
        case = await self.access.require_case(case_id)
        async with self.keys.operator(case) as grant:
            state, _ = await self.access.operator_state(case, grant)
        export = await self.record_export(case_id)
        return subject_access_json(state, export.pages)

    async def policy_decisions(self, case_id: str, after_id: int, limit: int) -> list[PolicyDecisionView]:
        await self.access.require_case(case_id)
        return [policy_decision_view(r) for r in await self.policy_audit.policy_decisions(case_id, after_id, limit)]
