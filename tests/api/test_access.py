"""Access over real HTTP: a `bureau serve` process with passcodes, every route × audience × CSRF.

Also: passcode sign-in, throttling, cookie flags, revocation, hashed tokens in the ledger file, the per-session
SSE connection cap, and `bureau serve` refusing unsafe start-ups.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from helpers import informant_secret_card
from live_server import OPERATOR_PASSCODE, STAGE_PASSCODE, LiveServer, passcode_mode
from sse_client import SSEStream, open_sse

MAX_SSE = 2


@dataclass(frozen=True)
class Session:
    name: str
    token: str
    csrf: str
    set_cookie: tuple[str, ...]
    csrf_header: str

    def headers(self, csrf: str | None = None) -> dict[str, str]:
        headers = {"Cookie": f"bureau_session={self.token}; bureau_csrf={self.csrf}"}
        if csrf is not None:
            headers["X-CSRF-Token"] = csrf
        return headers


def cookie_value(set_cookie: tuple[str, ...], name: str) -> str:
    for header in set_cookie:
        first = header.split(";", 1)[0]
        key, _, value = first.partition("=")
        if key.strip() == name:
            return value.strip().strip('"')
    raise AssertionError(f"no {name} cookie in {set_cookie}")


async def sign_in(http: httpx.AsyncClient, passcode: str, name: str) -> Session:
    response = await http.post("/api/session", headers={"X-Bureau-Passcode": passcode})
    http.cookies.clear()  # every request below names its session explicitly
    assert response.status_code == 204, response.text
    set_cookie = tuple(response.headers.get_list("set-cookie"))
    return Session(
        name,
        cookie_value(set_cookie, "bureau_session"),
        cookie_value(set_cookie, "bureau_csrf"),
        set_cookie,
        response.headers.get("x-csrf-token", ""),
    )


@dataclass
class Secured:
    server: LiveServer
    http: httpx.AsyncClient
    operator: Session
    stage: Session
    operator_to_revoke: Session
    stage_for_cap: Session
    case: dict[str, Any]  # a case for the cap test


@pytest.fixture(scope="module")
def passcode_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with passcode_mode(
        tmp_path_factory.mktemp("secured-data"),
        BUREAU_MAX_SSE_PER_SESSION=str(MAX_SSE),
        BUREAU_HOST="0.0.0.0",  # a non-loopback bind is allowed once passcodes are set
    ) as server:
        yield server


@pytest_asyncio.fixture(scope="module")
async def secured(passcode_server: LiveServer) -> AsyncIterator[Secured]:
    """All sessions are signed in up front: the throttle test (last) locks this client's address out."""
    async with httpx.AsyncClient(base_url=passcode_server.url, timeout=30) as http:
        operator = await sign_in(http, OPERATOR_PASSCODE, "operator")
        stage = await sign_in(http, STAGE_PASSCODE, "stage")
        to_revoke = await sign_in(http, OPERATOR_PASSCODE, "operator-to-revoke")
        stage_for_cap = await sign_in(http, STAGE_PASSCODE, "stage-for-cap")
        created = await http.post("/api/cases", json={"scenario_id": "mole"}, headers=operator.headers(operator.csrf))
        assert created.status_code == 201, created.text
        yield Secured(passcode_server, http, operator, stage, to_revoke, stage_for_cap, created.json())


# ----- the matrix ------------------------------------------------------------------------------------------

OPERATOR, STAGE = "operator", "stage"
SSE = object()


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    needs: str
    ok: int
    body: Any = None

    @property
    def is_write(self) -> bool:
        return self.method not in ("GET", "HEAD")

    def url(self, case_id: str) -> str:
        return self.path.format(case=case_id)


