"""What the schemathesis fuzz (test_fuzz.py) found, one regression test each."""

from __future__ import annotations

from typing import Any

import httpx

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
