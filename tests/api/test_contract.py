"""The contract: every route's real responses validate against the app's own OpenAPI document.

The whole game runs over real HTTP against a live `bureau serve` in passcode mode (signed in as the operator
and as the stage): whisper, the three certainties, publish, ask again after publishing (the board copy is a
`duplicate` miss), a sealed cross-examination, the record and both exports, subject access, card deletion,
reset, erase, the stage snapshot and record, both live streams, signing out, and every error code the server
can be driven to from outside. Each response is checked against the declared schema of its route and status;
each stream frame against the frame schema of its audience. The two codes only an in-process app can show
(a foreign Host in open play, a storage fault) are provoked through the in-process client, which checks every
response it receives the same way (conftest).
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import pytest_asyncio

from bureau.api.delivery import STAGE_PROJECTIONS
from bureau.api.deps import Services
from bureau.api.errors import ERRORS
from bureau.api.frames import OPERATOR_PAYLOADS, STAGE_PAYLOADS
from bureau.ledger.database import create_ledger_engine
from bureau.ledger.repository import FindingFigures, Ledger
from bureau.memory.types import MemoryUnavailableError
from bureau.scope.keys import case_scopes
from bureau.scope.vocabulary import Certainty, EventType, Purpose
from bureau.vault import VaultUnavailableError
from contract import OpenApiContract
from helpers import QUESTION, NewCase, informant_secret_card, signed_in_headers
from live_server import OPERATOR_PASSCODE, STAGE_PASSCODE, LiveServer, open_vault_of, passcode_mode
from sse_client import open_sse

PORTER = "The night porter saw a courier with a violet umbrella."
# A claim three roles are told by three different sources: a finding that qualifies (docs/findings.md).
FINDING = "The courier crossed the bridge at dawn."
FINDING_SOURCES = ("the lock keeper", "the baker", "a cyclist")
# Provoked in-process below (they need open play on loopback, or an injected storage fault).
IN_PROCESS = {"HOST_NOT_ALLOWED", "MEMORY_UNAVAILABLE", "VAULT_UNAVAILABLE", "PRESENTER_ACTS_OFF"}
# Not provoked here: a crash, a lost worker-id lease (tests/e2e/test_worker_ids.py), a server still starting
# (tests/e2e/test_startup.py) and a locked, read-only or full ledger (tests/faults/test_ledger_faults.py; both
# check those answers against the document). Their body is the common ErrorBody, declared on every route that
# can meet them.
NOT_PROVOKED = {"INTERNAL_ERROR", "WORKER_ID_LOST", "STARTING", "LEDGER_BUSY", "LEDGER_READ_ONLY", "STORAGE_FULL"}
# Not reachable over HTTP at all: a preference's key and value are the request schema's (422); the memory policy
# still raises these for writes that come another way (tests/api/test_memory_policy_api.py).
NOT_OVER_HTTP = {"PREFERENCE_KEY_UNKNOWN", "PREFERENCE_VALUE_INVALID"}


def code(response: httpx.Response) -> str:
    return response.json()["detail"]["code"]


def marker() -> str:
    return "zq" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(12))


# ----- the document itself -------------------------------------------------------------------------------


def test_every_error_is_declared_with_the_error_schema_and_the_tables_status(contract: OpenApiContract) -> None:
    for template, operations in contract.document["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                if int(status) < 400:
                    continue
                schema = response["content"]["application/json"]["schema"]["$ref"]
                assert schema.rsplit("/", 1)[-1].endswith("Body"), (method, template, status)
                for listed in response["description"].split(", "):
                    assert ERRORS[listed].status == int(status), (method, template, listed)
    text = json.dumps(contract.document)
    assert '"additionalProperties": true' not in text  # every body is a declared shape
    assert "HTTPValidationError" not in text  # FastAPI's own 422 schema is not the body api/errors.py sends


def test_the_declared_422_is_the_body_api_errors_sends(contract: OpenApiContract) -> None:
    body = {"detail": {"code": "VALIDATION_ERROR", "message": "m", "fields": [{"loc": ["body"], "type": "x"}]}}
    contract.validate_component(body, "ValidationErrorBody")
    with pytest.raises(Exception, match="detail"):  # FastAPI's default shape is not accepted
        contract.validate_component({"detail": [{"loc": ["body"], "msg": "m", "type": "x"}]}, "ValidationErrorBody")


def test_the_streams_are_documented_with_a_frame_per_event_type(contract: OpenApiContract) -> None:
    for path, frame in (
        ("/api/cases/{case_id}/events", "OperatorFrame"),
        ("/api/cases/{case_id}/stage/events", "StageFrame"),
    ):
        ok = contract.document["paths"][path]["get"]["responses"]["200"]["content"]
        assert ok["text/event-stream"]["itemSchema"] == {"$ref": f"#/components/schemas/{frame}"}
    assert set(OPERATOR_PAYLOADS) == set(EventType)
    # The stage frames are exactly the delivery gate's: a type it never sends has no stage frame.
    assert {t: p is None for t, p in STAGE_PAYLOADS.items()} == {t: p is None for t, p in STAGE_PROJECTIONS.items()}
    stage_events = set(contract.document["components"]["schemas"]["StageFrame"]["discriminator"]["mapping"])
    assert stage_events == {str(t) for t, p in STAGE_PAYLOADS.items() if p is not None}


# ----- the whole game over real HTTP ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def passcode_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """This module's passcode server, with the presenter act on (every operation must succeed once here)."""
    with passcode_mode(tmp_path_factory.mktemp("contract-data"), BUREAU_PRESENTER_ACTS="1") as server:
        yield server