def routes(secret_card_id: str) -> list[Route]:
    return [
        Route("GET", "/api/scenarios", STAGE, 200),
        Route("GET", "/api/cases/{case}", OPERATOR, 200),
        Route("GET", "/api/cases/{case}/events", OPERATOR, 200, SSE),
        Route("GET", "/api/cases/{case}/stage", STAGE, 200),
        Route("GET", "/api/cases/{case}/stage/events", STAGE, 200, SSE),
        Route("GET", "/api/cases/{case}/record", OPERATOR, 200),
        Route("GET", "/api/cases/{case}/record/export?format=markdown", OPERATOR, 200),
        Route("GET", "/api/cases/{case}/stage/record", STAGE, 200),
        Route("GET", "/api/cases/{case}/subject-access", OPERATOR, 200),
        Route("GET", "/api/memory-policy", OPERATOR, 200),
        Route("GET", "/api/cases/{case}/policy-decisions", OPERATOR, 200),  # the audit trail: never the stage
        # Writes, in the order the successful pass runs them:
        Route("POST", "/api/cases", OPERATOR, 201, {"scenario_id": "safe-combination", "language": "zh"}),
        Route("POST", "/api/cases/{case}/whispers", OPERATOR, 201, {"role": "detective", "text": "A blue van idled."}),
        Route("POST", "/api/cases/{case}/interrogations", OPERATOR, 200, {"role": "detective", "question": "Any van?"}),
        Route(
            "POST",
            "/api/cases/{case}/cross-examinations",
            OPERATOR,
            200,
            {"roles": ["detective", "suspect"], "question": "Any van?"},
        ),
        Route(
            "POST", "/api/cases/{case}/publications", OPERATOR, 201, {"role": "informant", "card_id": secret_card_id}
        ),
        Route("DELETE", "/api/cases/{case}/cards/" + secret_card_id, OPERATOR, 204),
        Route("POST", "/api/cases/{case}/reset", OPERATOR, 200),
        Route("DELETE", "/api/cases/{case}", OPERATOR, 204),
    ]


@asynccontextmanager
async def open_stream(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], deadline_s: float = 5.0
) -> AsyncIterator[SSEStream]:
    """Open a stream, retrying a 429 while an earlier, closed stream's slot is still being released."""
    deadline = time.monotonic() + deadline_s
    while True:
        async with open_sse(http, url, headers=headers) as stream:
            if stream.status_code != 429 or time.monotonic() > deadline:
                yield stream
                return
        await asyncio.sleep(0.05)  # back-off between retries of a refused request, not a synchronisation


async def call(http: httpx.AsyncClient, route: Route, case_id: str, headers: dict[str, str]) -> tuple[int, Any]:
    """(status, error code or None). An SSE success is proven by its first bytes, then closed."""
    if route.body is SSE:
        # A 429 is retried: the session's previous stream may still be being released (see the cap test).
        async with open_stream(http, route.url(case_id), headers) as stream:
            if stream.status_code == 200:
                first = await stream.next_frame()
                assert first.event == "case.created"
                return 200, None
            return stream.status_code, stream.response.json()["detail"]["code"]
    kwargs: dict[str, Any] = {"headers": headers}
    if route.body is not None:
        kwargs["json"] = route.body
    response = await http.request(route.method, route.url(case_id), **kwargs)
    code = response.json()["detail"]["code"] if response.status_code >= 400 else None
    return response.status_code, code


def expected(route: Route, who: str, csrf: str) -> tuple[int, str | None]:
    if who == "anonymous":
        return 401, "ACCESS_REQUIRED"
    if who == STAGE and route.needs == OPERATOR:
        return 403, "ROLE_FORBIDDEN"
    if route.is_write and csrf != "valid":
        return 403, "CSRF_REQUIRED"
    return route.ok, None


