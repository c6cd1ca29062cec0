"""The delivery gate's stage projection names every event type: a new type cannot be silently dropped or
silently leaked; someone has to decide what the stage may see of it."""

from __future__ import annotations

from bureau.api.delivery import STAGE_PROJECTIONS, project_event
from bureau.scope.audience import Audience
from bureau.scope.vocabulary import EventType

PRIVATE_PAYLOAD = {"case_id": "c1", "version": 3, "role": "informant", "certainty": "known", "evidence": ["42"]}


def test_every_event_type_has_an_explicit_stage_projection() -> None:
    assert set(STAGE_PROJECTIONS) == set(EventType)


def test_the_answer_is_private_and_an_unknown_type_projects_to_nothing() -> None:
    assert project_event(Audience.STAGE, EventType.ANSWER_COMPLETED, PRIVATE_PAYLOAD) is None
    assert project_event(Audience.STAGE, "answer.leaked", PRIVATE_PAYLOAD) is None
    assert project_event(Audience.OPERATOR, EventType.ANSWER_COMPLETED, PRIVATE_PAYLOAD) == PRIVATE_PAYLOAD


def test_every_stage_projection_keeps_only_named_fields() -> None:
    for event_type, projection in STAGE_PROJECTIONS.items():
        if projection is None:
            continue
        projected = project_event(Audience.STAGE, event_type, PRIVATE_PAYLOAD)
        assert projected is not None and projected["case_id"] == "c1"
        assert "evidence" not in projected and "certainty" not in projected, event_type
