"""Operator routes: cases and the commands (whisper, interrogate, cross-examine, publish, delete a card,
reset, erase), the case record and subject access, plus the operator stream."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import StreamingResponse

from bureau.api.deps import (
    OperatorDep,
    ServicesDep,
    StageDep,
    case_service,
    finding_service,
    publication_service,
    question_service,
    record_service,
    whisper_service,
)
from bureau.api.errors import OPERATOR_ACCESS, STAGE_ACCESS, WRITES, ApiError, declare_errors
from bureau.api.openapi import ContractRoute
from bureau.api.responses import (
    CaseRecordPage,
    CrossExaminationResult,
    FindingEvaluation,
    FindingList,
    FindingPromotion,
    Interrogation,
    OperatorSnapshot,
    PublicationResult,
    ScenarioSummary,
    WhisperResult,
)
from bureau.api.routes.paging import RECORD_PAGE_DEFAULT, RecordCursor, RecordLimit
from bureau.api.routes.streaming import sse_response, sse_responses
from bureau.api.schemas import (
    CreateCase,
    CrossExaminationBody,
    FindingClaimBody,
    FindingEvaluationBody,
    InterrogationBody,
    PublicationBody,
    ResetBody,
    UnfilteredActBody,
    WhisperBody,
)
from bureau.game.record_views import json_export, markdown_export, record_page_view
from bureau.game.services.cases import CaseService
from bureau.game.services.findings import FindingService
from bureau.game.services.publications import PublicationService
from bureau.game.services.questions import QuestionService
from bureau.game.services.records import RecordService
from bureau.game.services.whispers import WhisperService
from bureau.scope import memory_policy as policy
from bureau.scope.audience import Audience
from bureau.scope.limits import CARD_ID_MAX_CHARS, MAX_EVENT_ID

router = APIRouter(prefix="/api", tags=["game"], route_class=ContractRoute)
CASE_PATH = "/cases/{case_id}"
READ = ("CASE_NOT_FOUND", "VALIDATION_ERROR", *OPERATOR_ACCESS)  # every operator route of a case
CHANGE = (*READ, *WRITES, "WORKER_ID_LOST")  # every change of a case (a fenced store refuses writes)
COMMAND = (*CHANGE, "VERSION_CONFLICT")  # every command that takes `expected_version`


@router.get("/scenarios", response_model=list[ScenarioSummary], responses=declare_errors(*STAGE_ACCESS))
async def list_scenarios(cases: Annotated[CaseService, Depends(case_service)], _: StageDep) -> list[ScenarioSummary]:
    return cases.scenario_list()


@router.post(
    "/cases",
    status_code=201,
    response_model=OperatorSnapshot,
    responses=declare_errors("SCENARIO_NOT_FOUND", "VALIDATION_ERROR", *OPERATOR_ACCESS, *WRITES, "WORKER_ID_LOST"),
)
async def create_case(
    body: CreateCase, cases: Annotated[CaseService, Depends(case_service)], _: OperatorDep
) -> OperatorSnapshot:
    return await cases.create_case(body.scenario_id, body.language)


@router.get(CASE_PATH, response_model=OperatorSnapshot, responses=declare_errors(*READ))
async def get_case(
    case_id: str, cases: Annotated[CaseService, Depends(case_service)], _: OperatorDep
) -> OperatorSnapshot:
    return await cases.snapshot(case_id)


@router.get(CASE_PATH + "/record", response_model=CaseRecordPage, responses=declare_errors(*READ))
async def get_record(
    case_id: str,
    records: Annotated[RecordService, Depends(record_service)],
    _: OperatorDep,
    after: RecordCursor = None,
    limit: RecordLimit = RECORD_PAGE_DEFAULT,
) -> CaseRecordPage:
    """The case record a page at a time, newest first (as the timeline shows it): every interrogation and
    cross-examination with trace, answer, audience and provenance. Follow `next` (as `after`) until it is
    null to read every entry. Operator only: the stage's record is its public projection (`/stage/record`)."""
    case, page = await records.record_page(case_id, after, limit)
    return record_page_view(case, page.entries, page.next, page.total)