@pytest_asyncio.fixture(scope="module")
async def live(passcode_server: LiveServer, contract: OpenApiContract) -> AsyncIterator[httpx.AsyncClient]:
    async def check_contract(response: httpx.Response) -> None:
        if "text/event-stream" not in response.headers.get("content-type", ""):
            await response.aread()
            contract.check(response)

    async with httpx.AsyncClient(
        base_url=passcode_server.url, timeout=60, event_hooks={"response": [check_contract]}
    ) as http:
        yield http


class Game:
    """The operator's and the stage's requests against one case, collecting the error codes met."""

    def __init__(self, http: httpx.AsyncClient, operator: dict[str, str], stage: dict[str, str]) -> None:
        self.http, self.operator, self.stage = http, operator, stage
        self.codes: set[str] = set()
        self.base = ""

    async def call(self, method: str, path: str, status: int, *, as_stage: bool = False, **kw: Any) -> Any:
        headers = {**(self.stage if as_stage else self.operator), **kw.pop("headers", {})}
        url = path if path.startswith("/api/") else self.base + path
        response = await self.http.request(method, url, headers=headers, **kw)
        assert response.status_code == status, (method, path, response.text)
        if status >= 400:
            self.codes.add(code(response))
        return response.json() if response.content and "json" in response.headers.get("content-type", "") else None

    async def ask(self, role: str, question: str) -> dict[str, Any]:
        return await self.call("POST", "/interrogations", 200, json={"role": role, "question": question})

    async def whisper(self, role: str, text: str, **extra: Any) -> dict[str, Any]:
        return (await self.call("POST", "/whispers", 201, json={"role": role, "text": text, **extra}))["card"]


