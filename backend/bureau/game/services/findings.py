"""Findings: a claim evaluated against the case's independent support, promoted to the board, listed
(the rule and the Saga: game/findings.py, docs/findings.md)."""

from __future__ import annotations

from bureau.game.case_access import CaseAccess
from bureau.game.commits import Commits
from bureau.game.contract import FindingEvaluation, FindingList, FindingPromotion
from bureau.game.findings import Findings


class FindingService:
    def __init__(self, access: CaseAccess, commits: Commits, findings: Findings) -> None:
        self.access, self.commits, self.findings = access, commits, findings

    async def evaluate(self, case_id: str, claim: str | None) -> FindingEvaluation:
        return await self.findings.evaluate(await self.access.require_case(case_id), claim)

    async def promote(self, case_id: str, claim: str) -> FindingPromotion:
        """`idempotent`: the claim was promoted before (the same finding card)."""
        return await self.commits.unless_erased(
            case_id, self.commits.in_current_generation(case_id, None, lambda case: self.findings.promote(case, claim))
        )

    async def list(self, case_id: str) -> FindingList:
        return await self.findings.list(await self.access.require_case(case_id))