async def test_every_route_for_every_audience_with_and_without_csrf(secured: Secured) -> None:
    http, operator, stage = secured.http, secured.operator, secured.stage
    created = await http.post(
        "/api/cases", json={"scenario_id": "safe-combination"}, headers=operator.headers(operator.csrf)
    )
    assert created.status_code == 201
    case = created.json()
    case_id = case["case"]["id"]
    secret = informant_secret_card(case)
    table = routes(secret["id"])

    def headers_for(who: str, csrf: str) -> dict[str, str]:
        if who == "anonymous":  # a CSRF token without a session is worth nothing
            return {"X-CSRF-Token": operator.csrf} if csrf == "valid" else {}
        session = operator if who == OPERATOR else stage
        token = {"valid": session.csrf, "missing": None, "foreign": (stage if session is operator else operator).csrf}
        return session.headers(token[csrf])

    # Pass 1: everything except the operator's valid writes. None of it may change the case.
    mismatches: list[str] = []
    checked = 0
    for route in table:
        for who in ("anonymous", OPERATOR, STAGE):
            for csrf in ("valid", "missing", "foreign"):
                if who == "anonymous" and csrf == "foreign":
                    continue
                if who == OPERATOR and csrf == "valid" and route.is_write:
                    continue  # pass 2
                want = expected(route, who, csrf)
                got = await call(http, route, case_id, headers_for(who, csrf))
                checked += 1
                if got != want:
                    mismatches.append(f"{route.method} {route.path} as {who} csrf={csrf}: {got} != {want}")
    assert mismatches == [], "\n".join(mismatches)
    assert checked >= 80
    after = (await http.get(f"/api/cases/{case_id}", headers=operator.headers())).json()
    assert after["case"]["version"] == case["case"]["version"]
    assert after["spaces"] == case["spaces"]

    # Pass 2: the operator with its CSRF token, every write in game order.
    for route in [r for r in table if r.is_write]:
        assert await call(http, route, case_id, headers_for(OPERATOR, "valid")) == (route.ok, None), route
    # The case is gone now: the operator gets 404; the anonymous still only 401 (existence is not revealed).
    assert await call(http, table[1], case_id, operator.headers()) == (404, "CASE_NOT_FOUND")
    assert await call(http, table[3], case_id, stage.headers()) == (404, "CASE_NOT_FOUND")
    assert await call(http, table[1], case_id, {}) == (401, "ACCESS_REQUIRED")
    # Authentication comes before body validation: a malformed write by nobody is a 401, not a schema hint.
    junk = await http.post(f"/api/cases/{case_id}/whispers", json={"nope": 1})
    assert (junk.status_code, junk.json()["detail"]["code"]) == (401, "ACCESS_REQUIRED")


async def test_health_ready_and_who_am_i_are_public(secured: Secured) -> None:
    http = secured.http
    health = await http.get("/api/health")
    assert health.status_code == 200 and health.json()["access"] == "passcodes"
    assert (await http.get("/api/ready")).status_code == 200
    anonymous = (await http.get("/api/session")).json()
    assert anonymous == {"audience": None, "csrf_token": None, "passcodes_enabled": True}
    me = (await http.get("/api/session", headers=secured.stage.headers())).json()
    assert me["audience"] == "stage" and me["csrf_token"] == secured.stage.csrf
    # A CSRF cookie from another session is not handed back.
    mixed = {"Cookie": f"bureau_session={secured.stage.token}; bureau_csrf={secured.operator.csrf}"}
    assert (await http.get("/api/session", headers=mixed)).json()["csrf_token"] is None


# ----- sessions ------------------------------------------------------------------------------------------


def test_session_cookies_are_http_only_and_same_site_strict(secured: Secured) -> None:
    for session in (secured.operator, secured.stage):
        [cookie] = [c for c in session.set_cookie if c.startswith("bureau_session=")]
        attributes = {part.strip().split("=")[0].lower(): part.strip() for part in cookie.split(";")[1:]}
        assert "httponly" in attributes
        assert attributes["samesite"].lower() == "samesite=strict"
        assert attributes["path"] == "Path=/"
        [csrf] = [c for c in session.set_cookie if c.startswith("bureau_csrf=")]
        assert "samesite=strict" in csrf.lower()
        assert "httponly" not in csrf.lower()  # the page's script reads it (double submit)
        assert session.csrf_header == session.csrf
        assert session.token != session.csrf and len(session.token) >= 32


