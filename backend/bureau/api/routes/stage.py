"""Stage routes: everything here leaves through the delivery gate."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from bureau.api.delivery import stage_record, stage_snapshot
from bureau.api.deps import ServicesDep, StageDep, case_service, record_service
from bureau.api.errors import STAGE_ACCESS, declare_errors
from bureau.api.openapi import ContractRoute
from bureau.api.responses import LatestCase, StageRecord, StageSnapshot
from bureau.api.routes.paging import RECORD_PAGE_DEFAULT, RecordCursor, RecordLimit
from bureau.api.routes.streaming import MAX_EVENT_ID, sse_response, sse_responses
from bureau.game.services.cases import CaseService
from bureau.game.services.records import RecordService
from bureau.scope.audience import Audience

router = APIRouter(prefix="/api/cases/{case_id}/stage", tags=["stage"], route_class=ContractRoute)
follow_router = APIRouter(prefix="/api/stage", tags=["stage"], route_class=ContractRoute)
READ = ("CASE_NOT_FOUND", "VALIDATION_ERROR", *STAGE_ACCESS)


@follow_router.get("/latest", response_model=LatestCase, responses=declare_errors(*READ))
async def latest_case(cases: Annotated[CaseService, Depends(case_service)], _: StageDep) -> LatestCase:
    """The newest active case: a stage opened at /stage/latest follows the operator to each new case."""
    return LatestCase(case_id=await cases.latest_case_id())


@router.get("", response_model=StageSnapshot, responses=declare_errors(*READ))
async def get_stage(case_id: str, cases: Annotated[CaseService, Depends(case_service)], _: StageDep) -> StageSnapshot:
    return stage_snapshot(await cases.stage_state(case_id))


@router.get("/record", response_model=StageRecord, responses=declare_errors(*READ))
async def get_stage_record(
    case_id: str,
    records: Annotated[RecordService, Depends(record_service)],
    _: StageDep,
    after: RecordCursor = None,
    limit: RecordLimit = RECORD_PAGE_DEFAULT,
) -> StageRecord:
    """The public projection of the case record, a page at a time, newest first: scopes, public hits and
    counts; a sealed conclusion is only announced. Follow `next` (as `after`) until it is null."""
    case, page = await records.record_page(case_id, after, limit, texts=False)
    return stage_record(case.id, page.entries, page.next)


@router.get("/events", response_class=Response, responses=sse_responses(Audience.STAGE))
async def stage_events(
    case_id: str,
    request: Request,
    svc: ServicesDep,
    principal: StageDep,
    after: Annotated[int | None, Query(ge=0, le=MAX_EVENT_ID)] = None,
) -> Response:
    return await sse_response(svc, request, principal, case_id, Audience.STAGE, after)