@router.get(
    CASE_PATH + "/record/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "A download, streamed: `format=json` is the whole record (`CaseRecordView`, oldest "
            "first), `format=markdown` a report.",
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/CaseRecordView"}},
                "text/markdown": {"schema": {"type": "string"}},
            },
        },
        **declare_errors(*READ),
    },
)
async def export_record(
    case_id: str,
    records: Annotated[RecordService, Depends(record_service)],
    _: OperatorDep,
    format: Literal["json", "markdown"] = "json",
) -> StreamingResponse:
    """The whole record as a download, oldest first: JSON, or a Markdown report to hand out. Streamed from the
    ledger a page at a time, so its size never sits in the server's memory."""
    export = await records.record_export(case_id)  # 404 before the first byte
    if format == "markdown":
        body, media, suffix = (
            markdown_export(export.case, export.count, export.pages),
            "text/markdown; charset=utf-8",
            "md",
        )
    else:
        body, media, suffix = json_export(export.case, export.pages), "application/json", "json"
    disposition = f'attachment; filename="case-{export.case.id}-record.{suffix}"'
    headers = {"Content-Disposition": disposition, "Cache-Control": "no-store"}
    return StreamingResponse(body, media_type=media, headers=headers)


@router.post(
    CASE_PATH + "/whispers",
    status_code=201,
    response_model=WhisperResult,
    # A preference's key and value are the schema's (422); the memory policy decides who writes which type.
    responses=declare_errors("UNSAFE_INPUT", policy.MEMORY_TYPE_FORBIDDEN, *COMMAND),
)
async def whisper(
    case_id: str, body: WhisperBody, whispers: Annotated[WhisperService, Depends(whisper_service)], _: OperatorDep
) -> WhisperResult:
    """A card into one role's private space: a memory type (default `long_term_knowledge`), for a
    `user_preference` its key and a value that key takes."""
    return await whispers.whisper(
        case_id, body.role, body.text, body.expected_version, body.memory_type, body.key, body.source
    )


@router.post(
    CASE_PATH + "/interrogations",
    response_model=Interrogation,
    responses=declare_errors("UNSAFE_INPUT", *COMMAND),
)
async def interrogate(
    case_id: str,
    body: InterrogationBody,
    questions: Annotated[QuestionService, Depends(question_service)],
    _: OperatorDep,
) -> Interrogation:
    return await questions.interrogate(case_id, body.role, body.question, body.expected_version)


@router.post(
    CASE_PATH + "/acts/unfiltered",
    response_model=Interrogation,
    responses=declare_errors("UNSAFE_INPUT", "PRESENTER_ACTS_OFF", *COMMAND),
)
async def unfiltered_act(
    case_id: str,
    body: UnfilteredActBody,
    questions: Annotated[QuestionService, Depends(question_service)],
    svc: ServicesDep,
    _: OperatorDep,
) -> Interrogation:
    """The presenter act (docs/presenter-guide.md): the question asked as an interrogation, its store statement
    without the space filter (each part fetching k x spaces) and without the scope re-check, so only the
    compartment keys stand between the role and the others. The answer is what the ordinary route gives; the
    trace lists, as locked rows, what came back from other compartments: their space and score, nothing else.
    403 PRESENTER_ACTS_OFF unless BUREAU_PRESENTER_ACTS=1 (never in production)."""
    if not svc.settings.presenter_acts:
        raise ApiError("PRESENTER_ACTS_OFF")
    return await questions.interrogate(case_id, body.role, body.question, body.expected_version, unfiltered=True)


@router.post(
    CASE_PATH + "/cross-examinations",
    response_model=CrossExaminationResult,
    responses=declare_errors("UNSAFE_INPUT", *COMMAND),
)
async def cross_examine(
    case_id: str,
    body: CrossExaminationBody,
    questions: Annotated[QuestionService, Depends(question_service)],
    _: OperatorDep,
) -> CrossExaminationResult:
    """One question to several roles; each role's scoped result and a joint conclusion with its audience."""
    return await questions.cross_examine(case_id, body.roles, body.question, body.expected_version)


@router.delete(CASE_PATH + "/cards/{card_id}", status_code=204, responses=declare_errors("CARD_NOT_FOUND", *COMMAND))
async def delete_card(
    case_id: str,
    card_id: Annotated[str, Path(min_length=1, max_length=CARD_ID_MAX_CHARS)],
    cases: Annotated[CaseService, Depends(case_service)],
    _: OperatorDep,
    expected_version: Annotated[int | None, Query(ge=0)] = None,
) -> Response:
    """Erase a private card, its board copies, and the text of every record entry derived from them."""
    await cases.delete_card(case_id, card_id, expected_version)
    return Response(status_code=204)