async def play(game: Game, secured_server: LiveServer) -> None:
    for path in ("/api/health", "/api/ready", "/api/session", "/api/scenarios", "/api/memory-policy"):
        await game.call("GET", path, 200)
    case = await game.call("POST", "/api/cases", 201, json={"scenario_id": "safe-combination"})
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    game.base = f"/api/cases/{case_id}"
    await game.call("GET", "", 200)
    assert (await game.call("GET", "/api/stage/latest", 200, as_stage=True))["case_id"] == case_id

    # The three certainties, then publish and ask again: the board copy of the informant's own card.
    porter = await game.whisper("detective", PORTER)
    assert (await game.ask("detective", "Who did the night porter see?"))["certainty"] == Certainty.KNOWN
    uncertain = await game.ask("detective", "What was the courier carrying?")
    assert uncertain["certainty"] == Certainty.UNCERTAIN and uncertain["evidence"] == [porter["id"]]
    assert (await game.ask("detective", QUESTION))["certainty"] == Certainty.UNKNOWN
    await game.whisper("suspect", "vegetarian", memory_type="user_preference", key="dietary_preference")
    first = await game.call("POST", "/publications", 201, json={"role": "informant", "card_id": secret["id"]})
    again = await game.call("POST", "/publications", 200, json={"role": "informant", "card_id": secret["id"]})
    assert (first["idempotent"], again["idempotent"]) == (False, True)
    informant = await game.ask("informant", QUESTION)
    assert "duplicate" in {miss["reason"] for miss in informant["trace"]["misses"]}
    assert (await game.ask("detective", QUESTION))["certainty"] == Certainty.KNOWN
    # The presenter act (this server has them on, and says so): the same answer, other compartments' rows locked.
    assert (await game.call("GET", "/api/health", 200))["presenter_acts"] is True
    act = await game.call("POST", "/acts/unfiltered", 200, json={"role": "detective", "question": QUESTION})
    assert act["certainty"] == Certainty.KNOWN and act["trace"]["unfiltered"] is True

    # A sealed cross-examination: two roles' private cards.
    m = marker()
    cellar = await game.whisper("informant", f"Marker {m} hides in the cellar.")
    await game.whisper("suspect", f"Marker {m} hides in the attic.")
    crossed = await game.call(
        "POST",
        "/cross-examinations",
        200,
        json={"roles": ["informant", "suspect"], "question": f"Where does marker {m} hide?"},
    )
    assert crossed["conclusion"]["sealed"] is True

    # Findings: evaluate (a given claim, then the server's proposals), promote, repeat, list; one that does not
    # qualify; one whose promotion another instance holds.
    told = [
        await game.whisper(role, FINDING, source=source)
        for role, source in zip(("detective", "informant", "suspect"), FINDING_SOURCES, strict=True)
    ]
    assert told[0]["told_by"] == FINDING_SOURCES[0]
    [evaluated] = (await game.call("POST", "/findings/evaluate", 200, json={"claim": FINDING}))["claims"]
    assert evaluated["decision"] == "qualifies"
    await game.call("POST", "/findings/evaluate", 200, json={})
    promoted = await game.call("POST", "/findings", 201, json={"claim": FINDING})
    assert (await game.call("POST", "/findings", 200, json={"claim": FINDING}))["card"] == promoted["card"]
    assert [f["state"] for f in (await game.call("GET", "/findings", 200))["findings"]] == ["ready"]
    await game.call("POST", "/findings", 409, json={"claim": PORTER})  # one role: FINDING_NOT_QUALIFIED
    async with HeldFinding(secured_server, case_id, "The courier crossed the river at dusk."):
        await game.call("POST", "/findings", 409, json={"claim": "The courier crossed the river at dusk."})

    # The record, its exports, subject access and the stage's views; then delete a card.
    await game.call("GET", "/record", 200)
    await game.call("GET", "/record/export", 200)
    await game.call("GET", "/record/export", 200, params={"format": "markdown"})
    await game.call("GET", "/subject-access", 200)
    await game.call("GET", "/policy-decisions", 200, params={"limit": 5})
    stage = await game.call("GET", "/stage", 200, as_stage=True)
    assert set(stage["last_conclusion"]) == {"id", "kind", "created_at", "sealed"}  # a sealed one: announced only
    await game.call("GET", "/stage/record", 200, as_stage=True)
    await game.call("DELETE", f"/cards/{cellar['id']}", 204)
    await game.call("GET", "/record", 200)  # an entry whose ingredient was erased: its texts are null

    # Every error a client can meet from outside.
    version = (await game.call("GET", "", 200))["case"]["version"]
    no_csrf = {"Cookie": game.operator["Cookie"], "X-CSRF-Token": ""}
    await game.call("GET", "/api/cases/no-such-case-000", 404)
    await game.call("POST", "/publications", 404, json={"role": "detective", "card_id": secret["id"]})
    await game.call("POST", "/api/cases", 404, json={"scenario_id": "no-such-scenario"})
    await game.call("POST", "/whispers", 400, json={"role": "suspect", "text": "Call me on +44 20 7946 0958."})
    await game.call("POST", "/whispers", 403, json={"role": "suspect", "text": "Late.", "memory_type": "session"})
    await game.call(
        "POST", "/whispers", 422, json={"role": "suspect", "text": "Late.", "memory_type": "user_preference"}
    )
    await game.call(
        "POST", "/whispers", 422, json={"role": "suspect", "text": "klingon", "memory_type": "user_preference",
                                        "key": "preferred_language"},
    )  # fmt: skip
    conflict = await game.call(
        "POST", "/whispers", 409, json={"role": "suspect", "text": "Late.", "expected_version": 0}
    )
    assert conflict["detail"]["snapshot"]["case"]["version"] == version
    await game.call("POST", "/interrogations", 422, json={"role": "bulletin_board", "question": QUESTION})
    await game.call("GET", "/events", 422, headers={"Last-Event-ID": "not-a-number"})
    await game.call("GET", "/api/no-such-route", 404)
    await game.call("PUT", "", 405)
    await game.call(
        "POST", "/reset", 413, content=b"{" + b" " * 70_000 + b"}", headers={"content-type": "application/json"}
    )
    await game.call("POST", "/reset", 415, content=b"x", headers={"content-type": "text/plain"})
    await game.call("POST", "/reset", 403, headers=no_csrf)
    await game.call("POST", "/reset", 403, as_stage=True)  # a stage session on an operator route
    await game.call("GET", "", 401, headers={"Cookie": ""})
    async with HeldPublication(secured_server, case_id, porter["id"]):
        await game.call("POST", "/publications", 409, json={"role": "detective", "card_id": porter["id"]})

    reset = await game.call("POST", "/reset", 200)
    assert reset["last_trace"] is None
    assert (await game.ask("informant", QUESTION))["certainty"] == Certainty.KNOWN


