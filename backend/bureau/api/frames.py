"""Live-stream frames, as schemas: what each event type carries to each audience.

A frame on the wire is `id: <event id>`, `event: <type>`, `data: <JSON>`, then a blank line (`: ping`
comments keep the connection alive). `OperatorFrame` and `StageFrame` describe a frame (one variant per
`EventType`, discriminated by `event`; `data`'s parsed schema is the payload model of that type and
audience, below). The operator receives the stored payload (card metadata
and traces, never content, whisper or question text); the stage receives the delivery gate's projection
(`api/delivery.py`), and nothing at all for a type projected to `None`. `api/openapi.py` adds both to the
OpenAPI document; the contract test validates every frame a live stream sends against them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from bureau.api.responses import (
    Absent,
    AnswerSummary,
    CardMeta,
    Language,
    Readership,
    ResponseModel,
    Role,
    SearchTrace,
    Space,
    StageRetrieval,
    Trace,
)
from bureau.scope.vocabulary import Certainty, EventType, Kind


class CaseEvent(ResponseModel):
    case_id: str
    version: int = Field(description="the case version after the change (0 on `case.erased`)")


# ----- operator payloads ---------------------------------------------------------------------------------


class CaseCreated(CaseEvent):
    scenario_id: str
    language: Language


class MemoryWritten(CaseEvent):
    card: CardMeta


class RetrievalCompleted(CaseEvent, SearchTrace):
    """The trace without `evidence` (that is `answer.completed`'s)."""


class AnswerCompleted(CaseEvent, AnswerSummary):
    role: Role


class PublicationStarted(CaseEvent):
    role: Role
    source_card_id: str


class PublicationCompleted(PublicationStarted):
    public_card_id: str
    idempotent: bool


class CrossExaminationCompleted(CaseEvent):
    roles: list[Role]
    certainty: Certainty
    audience: Readership
    sealed: bool
    traces: list[Trace]


class CardErased(CaseEvent):
    space: Space
    card_id: str
    board_card_ids: list[str]


class FindingPromoted(CaseEvent):
    """A finding reached the board: its id, its card and its figures; never a contributor."""

    finding_id: str
    public_card_id: str
    support: int
    leave_one_out: int
    contradictions: int


class FindingWithdrawn(CaseEvent):
    finding_id: str
    public_card_id: str | None


OPERATOR_PAYLOADS: dict[EventType, type[ResponseModel]] = {
    EventType.CASE_CREATED: CaseCreated,
    EventType.CASE_RESET: CaseEvent,
    EventType.CASE_ERASED: CaseEvent,
    EventType.MEMORY_WRITTEN: MemoryWritten,
    EventType.RETRIEVAL_COMPLETED: RetrievalCompleted,
    EventType.ANSWER_COMPLETED: AnswerCompleted,
    EventType.PUBLICATION_STARTED: PublicationStarted,
    EventType.PUBLICATION_COMPLETED: PublicationCompleted,
    EventType.CROSS_EXAMINATION_COMPLETED: CrossExaminationCompleted,
    EventType.CARD_ERASED: CardErased,
    EventType.FINDING_PROMOTED: FindingPromoted,
    EventType.FINDING_WITHDRAWN: FindingWithdrawn,
}


# ----- stage payloads (the delivery gate's projections) ------------------------------------------------------


class StageCardRef(ResponseModel):
    id: str
    topic: str
    kind: Kind
    source_role: Role | None


class StageMemoryWritten(CaseEvent):
    space: Space
    card: Absent[StageCardRef] = Field(default=None, description="only for a board copy")


class StageRetrievalCompleted(CaseEvent, StageRetrieval):
    pass


class StagePublicationStarted(CaseEvent):
    role: Role


class StagePublicationCompleted(StagePublicationStarted):
    public_card_id: str


class StageCrossExaminationCompleted(CaseEvent):
    """A sealed conclusion is announced and nothing else; an open one shows each role's public retrieval."""

    sealed: bool
    roles: Absent[list[Role]] = None
    retrievals: Absent[list[StageRetrieval | None]] = None


class StageCardErased(CaseEvent):
    board_card_ids: list[str] = Field(description="the board copies that disappeared (public ids only)")


class StageFindingPromoted(CaseEvent):
    public_card_id: str
    support: int


class StageFindingWithdrawn(CaseEvent):
    public_card_id: str | None


# `None`: the stage never receives this type (the delivery gate's table says the same; a test compares them).
STAGE_PAYLOADS: dict[EventType, type[ResponseModel] | None] = {
    EventType.CASE_CREATED: CaseEvent,
    EventType.CASE_RESET: CaseEvent,
    EventType.CASE_ERASED: CaseEvent,
    EventType.MEMORY_WRITTEN: StageMemoryWritten,
    EventType.RETRIEVAL_COMPLETED: StageRetrievalCompleted,
    EventType.ANSWER_COMPLETED: None,
    EventType.PUBLICATION_STARTED: StagePublicationStarted,
    EventType.PUBLICATION_COMPLETED: StagePublicationCompleted,
    EventType.CROSS_EXAMINATION_COMPLETED: StageCrossExaminationCompleted,
    EventType.CARD_ERASED: StageCardErased,
    EventType.FINDING_PROMOTED: StageFindingPromoted,
    EventType.FINDING_WITHDRAWN: StageFindingWithdrawn,
}


def _variant_name(audience: str, event: EventType) -> str:
    return f"{audience}{''.join(part.title() for part in event.replace('.', '_').split('_'))}Frame"


def frame_schemas(ref: Callable[[type[ResponseModel]], str]) -> dict[str, dict[str, Any]]:
    """`OperatorFrame` and `StageFrame`, each a union of one variant per event type, in the OpenAPI 3.2 form
    of an `itemSchema` of `text/event-stream`: a frame is `{id, event, data}` with `data` the JSON *text*,
    whose parsed schema is its `contentSchema` (`ref(model)` points at the payload model)."""
    schemas: dict[str, dict[str, Any]] = {}
    for audience, payloads in (("Operator", dict(OPERATOR_PAYLOADS)), ("Stage", STAGE_PAYLOADS)):
        mapping: dict[str, str] = {}
        for event, payload in payloads.items():
            if payload is None:
                continue
            name = _variant_name(audience, event)
            schemas[name] = {
                "type": "object",
                "required": ["id", "event", "data"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[0-9]+$", "description": "the resume cursor"},
                    "event": {"type": "string", "const": str(event)},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": {"$ref": ref(payload)},
                    },
                },
            }
            mapping[str(event)] = f"#/components/schemas/{name}"
        schemas[f"{audience}Frame"] = {
            "oneOf": [{"$ref": target} for target in mapping.values()],
            "discriminator": {"propertyName": "event", "mapping": mapping},
        }
    return schemas


def payload_models() -> list[type[ResponseModel]]:
    """Every payload model a frame can carry, for the OpenAPI document's components."""
    models = [*OPERATOR_PAYLOADS.values(), *STAGE_PAYLOADS.values()]
    return list(dict.fromkeys(m for m in models if m is not None))
