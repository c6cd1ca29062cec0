"""Hostile input at the transport: cross-site writes, body cap, malformed bodies, cursors, methods, headers,
blank text, the passcode throttle per screen, authentication before the body is read.

Open-mode checks run in process; the ones about the built web app's catch-all and passcode mode run against
a real `bureau serve` process.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response

from bureau.api.deps import Services
from bureau.api.errors import ApiError
from bureau.api.security import AccessControl
from conftest import test_settings as settings_for
from helpers import NewCase, signed_in_headers, snapshot
from live_server import OPERATOR_PASSCODE, STAGE_PASSCODE, LiveServer, passcode_mode


def code(response: httpx.Response) -> str:
    return response.json()["detail"]["code"]


async def case_version(client: httpx.AsyncClient, case_id: str) -> int:
    return (await snapshot(client, case_id))["case"]["version"]


# ----- cross-site writes in open mode ------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1"},
    ],
)
async def test_open_mode_refuses_writes_from_another_site(
    headers: dict[str, str], client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    reset = await client.post(f"/api/cases/{case_id}/reset", headers=headers)
    assert reset.status_code == 403
    assert code(reset) == "CSRF_REQUIRED"
    whisper = await client.post(
        f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": "Planted."}, headers=headers
    )
    assert whisper.status_code == 403
    assert await case_version(client, case_id) == case["case"]["version"]


async def test_open_mode_refuses_bodies_that_are_not_json(client: httpx.AsyncClient, new_case: NewCase) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    # What an auto-submitted form sends: a non-JSON type, no preflight.
    form = await client.post(
        f"/api/cases/{case_id}/reset",
        content=b"x=1",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 415
    assert code(form) == "UNSUPPORTED_MEDIA_TYPE"
    plain = await client.post(
        f"/api/cases/{case_id}/whispers",
        content=json.dumps({"role": "detective", "text": "Planted."}),
        headers={"Content-Type": "text/plain"},
    )
    assert plain.status_code == 415
    assert await case_version(client, case_id) == case["case"]["version"]
    # The page's own requests still work: same origin, JSON or no body at all.
    same_origin = {"Origin": "http://127.0.0.1", "Sec-Fetch-Site": "same-origin"}
    assert (await client.post(f"/api/cases/{case_id}/reset", headers=same_origin)).status_code == 200


# ----- bodies ------------------------------------------------------------------------------------------


async def test_a_body_over_the_cap_is_413_and_writes_nothing(client: httpx.AsyncClient, new_case: NewCase) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    padded = {"role": "detective", "text": "A note." + " " * 100_000}
    response = await client.post(f"/api/cases/{case_id}/whispers", json=padded)
    assert response.status_code == 413
    assert code(response) == "PAYLOAD_TOO_LARGE"

    async def chunks():  # no Content-Length: the cap counts what arrives
        yield b'{"role": "detective", "text": "A note.'
        for _ in range(20):
            yield b" " * 8192
        yield b'"}'

    streamed = await client.post(
        f"/api/cases/{case_id}/whispers", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413
    assert code(streamed) == "PAYLOAD_TOO_LARGE"
    assert await case_version(client, case_id) == case["case"]["version"]


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 1000 + b"]" * 1000,  # deep nesting
        b'{"role": "detective", "question": "\xff\xfe"}',  # invalid UTF-8
        b'{"role": "detective", "question": "Who?", "expected_version": ' + b"9" * 5000 + b"}",  # huge integer
        b'{"role": "detective", "question": ',  # truncated
    ],
)
async def test_every_malformed_body_is_a_422_validation_error(
    raw: bytes, client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    response = await client.post(
        f"/api/cases/{case_id}/interrogations", content=raw, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert code(response) == "VALIDATION_ERROR"
    assert await case_version(client, case_id) == case["case"]["version"]


async def test_validation_errors_are_bounded(client: httpx.AsyncClient, new_case: NewCase) -> None:
    case = await new_case()
    body: dict[str, Any] = {"role": "detective", "question": "Who?"} | {f"k{i}": 1 for i in range(5000)}
    response = await client.post(f"/api/cases/{case['case']['id']}/interrogations", json=body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert len(detail["fields"]) <= 20
    assert detail["truncated"] is True
    assert len(response.content) < 4096


# ----- cursors -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", ["/events", "/stage/events"])
async def test_a_huge_cursor_is_refused_with_422_not_500(
    stream: str, client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case_id = (await new_case())["case"]["id"]
    huge = "9" * 4400
    header = await client.get(f"/api/cases/{case_id}{stream}", headers={"Last-Event-ID": huge})
    assert header.status_code == 422
    assert code(header) == "VALIDATION_ERROR"
    assert huge not in header.text
    query = await client.get(f"/api/cases/{case_id}{stream}", params={"after": huge})
    assert query.status_code == 422
    assert huge not in query.text


# ----- methods and headers -----------------------------------------------------------------------------


async def test_wrong_methods_are_405_and_head_answers_get_routes(client: httpx.AsyncClient, new_case: NewCase) -> None:
    case_id = (await new_case())["case"]["id"]
    wrong = await client.get(f"/api/cases/{case_id}/whispers")
    assert wrong.status_code == 405
    assert code(wrong) == "METHOD_NOT_ALLOWED"
    for path in ("/api/health", f"/api/cases/{case_id}", f"/api/cases/{case_id}/stage"):
        head = await client.head(path)
        assert head.status_code == 200, path
        assert head.content == b""


async def test_private_answers_are_not_cached_and_carry_security_headers(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case_id = (await new_case())["case"]["id"]
    for path in (f"/api/cases/{case_id}", f"/api/cases/{case_id}/stage", "/api/health"):
        response = await client.get(path)
        assert response.headers["cache-control"] == "no-store", path
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]


# ----- text that looks blank ---------------------------------------------------------------------------


@pytest.mark.parametrize("blank", ["\u2800\u2800\u2800", "\u115f\u1160", "\u3164", "\u200b\u2800 \ufeff"])
async def test_blank_looking_text_is_rejected(blank: str, client: httpx.AsyncClient, new_case: NewCase) -> None:
    """Text that draws nothing is malformed by the schema's pattern (`scope/limits.py`): a 422 naming the field."""
    case = await new_case()
    case_id = case["case"]["id"]
    whisper = await client.post(f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": blank})
    assert whisper.status_code == 422
    assert whisper.json()["detail"]["fields"] == [
        {"loc": ["body", "other_types", "text"], "type": "string_pattern_mismatch"}
    ]
    question = await client.post(f"/api/cases/{case_id}/interrogations", json={"role": "detective", "question": blank})
    assert question.status_code == 422
    assert question.json()["detail"]["fields"] == [{"loc": ["body", "question"], "type": "string_pattern_mismatch"}]
    assert await case_version(client, case_id) == case["case"]["version"]


# ----- the passcode throttle ---------------------------------------------------------------------------


def sign_in_request(passcode: str, client: str = "203.0.113.7") -> Request:
    return Request(
        {
            "type": "http",
            "method": "POST",
            "path": "/api/session",
            "headers": [(b"x-bureau-passcode", passcode.encode())],
            "client": (client, 40000),
            "state": {},
        }
    )


async def attempt(access: AccessControl, passcode: str, client: str = "203.0.113.7") -> int:
    try:
        await access.sign_in(sign_in_request(passcode, client), Response())
    except ApiError as refused:
        return refused.status
    return 204


async def test_a_success_on_one_screen_never_clears_the_other_screens_failures(
    services: Services, tmp_path: Path
) -> None:
    settings = settings_for(tmp_path, operator_passcode=OPERATOR_PASSCODE, stage_passcode=STAGE_PASSCODE)
    access = AccessControl(settings, services.ledger.sessions, services.ledger.limits)
    # A holder of the stage passcode guesses the operator passcode, signing in to the stage in between.
    for round_ in range(2):
        assert [await attempt(access, f"guess-{round_}-{i}") for i in range(2)] == [401, 401]
        assert await attempt(access, STAGE_PASSCODE) == 204
    assert await attempt(access, "guess-last") == 401
    # Five failures: the operator screen is throttled, even for the right passcode, and a wrong guess looks
    # the same; the stage screen (cleared by its own successes) still opens.
    assert await attempt(access, OPERATOR_PASSCODE) == 429
    assert await attempt(access, "guess-again") == 429
    assert await attempt(access, STAGE_PASSCODE) == 204
    # Another client is counted on its own.
    assert await attempt(access, OPERATOR_PASSCODE, client="198.51.100.9") == 204


# ----- a real server: passcode mode and the built web app ----------------------------------------------


@pytest.fixture(scope="module")
def passcode_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    dist = tmp_path_factory.mktemp("web-dist")
    (dist / "index.html").write_text("<!doctype html><title>bureau</title>")
    with passcode_mode(tmp_path_factory.mktemp("transport-data"), BUREAU_WEB_DIST=str(dist)) as server:
        yield server


async def test_anonymous_requests_are_401_before_the_body_is_read(passcode_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=passcode_server.url, timeout=30) as http:
        for raw in (b"[" * 1000 + b"]" * 1000, b"\xff", b'{"scenario_id": 12}', b"{" + b" " * 100_000 + b"}"):
            response = await http.post("/api/cases", content=raw, headers={"Content-Type": "application/json"})
            assert response.status_code in (401, 413), response.text
            if len(raw) < 65536:
                assert response.status_code == 401
                assert code(response) == "ACCESS_REQUIRED"


async def test_the_web_catch_all_serves_only_get_of_non_api_paths(passcode_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=passcode_server.url, timeout=30) as http:
        page = await http.get("/console")
        assert page.status_code == 200
        assert "<title>bureau</title>" in page.text
        assert page.headers["x-frame-options"] == "DENY"
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert page.headers["x-content-type-options"] == "nosniff"
        assert (await http.head("/console")).status_code == 200
        signed = await http.post("/api/session", headers={"X-Bureau-Passcode": OPERATOR_PASSCODE})
        cookies = {"Cookie": f"bureau_session={signed.cookies['bureau_session']}"}
        wrong = await http.get("/api/cases/abcdefabcdef/whispers", headers=cookies)
        assert wrong.status_code == 405
        assert code(wrong) == "METHOD_NOT_ALLOWED"
        assert "POST" in wrong.headers["allow"]
        missing = await http.get("/api/no-such-route", headers=cookies)
        assert missing.status_code == 404
        assert (await http.post("/console")).status_code == 405


async def test_head_on_a_stream_sends_headers_and_ends(passcode_server: LiveServer) -> None:
    async with httpx.AsyncClient(base_url=passcode_server.url, timeout=30) as http:
        headers = await signed_in_headers(http, OPERATOR_PASSCODE)
        created = await http.post("/api/cases", json={"scenario_id": "mole"}, headers=headers)
        case_id = created.json()["case"]["id"]
        head = await asyncio.wait_for(http.head(f"/api/cases/{case_id}/events", headers=headers), 10)
        assert head.status_code == 200
        assert head.headers["content-type"].startswith("text/event-stream")
        assert head.content == b""