def test_only_hashes_of_tokens_are_stored(secured: Secured) -> None:
    with sqlite3.connect(secured.server.data_dir / "bureau.db") as db:
        rows = db.execute("SELECT * FROM sessions").fetchall()
        columns = [d[0] for d in db.execute("SELECT * FROM sessions").description]
    dumped = repr(rows)
    sessions = (secured.operator, secured.stage, secured.operator_to_revoke, secured.stage_for_cap)
    assert len(rows) >= len(sessions)
    for session in sessions:
        assert session.token not in dumped and session.csrf not in dumped
        assert hashlib.sha256(session.token.encode()).hexdigest() in dumped
        assert hashlib.sha256(session.csrf.encode()).hexdigest() in dumped
    assert not any("passcode" in c for c in columns)
    assert OPERATOR_PASSCODE not in dumped and STAGE_PASSCODE not in dumped


async def test_signing_out_revokes_the_session(secured: Secured) -> None:
    http, session = secured.http, secured.operator_to_revoke
    case_url = f"/api/cases/{secured.case['case']['id']}"
    assert (await http.get(case_url, headers=session.headers())).status_code == 200
    no_csrf = await http.delete("/api/session", headers=session.headers())
    assert (no_csrf.status_code, no_csrf.json()["detail"]["code"]) == (403, "CSRF_REQUIRED")
    async with open_sse(http, f"{case_url}/events", headers=session.headers()) as live:
        assert (await live.next_frame()).event == "case.created"
        out = await http.delete("/api/session", headers=session.headers(session.csrf))
        signed_out_at = time.monotonic()
        http.cookies.clear()
        assert out.status_code == 204
        # The revoked session's live stream ends at its next heartbeat (BUREAU_HEARTBEAT_S=1).
        await live.wait_closed(timeout_s=5)
        assert live.closed_at is not None and live.closed_at - signed_out_at < 5
    cleared = " ".join(out.headers.get_list("set-cookie"))
    assert "bureau_session=" in cleared and "bureau_csrf=" in cleared  # the browser drops both
    again = await http.get(case_url, headers=session.headers())
    assert (again.status_code, again.json()["detail"]["code"]) == (401, "ACCESS_REQUIRED")
    write = await http.post(
        f"{case_url}/whispers", json={"role": "suspect", "text": "Too late."}, headers=session.headers(session.csrf)
    )
    assert write.status_code == 401
    with sqlite3.connect(secured.server.data_dir / "bureau.db") as db:
        [(revoked_at,)] = db.execute(
            "SELECT revoked_at FROM sessions WHERE token_hash = ?",
            (hashlib.sha256(session.token.encode()).hexdigest(),),
        ).fetchall()
    assert revoked_at is not None
    # The other sessions are untouched.
    assert (await http.get(case_url, headers=secured.operator.headers())).status_code == 200


# ----- SSE connection cap -------------------------------------------------------------------------------


async def test_sse_connections_per_session_are_capped_and_a_freed_slot_works_again(secured: Secured) -> None:
    http, session = secured.http, secured.stage_for_cap
    case_id = secured.case["case"]["id"]
    url = f"/api/cases/{case_id}/stage/events"
    held: list[AbstractAsyncContextManager[SSEStream]] = []

    async def hold() -> SSEStream:
        context = open_stream(http, url, session.headers())
        stream = await context.__aenter__()
        held.append(context)
        return stream

    try:
        for _ in range(MAX_SSE):
            stream = await hold()
            assert stream.status_code == 200
            assert (await stream.next_frame()).event == "case.created"
        async with open_sse(http, url, headers=session.headers()) as refused:
            assert refused.status_code == 429
            assert refused.response.json()["detail"]["code"] == "RATE_LIMITED"
            assert int(refused.response.headers["retry-after"]) > 0
        # The operator stream counts too; the cap is per session, so another session is unaffected.
        async with open_sse(http, f"/api/cases/{case_id}/events", headers=session.headers()) as other_route:
            assert other_route.status_code == 403  # a stage session on the operator stream
        async with open_sse(http, url, headers=secured.stage.headers()) as other_session:
            assert other_session.status_code == 200
            assert (await other_session.next_frame()).event == "case.created"
        # Free one slot: a new stream is accepted again (once the server has seen the disconnect).
        await held.pop(0).__aexit__(None, None, None)
        stream = await hold()
        assert stream.status_code == 200
        assert (await stream.next_frame()).event == "case.created"
    finally:
        for context in held:
            await context.__aexit__(None, None, None)


