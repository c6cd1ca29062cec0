"""Live-stream frames, as schemas: what each event type carries to each audience.

A frame on the wire is `id: <event id>`, `event: <type>`, `data: <JSON>`, then a blank line (`: ping`
comments keep the connection alive). `OperatorFrame` and `StageFrame` describe a frame after parsing, one
variant per `EventType`, discriminated by `event`. The operator receives the stored payload (card metadata
and traces, never content, whisper or question text); the stage receives the delivery gate's projection
(`api/delivery.py`), and nothing at all for a type projected to `None`. `api/openapi.py` adds both to the
OpenAPI document; the contract test validates every frame a live stream sends against them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, TypeAdapter, create_model

from bureau.api.responses import (
    Absent,
    AnswerSummary,
    CardMeta,
    Language,
    Readership,
    Role,
    SearchTrace,
    Space,
    StageRetrieval,
    Trace,
    _Out,
)
from bureau.scope.vocabulary import Certainty, EventType, Kind


class CaseEvent(_Out):
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


OPERATOR_PAYLOADS: dict[EventType, type[_Out]] = {
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
}


# ----- stage payloads (the delivery gate's projections) ------------------------------------------------------


class StageCardRef(_Out):
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


# `None`: the stage never receives this type (the delivery gate's table says the same; a test compares them).
STAGE_PAYLOADS: dict[EventType, type[_Out] | None] = {
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
}


def _frame_union(audience: str, payloads: dict[EventType, type[_Out] | None]) -> Any:
    """One frame model per event type (`{id, event: <that type>, data: <its payload>}`), as a union
    discriminated by `event`."""
    variants = tuple(
        create_model(
            f"{audience}{''.join(part.title() for part in event.replace('.', '_').split('_'))}Frame",
            __base__=_Out,
            id=(int, Field(description="the event's ledger id: the resume cursor")),
            event=(Literal[event], ...),  # type: ignore[arg-type]  # a literal built at run time
            data=(payload, ...),
        )
        for event, payload in payloads.items()
        if payload is not None
    )
    return Annotated[Union[variants], Field(discriminator="event")]  # noqa: UP007 (built at run time)


# Every frame of `GET /api/cases/{case_id}/events` and of `GET /api/cases/{case_id}/stage/events`.
OperatorFrame = TypeAdapter(_frame_union("Operator", dict(OPERATOR_PAYLOADS)))
StageFrame = TypeAdapter(_frame_union("Stage", STAGE_PAYLOADS))
FRAMES = {"OperatorFrame": OperatorFrame, "StageFrame": StageFrame}
