"""Schemathesis against the app's own OpenAPI document: every operation, open mode and passcode mode.

Real HTTP into real `bureau serve` processes (so the transport rules — CSRF, 415, 413, the body cap — and
uvicorn's own parsing are in the path), over the real store. Valid and invalid inputs (`mode: all`); no
answer may be a 5xx, and every answer must match what the document declares for it.
Case-scoped operations mostly get a real case id (a random one only reaches the 404), and a case erased
by the fuzzer is replaced. In passcode mode every request carries a signed-in operator session and its
CSRF token; signing out uses a spare session, so the fuzzer never signs itself out.

Bounded and reproducible in `make test` (few examples, fixed seed, no example database); `make fuzz` runs
the same operations with `FUZZ_MAX_EXAMPLES` examples each.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from bureau.api.app import create_app
from conftest import test_settings as settings_for
from helpers import session_headers
from live_server import OPERATOR_PASSCODE, LiveServer

MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "6"))
LONG_PROFILE = MAX_EXAMPLES > 6
SPARE_SESSIONS = 20
CONFIG = schemathesis.Config.from_dict(
    {
        "seed": 14,
        "max-stream-events": 1,  # a live stream of a real case: its first event is enough
        "request-timeout": 20,
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True, "database": "none"},
        # Schema-valid input the game's own rules still refuse: 400 UNSAFE_INPUT (nothing visible or over 280
        # characters once normalised, personal data, injection phrases), documented in docs/api.md. A blank
        # text is schema-invalid (`pattern: \S`): 422.
        "checks": {"positive_data_acceptance": {"expected-statuses": ["2XX", 400, 401, 403, 404, 409, 429]}},
        # Boundary values of every parameter: many calls per operation, so only in the long profile.
        "phases": {"coverage": {"enabled": LONG_PROFILE}},
    }
)
# The document the server serves, read from the app itself: collection needs no running server.
schema = schemathesis.openapi.from_dict(create_app(settings_for(Path("unused"))).openapi(), config=CONFIG)


@dataclass
class Target:
    """One server under fuzzing: where it is, who is signed in, the case the fuzzer plays with."""

    server: LiveServer
    headers: dict[str, str] = field(default_factory=dict)
    spare_sessions: list[dict[str, str]] = field(default_factory=list)
    case_id: str = ""

    def http(self) -> httpx.Client:
        return httpx.Client(base_url=self.server.url, headers=self.headers, timeout=30)

    def new_case(self) -> None:
        with self.http() as http:
            created = http.post("/api/cases", json={"scenario_id": "mole"})
        assert created.status_code == 201, created.text
        self.case_id = created.json()["case"]["id"]


def sign_in(server: LiveServer, passcode: str) -> dict[str, str]:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        return session_headers(http.post("/api/session", headers={"X-Bureau-Passcode": passcode}))


@pytest.fixture(scope="module")
def open_target(live_server: LiveServer) -> Target:
    target = Target(live_server)
    target.new_case()
    return target


@pytest.fixture(scope="module")
def passcode_target(passcode_server: LiveServer) -> Target:
    # Every session up front: once the fuzzer has sent wrong passcodes, this client is throttled.
    target = Target(passcode_server, sign_in(passcode_server, OPERATOR_PASSCODE))
    target.spare_sessions = [sign_in(passcode_server, OPERATOR_PASSCODE) for _ in range(SPARE_SESSIONS)]
    target.new_case()
    return target


def aim(case: schemathesis.Case, target: Target) -> dict[str, str]:
    """Point the case at the target's real case (three times in four, decided by the generated data, so a
    run is reproducible) and choose the session headers it is sent with."""
    path = case.path_parameters or {}
    if "case_id" in path and hashlib.sha256(repr(path).encode()).digest()[0] % 4:
        path["case_id"] = target.case_id
    if case.method == "DELETE" and case.path == "/api/session" and target.headers:
        return target.spare_sessions.pop() if target.spare_sessions else {}
    return target.headers


def fuzz(case: schemathesis.Case, target: Target) -> None:
    headers = aim(case, target)
    response = case.call(base_url=target.server.url, headers=headers)
    assert response.status_code < 500, (
        f"{response.status_code} {response.text[:500]}\n{target.server.log_text()[-3000:]}"
    )
    case.validate_response(response, headers=headers)  # every check: schemas and statuses are declared
    erased = case.method == "DELETE" and case.path == "/api/cases/{case_id}" and response.status_code == 204
    if erased and case.path_parameters["case_id"] == target.case_id:
        target.new_case()  # the fuzzer erased its case: give the next operations a live one


FUZZ_SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@schema.parametrize()
@FUZZ_SETTINGS
def test_open_mode(case: schemathesis.Case, open_target: Target) -> None:
    fuzz(case, open_target)


@schema.parametrize()
@FUZZ_SETTINGS
def test_passcode_mode(case: schemathesis.Case, passcode_target: Target) -> None:
    fuzz(case, passcode_target)