class HeldFinding:
    """Another instance's live promotion of a claim, written into the live server's own ledger."""

    OWNER = "another-instance"

    def __init__(self, server: LiveServer, case_id: str, claim: str) -> None:
        self.ledger = Ledger(create_ledger_engine(f"sqlite:///{(server.data_dir / 'bureau.db').resolve()}"))
        self.vault = open_vault_of(server.vault_dir)
        self.case_id, self.claim, self.finding_id = case_id, claim, secrets.token_hex(12)

    async def __aenter__(self) -> None:
        figures = FindingFigures(3, 2, 2, 0, "medium", datetime.now(UTC))
        case = await self.ledger.cases.get_case(self.case_id)
        assert case is not None
        spaces = case_scopes(self.case_id, case.generation)
        grant = await self.vault.grant(
            self.case_id, case.generation, Purpose.FINDINGS, reads=spaces, record_writes=True, pseudonyms=True
        )
        held, _ = await self.ledger.findings.reserve_finding(
            self.case_id, self.finding_id, self.claim, self.OWNER, 60, figures, [], grant
        )
        grant.close()
        assert held

    async def __aexit__(self, *_: object) -> None:
        await self.ledger.findings.release_finding(self.case_id, self.finding_id, self.OWNER)
        self.ledger.engine.dispose()
        self.vault.close()


class HeldPublication:
    """Another instance's live publication lease on a detective card, written into the live server's own
    ledger (a second process on the same SQLite file), released on exit."""

    OWNER = "another-instance"

    def __init__(self, server: LiveServer, case_id: str, card_id: str) -> None:
        self.ledger = Ledger(create_ledger_engine(f"sqlite:///{(server.data_dir / 'bureau.db').resolve()}"))
        self.case_id, self.card_id = case_id, card_id

    async def __aenter__(self) -> None:
        held, _ = await self.ledger.publications.reserve_publication(
            self.case_id, self.card_id, "detective", self.OWNER, 60
        )
        assert held

    async def __aexit__(self, *_: object) -> None:
        await self.ledger.publications.release_publication(self.case_id, self.card_id, self.OWNER)
        self.ledger.engine.dispose()