# ----- throttling (last: it locks this client's address out of signing in) ------------------------------


async def test_wrong_passcodes_are_refused_then_throttled(secured: Secured) -> None:
    http = secured.http
    for attempt in range(5):
        wrong = await http.post("/api/session", headers={"X-Bureau-Passcode": f"guess-{attempt}"})
        assert wrong.status_code == 401, attempt
        assert wrong.json()["detail"]["code"] == "ACCESS_REQUIRED"
        assert "set-cookie" not in wrong.headers
        assert f"guess-{attempt}" not in wrong.text
    throttled = await http.post("/api/session", headers={"X-Bureau-Passcode": "guess-6"})
    assert throttled.status_code == 429
    assert throttled.json()["detail"]["code"] == "RATE_LIMITED"
    assert int(throttled.headers["retry-after"]) > 0
    # While throttled, even the right passcode is refused (no oracle for guessing).
    right = await http.post("/api/session", headers={"X-Bureau-Passcode": OPERATOR_PASSCODE})
    assert right.status_code == 429
    http.cookies.clear()
    # Existing sessions keep working.
    assert (await http.get("/api/scenarios", headers=secured.stage.headers())).status_code == 200


# ----- refusing unsafe start-ups --------------------------------------------------------------------------


async def _serve(data_dir: Path, *args: str, **env: str) -> tuple[int, str]:
    """Run `bureau serve` (as `LiveServer` would) and expect it to refuse: (exit code, stderr)."""
    server = LiveServer(data_dir, args=args, **env)
    process = await asyncio.create_subprocess_exec(
        *server.command(),
        cwd=server.cwd,
        env=server.environment(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        _, stderr = await asyncio.wait_for(process.communicate(), 60)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError("bureau serve did not refuse: it kept running") from None
    return process.returncode or 0, stderr.decode(errors="replace")


async def test_serve_refuses_unsafe_settings(tmp_path: Path) -> None:
    runs = {
        "open on 0.0.0.0": _serve(tmp_path / "a", "--host", "0.0.0.0"),
        "open on 0.0.0.0 via env": _serve(tmp_path / "b", BUREAU_HOST="0.0.0.0"),
        "production, no passcodes": _serve(tmp_path / "c", BUREAU_ENV="production"),
        "production, one passcode": _serve(
            tmp_path / "d", BUREAU_ENV="production", BUREAU_OPERATOR_PASSCODE="operator-passcode-1"
        ),
        "production, same passcodes": _serve(
            tmp_path / "e",
            BUREAU_ENV="production",
            BUREAU_OPERATOR_PASSCODE="same-passcode-1",
            BUREAU_STAGE_PASSCODE="same-passcode-1",
        ),
    }
    for path in ("a", "b", "c", "d", "e"):
        (tmp_path / path).mkdir()
    results = dict(zip(runs, await asyncio.gather(*runs.values()), strict=True))
    for name, (code, stderr) in results.items():
        assert code == 2, (name, code, stderr[-2000:])
        if name.startswith("open"):
            assert "Refusing to serve on 0.0.0.0 without passcodes" in stderr, name
            assert "--insecure-open" in stderr
        else:
            assert "Unsafe production settings" in stderr, name
        assert "Traceback" not in stderr, name
    for path in ("a", "b", "c", "d", "e"):  # refused before touching the data dir
        assert not (tmp_path / path / "bureau.db").exists(), path


def test_insecure_open_allows_a_non_loopback_bind(tmp_path: Path) -> None:
    server = LiveServer(tmp_path, args=("--host", "0.0.0.0", "--insecure-open")).start()
    try:
        health = httpx.get(server.url + "/api/health", timeout=5)
        assert health.status_code == 200 and health.json()["access"] == "open"
    finally:
        server.stop()