@router.get(
    CASE_PATH + "/subject-access",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Successful Response",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SubjectAccess"}}},
        },
        **declare_errors(*READ),
    },
)
async def subject_access(
    case_id: str, records: Annotated[RecordService, Depends(record_service)], _: OperatorDep
) -> StreamingResponse:
    """Which spaces hold which cards, every board copy with its source, every derived artifact with its
    ingredients and audience. Streamed: the record's artifacts are read a page at a time."""
    body = await records.subject_access(case_id)
    return StreamingResponse(body, media_type="application/json", headers={"Cache-Control": "no-store"})


@router.post(
    CASE_PATH + "/publications",
    status_code=201,
    response_model=PublicationResult,
    responses={
        200: {"model": PublicationResult, "description": "Published before: the same board copy (`idempotent`)."},
        **declare_errors("CARD_NOT_FOUND", "PUBLICATION_PENDING", *COMMAND),
    },
)
async def publish(
    case_id: str,
    body: PublicationBody,
    response: Response,
    publications: Annotated[PublicationService, Depends(publication_service)],
    _: OperatorDep,
) -> PublicationResult:
    result = await publications.publish(case_id, body.role, body.card_id, body.expected_version)
    if result.idempotent:
        response.status_code = 200
    return result


@router.post(
    CASE_PATH + "/findings/evaluate",
    response_model=FindingEvaluation,
    responses=declare_errors("UNSAFE_INPUT", *READ),
)
async def evaluate_findings(
    case_id: str,
    findings: Annotated[FindingService, Depends(finding_service)],
    _: OperatorDep,
    body: FindingEvaluationBody | None = None,
) -> FindingEvaluation:
    """Each given or proposed claim: every matching card's status (counted, or excluded and why), the
    leave-one-out result and the decision. Changes nothing."""
    return await findings.evaluate(case_id, body.claim if body else None)


@router.post(
    CASE_PATH + "/findings",
    status_code=201,
    response_model=FindingPromotion,
    responses={
        200: {"model": FindingPromotion, "description": "Promoted before: the same finding card (`idempotent`)."},
        **declare_errors("UNSAFE_INPUT", "FINDING_NOT_QUALIFIED", "FINDING_PENDING", *CHANGE),
    },
)
async def promote_finding(
    case_id: str,
    body: FindingClaimBody,
    response: Response,
    findings: Annotated[FindingService, Depends(finding_service)],
    _: OperatorDep,
) -> FindingPromotion:
    """Promote a qualifying claim to the board as a finding: text, support figures, scope and review date;
    no card ids, roles or sources."""
    result = await findings.promote(case_id, body.claim)
    if result.idempotent:
        response.status_code = 200
    return result


@router.get(CASE_PATH + "/findings", response_model=FindingList, responses=declare_errors(*READ))
async def list_findings(
    case_id: str, findings: Annotated[FindingService, Depends(finding_service)], _: OperatorDep
) -> FindingList:
    """The promoted and withdrawn findings of the case (never which cards supported them)."""
    return await findings.list(case_id)


@router.post(CASE_PATH + "/reset", response_model=OperatorSnapshot, responses=declare_errors(*COMMAND))
async def reset(
    case_id: str, cases: Annotated[CaseService, Depends(case_service)], _: OperatorDep, body: ResetBody | None = None
) -> OperatorSnapshot:
    return await cases.reset(case_id, body.expected_version if body else None)


@router.delete(CASE_PATH, status_code=204, responses=declare_errors(*CHANGE))
async def erase(case_id: str, cases: Annotated[CaseService, Depends(case_service)], _: OperatorDep) -> Response:
    await cases.erase(case_id)
    return Response(status_code=204)


@router.get(CASE_PATH + "/events", response_class=Response, responses=sse_responses(Audience.OPERATOR))
async def operator_events(
    case_id: str,
    request: Request,
    svc: ServicesDep,
    principal: OperatorDep,
    after: Annotated[int | None, Query(ge=0, le=MAX_EVENT_ID)] = None,
) -> Response:
    return await sse_response(svc, request, principal, case_id, Audience.OPERATOR, after)