async def test_the_whole_game_over_http_matches_the_contract(
    live: httpx.AsyncClient, contract: OpenApiContract, passcode_server: LiveServer
) -> None:
    contract.seen.clear()
    operator, stage = await signed_in_headers(live, OPERATOR_PASSCODE), await signed_in_headers(live, STAGE_PASSCODE)
    game = Game(live, operator, stage)
    case = await game.call("POST", "/api/cases", 201, json={"scenario_id": "safe-combination"})
    streamed = f"/api/cases/{case['case']['id']}"
    async with (
        open_sse(live, streamed + "/events", headers=operator, params={"after": 0}) as operator_stream,
        open_sse(live, streamed + "/stage/events", headers=stage, params={"after": 0}) as stage_stream,
    ):
        assert operator_stream.response.headers["content-type"].startswith("text/event-stream")
        game.base = streamed
        mat = await game.whisper("informant", "The spare key is under the mat.")
        told = [
            await game.whisper(role, FINDING, source=source)
            for role, source in zip(("detective", "informant", "suspect"), FINDING_SOURCES, strict=True)
        ]
        await game.call("POST", "/findings", 201, json={"claim": FINDING})
        await game.call("DELETE", f"/cards/{told[0]['id']}", 204)  # the finding is withdrawn
        secret = informant_secret_card(case)
        await game.ask("informant", QUESTION)
        await game.call("POST", "/publications", 201, json={"role": "informant", "card_id": secret["id"]})
        await game.call(
            "POST", "/cross-examinations", 200, json={"roles": ["informant", "detective"], "question": QUESTION}
        )
        await game.call("DELETE", f"/cards/{mat['id']}", 204)
        await game.call("POST", "/reset", 200)
        await game.call("DELETE", "", 204)
        for stream, schema in ((operator_stream, "OperatorFrame"), (stage_stream, "StageFrame")):
            frames = await stream.wait_closed()
            for frame in frames:
                contract.validate_frame(schema, frame.id, frame.event, frame.data)
        assert {f.event for f in operator_stream.frames} == {str(t) for t in EventType}  # every type, once at least
        assert {f.event for f in stage_stream.frames} == {str(t) for t in EventType} - {"answer.completed"}

    await play(game, passcode_server)

    signed_out = await signed_in_headers(live, STAGE_PASSCODE)
    await game.call("DELETE", "/api/session", 204, headers=signed_out)
    for _ in range(5):
        await game.call("POST", "/api/session", 401, headers={"Cookie": "", "X-Bureau-Passcode": "wrong-passcode"})
    await game.call("POST", "/api/session", 429, headers={"Cookie": "", "X-Bureau-Passcode": "wrong-passcode"})

    assert game.codes == set(ERRORS) - IN_PROCESS - NOT_PROVOKED - NOT_OVER_HTTP
    # Every operation of the document answered with a success status, through the contract check.
    documented = {
        (method, template)
        for template, operations in contract.document["paths"].items()
        for method in operations
        if not template.endswith("/events")  # streams: their frames are validated above
    }
    succeeded = {(method, template) for method, template, status in contract.seen if status < 400}
    assert documented <= succeeded, documented - succeeded


# ----- what only an in-process app can show ---------------------------------------------------------------


async def test_a_foreign_host_and_a_storage_fault_answer_the_declared_bodies(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The in-process client checks each response against the document (conftest)."""
    foreign = await client.get("/api/health", headers={"Host": "rebound.example"})  # open play: loopback only
    assert (foreign.status_code, code(foreign)) == (400, "HOST_NOT_ALLOWED")
    case_id = (await new_case())["case"]["id"]

    async def unavailable(*_: Any, **__: Any) -> Any:
        raise MemoryUnavailableError("injected")

    monkeypatch.setattr(services.gateway, "retrieve", unavailable)
    fault = await client.post(f"/api/cases/{case_id}/interrogations", json={"role": "detective", "question": QUESTION})
    assert (fault.status_code, code(fault)) == (503, "MEMORY_UNAVAILABLE")

    async def vault_down(*_: Any, **__: Any) -> Any:
        raise VaultUnavailableError("injected")

    monkeypatch.setattr(services.vault, "grant", vault_down)
    fault = await client.post(f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": PORTER})
    assert (fault.status_code, code(fault)) == (503, "VAULT_UNAVAILABLE")
    assert (await client.get("/api/health")).json()["presenter_acts"] is False
    off = await client.post(f"/api/cases/{case_id}/acts/unfiltered", json={"role": "detective", "question": QUESTION})
    assert (off.status_code, code(off)) == (403, "PRESENTER_ACTS_OFF")  # the in-process app has acts off
