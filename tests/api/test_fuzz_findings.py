"""What the schemathesis fuzz (test_fuzz.py) found, one regression test each."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from jsonschema import ValidationError

from bureau.api.deps import Services
from bureau.api.events import render
from bureau.scope.audience import Audience
from contract import OpenApiContract
from helpers import NewCase


async def test_a_405_names_every_method_the_path_accepts(client: httpx.AsyncClient, new_case: NewCase) -> None:
    """Each FastAPI endpoint is its own route, and Starlette's 405 named only the first one's methods:
    `OPTIONS /api/session` answered `Allow: GET` although POST and DELETE exist."""
    session = await client.options("/api/session")
    assert session.status_code == 405
    assert session.json()["detail"]["code"] == "METHOD_NOT_ALLOWED"
    assert {m.strip() for m in session.headers["allow"].split(",")} >= {"GET", "POST", "DELETE"}
    case_id = (await new_case())["case"]["id"]
    case = await client.put(f"/api/cases/{case_id}", json={})
    assert case.status_code == 405
    assert {m.strip() for m in case.headers["allow"].split(",")} >= {"GET", "DELETE"}
    assert "POST" not in case.headers["allow"]


async def test_the_document_says_a_cross_examination_names_each_role_once(client: httpx.AsyncClient) -> None:
    """`roles: ["suspect", "suspect"]` matched the document and was refused with 422: the rule is declared."""
    document: dict[str, Any] = (await client.get("/openapi.json")).json()
    roles = document["components"]["schemas"]["CrossExaminationBody"]["properties"]["roles"]
    assert roles["uniqueItems"] is True
    assert (roles["minItems"], roles["maxItems"]) == (2, 3)


async def test_a_stream_is_declared_as_the_wire_carries_it(
    services: Services, contract: OpenApiContract, new_case: NewCase
) -> None:
    """The streams' `itemSchema` was the parsed frame (`id` an integer, `data` an object), but an OpenAPI 3.2
    `text/event-stream` item is the event as sent: strings, with `data` JSON of the declared payload."""
    case_id = (await new_case())["case"]["id"]
    [created] = await services.ledger.events.events_after(case_id, 0)
    for audience, schema in ((Audience.STAGE, "StageFrame"), (Audience.OPERATOR, "OperatorFrame")):
        frame = render(created, audience)
        assert frame is not None
        fields = dict(line.split(": ", 1) for line in frame.strip().split("\n"))
        contract.validate_component(fields, schema)
        with pytest.raises(ValidationError):  # the parsed shape is not what the wire carries
            contract.validate_component({**fields, "id": int(fields["id"]), "data": json.loads(fields["data"])}, schema)


# ----- issue 32: schema-valid requests the game refused, now stated by the schema (422 with the field) -------

REFUSED_BY_THE_GAME_BEFORE = [
    # A 2 000-character claim fitted the old transport cap; the game's limit is 240 (`maxLength` now).
    ("/findings", {"claim": "c" * 2000}, ["body", "claim"], "string_too_long"),
    ("/findings/evaluate", {"claim": "c" * 2000}, ["body", "claim"], "string_too_long"),
    # A key on a whisper that is not a preference (400 PREFERENCE_KEY_UNKNOWN before).
    (
        "/whispers",
        {"role": "detective", "text": "A van.", "key": "answer_style"},
        ["body", "other_types", "key"],
        "none_required",
    ),
    # A control character as a question (nothing visible once the game dropped it).
    ("/interrogations", {"role": "detective", "question": "\x01"}, ["body", "question"], "string_pattern_mismatch"),
    # A real lone surrogate is no Unicode text (pydantic says so before any pattern).
    (
        "/cross-examinations",
        {"roles": ["detective", "suspect"], "question": "\ud800"},
        ["body", "question"],
        "string_unicode",
    ),
]


@pytest.mark.parametrize(("route", "body", "path", "error"), REFUSED_BY_THE_GAME_BEFORE, ids=lambda v: str(v)[:20])
async def test_what_the_game_refused_the_schema_now_states(
    route: str, body: dict[str, Any], path: list[str], error: str, client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case_id = (await new_case())["case"]["id"]
    sent = json.dumps(body)  # ASCII, so a lone surrogate travels as the escape `\ud800` (httpx's `json=` cannot)
    response = await client.post(
        f"/api/cases/{case_id}{route}", content=sent, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert response.json()["detail"]["fields"] == [{"loc": path, "type": error}]


async def test_a_question_of_a_code_point_unicode_14_leaves_unassigned_is_asked(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    """The cross-examination question the fuzzer sent as `"\\ud95f\\uded2"` was no lone surrogate but a pair:
    U+67ED2, unassigned. The game called it invisible (400); the rule now counts it as drawing something (a
    replacement glyph), in the schema and in the game alike, so it is asked."""
    case_id = (await new_case())["case"]["id"]
    body = {"roles": ["detective", "suspect"], "question": "\U00067ed2"}
    response = await client.post(f"/api/cases/{case_id}/cross-examinations", json=body)
    assert response.status_code == 200, response.text
