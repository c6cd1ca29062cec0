"""Operator-only routes of the memory policy: what the operator may write, and the policy audit trail.
Nothing here is ever projected to the stage (no stage route, no event)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from bureau.api.deps import OperatorDep, record_service
from bureau.api.errors import OPERATOR_ACCESS, declare_errors
from bureau.api.openapi import ContractRoute
from bureau.api.responses import MemoryPolicyView, PolicyDecisionPage
from bureau.game.services.records import RecordService
from bureau.scope.limits import MAX_EVENT_ID
from bureau.scope.memory_policy import PREFERENCE_KEYS, writable_types
from bureau.scope.vocabulary import CreatedBy, MemoryType

router = APIRouter(prefix="/api", tags=["memory policy"], route_class=ContractRoute)
MAX_PAGE = 500


@router.get("/memory-policy", response_model=MemoryPolicyView, responses=declare_errors(*OPERATOR_ACCESS))
async def memory_policy(_: OperatorDep) -> MemoryPolicyView:
    return MemoryPolicyView(
        writable_types=writable_types(CreatedBy.OPERATOR),
        default_type=MemoryType.LONG_TERM_KNOWLEDGE,
        preference_keys=sorted(PREFERENCE_KEYS),
    )


@router.get(
    "/cases/{case_id}/policy-decisions",
    response_model=PolicyDecisionPage,
    responses=declare_errors("CASE_NOT_FOUND", "VALIDATION_ERROR", *OPERATOR_ACCESS),
)
async def policy_decisions(
    case_id: str,
    records: Annotated[RecordService, Depends(record_service)],
    _: OperatorDep,
    after: Annotated[int, Query(ge=0, le=MAX_EVENT_ID)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
) -> PolicyDecisionPage:
    decisions = await records.policy_decisions(case_id, after, limit)
    return PolicyDecisionPage(decisions=decisions, next_after=decisions[-1].id if len(decisions) == limit else None)
