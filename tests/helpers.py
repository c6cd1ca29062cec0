"""HTTP helpers shared by the API tests, and the facts of the "safe-combination" scenario they play.

`ask` / `publish` / `snapshot` take any `httpx.AsyncClient` whose base URL is the app: the in-process ASGI
client (`client` fixture) or a client of a live `bureau serve` process.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from bureau.game.knowledge import answer_view, fold_knowledge, latest_answers

if TYPE_CHECKING:
    from bureau.api.deps import Services
    from bureau.memory.gateway import MemoryGateway
    from bureau.vault import Grant, Vault
    from live_server import LiveServer

# The `new_case` fixture: `await new_case(scenario_id="safe-combination", language="en")` -> case snapshot.
NewCase = Callable[..., Awaitable[dict[str, Any]]]

QUESTION = "What is the safe combination?"
SECRET = "0427"  # the informant's secret in the "safe-combination" scenario (both languages)


async def grant_of(
    services: Services,
    case_id: str,
    *,
    reads: Sequence[str] = (),
    writes: Sequence[str] = (),
    purpose: str = "operator",
    record: bool = False,
    pseudonyms: bool = False,
) -> Grant:
    """A grant over some spaces of a case, as the game mints one for a command, in the case's current
    generation. A case the ledger does not know (a store-level test's) gets keys of its own first, in its first
    generation ("")."""
    from bureau.scope.keys import space_scope
    from bureau.scope.vocabulary import Purpose

    case = await services.ledger.cases.get_case(case_id)
    generation = case.generation if case is not None else ""
    if case is None:
        await services.vault.create_case(case_id, generation)
    return await services.vault.grant(
        case_id,
        generation,
        Purpose(purpose),
        reads=[space_scope(case_id, space, generation) for space in reads],
        writes=[space_scope(case_id, space, generation) for space in writes],
        record_reads=record,
        record_writes=record,
        pseudonyms=pseudonyms,
    )


def wait_until(predicate: Callable[[], Any], timeout_s: float, what: str, every_s: float = 0.2) -> Any:
    """Poll until `predicate` returns something truthy (and return it); fail after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what} not reached in {timeout_s} s"
        time.sleep(every_s)


def case_with_one_whisper(http: httpx.Client) -> tuple[str, str, dict[str, Any]]:
    """A new case whose detective has been told one thing: its id, its whispers path and its snapshot then."""
    case_id = http.post("/api/cases", json={"scenario_id": "safe-combination"}).json()["case"]["id"]
    whispers = f"/api/cases/{case_id}/whispers"
    kept = {"role": "detective", "text": "The gardener saw a blue van at midnight."}
    assert http.post(whispers, json=kept).status_code == 201
    return case_id, whispers, http.get(f"/api/cases/{case_id}").json()


# What the store-fault tests try to whisper while the store is down; it must leave nothing behind.
REFUSED_WHISPER = {"role": "suspect", "text": "I was at the cinema all evening."}


def refused_as_unavailable(http: httpx.Client, path: str, body: dict[str, Any]) -> tuple[httpx.Response, float]:
    """POST `body`, which the store's fault must refuse with 503 MEMORY_UNAVAILABLE; the answer and its seconds."""
    started = time.monotonic()
    refused = http.post(path, json=body)
    took_s = time.monotonic() - started
    assert refused.status_code == 503, refused.text
    assert refused.json()["detail"]["code"] == "MEMORY_UNAVAILABLE"
    return refused, took_s


def assert_case_as_before_and_answering(
    http: httpx.Client, case_id: str, whispers: str, before: dict[str, Any]
) -> None:
    """After a store fault: the acknowledged whisper is there and the refused one is not, the refused
    whisper now goes through, and the informant still answers from its secret."""
    after = http.get(f"/api/cases/{case_id}").json()
    assert after["spaces"] == before["spaces"]
    assert after["case"]["version"] == before["case"]["version"]
    assert http.post(whispers, json=REFUSED_WHISPER).status_code == 201
    asked = http.post(f"/api/cases/{case_id}/interrogations", json={"role": "informant", "question": QUESTION})
    assert asked.status_code == 200, asked.text
    assert asked.json()["certainty"] == "known"
    assert asked.json()["evidence"] == [informant_secret_card(before)["id"]]


def posted(http: httpx.Client, path: str, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
    """A POST that must answer `status`: its body."""
    response = http.post(path, json=body)
    assert response.status_code == status, response.text
    return dict(response.json())


def interrogated(http: httpx.Client, case_id: str, role: str, question: str) -> dict[str, Any]:
    """`ask` for a synchronous client (a live server's)."""
    return posted(http, f"/api/cases/{case_id}/interrogations", {"role": role, "question": question}, 200)


def cards(snapshot: dict[str, Any], space: str) -> list[dict[str, Any]]:
    return snapshot["spaces"][space]


def informant_secret_card(snapshot: dict[str, Any]) -> dict[str, Any]:
    [card] = [c for c in cards(snapshot, "informant") if SECRET in c["content"]]
    return card


async def ask(client: httpx.AsyncClient, case_id: str, role: str, question: str = QUESTION) -> dict[str, Any]:
    response = await client.post(f"/api/cases/{case_id}/interrogations", json={"role": role, "question": question})
    assert response.status_code == 200, response.text
    return response.json()


async def publish(client: httpx.AsyncClient, case_id: str, role: str, card_id: str) -> httpx.Response:
    return await client.post(f"/api/cases/{case_id}/publications", json={"role": role, "card_id": card_id})


async def snapshot(client: httpx.AsyncClient, case_id: str) -> dict[str, Any]:
    response = await client.get(f"/api/cases/{case_id}")
    assert response.status_code == 200
    return response.json()


def play_four_acts(server: LiveServer, backend: str) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as http:
        assert http.get("/api/health").json()["memory"]["backend"] == backend
        case = http.post("/api/cases", json={"scenario_id": "safe-combination"}).json()
        case_id, secret = case["case"]["id"], informant_secret_card(case)

        def ask(role: str) -> dict:
            return http.post(f"/api/cases/{case_id}/interrogations", json={"role": role, "question": QUESTION}).json()

        assert ask("detective")["certainty"] == "unknown"
        assert ask("informant")["evidence"] == [secret["id"]]
        published = http.post(f"/api/cases/{case_id}/publications", json={"role": "informant", "card_id": secret["id"]})
        assert published.status_code == 201
        detective = ask("detective")
        assert detective["certainty"] == "known"
        assert detective["evidence"] == [published.json()["public_card"]["id"]]
        assert 0.4 <= detective["trace"]["hits"][0]["score"] <= 1.0  # a cosine, not an RRF rank
        assert http.delete(f"/api/cases/{case_id}").status_code == 204
        assert http.get(f"/api/cases/{case_id}").status_code == 404
        play_findings(http)


def play_findings(http: httpx.Client) -> None:
    """The fifth act on this backend: a finding's figures and sealed sources round-trip through the store,
    and deleting a contributor withdraws it (docs/findings.md)."""
    case = http.post("/api/cases", json={"scenario_id": "night-ferry"}).json()
    case_id = case["case"]["id"]
    assert {c["told_by"] for c in case["spaces"]["detective"] if "told_by" in c} >= {"the night porter"}
    promoted = http.post(f"/api/cases/{case_id}/findings", json={"claim": "The grey van left the harbour at midnight."})
    assert promoted.status_code == 201, promoted.text
    card = promoted.json()["card"]
    board = http.get(f"/api/cases/{case_id}").json()["spaces"]["bulletin_board"]
    assert [(c["id"], c["finding"]["support"]) for c in board] == [(card["id"], 3)]
    van = next(c for c in case["spaces"]["informant"] if c["topic"] == "van_harbourmaster")
    assert http.delete(f"/api/cases/{case_id}/cards/{van['id']}").status_code == 204
    assert http.get(f"/api/cases/{case_id}").json()["spaces"]["bulletin_board"] == []
    assert [f["state"] for f in http.get(f"/api/cases/{case_id}/findings").json()["findings"]] == ["withdrawn"]
    assert http.delete(f"/api/cases/{case_id}").status_code == 204


def session_headers(signed_in: httpx.Response) -> dict[str, str]:
    """The headers naming the session a sign-in opened, for any request (cookie + CSRF token)."""
    assert signed_in.status_code == 204, signed_in.text
    session, csrf = signed_in.cookies["bureau_session"], signed_in.cookies["bureau_csrf"]
    return {"Cookie": f"bureau_session={session}; bureau_csrf={csrf}", "X-CSRF-Token": csrf}


async def signed_in_headers(client: httpx.AsyncClient, passcode: str) -> dict[str, str]:
    """Sign in with `passcode`; the headers of that session. The client's own cookie jar is cleared, so
    every request names its session explicitly."""
    response = await client.post("/api/session", headers={"X-Bureau-Passcode": passcode})
    client.cookies.clear()
    return session_headers(response)


async def assert_snapshot_state_is_the_fold(client: httpx.AsyncClient, services: Services, case_id: str) -> None:
    """The matrix and latest answers the ledger maintains, and the snapshot that shows them, equal a full fold
    of the record (`fold_knowledge` / `latest_answers`: the reference)."""
    case = await services.bureau.case_access.require_case(case_id)
    scenario = services.bureau.catalogue.scenario(case.scenario_id, case.language)
    grant = await grant_of(services, case_id, record=True)  # the operator's: the record's texts
    entries = await services.ledger.record.interrogations(case_id, grant)
    knowledge, answers = fold_knowledge(scenario.key_facts, entries), latest_answers(entries)
    maintained = await services.ledger.knowledge.case_knowledge(
        case_id, grant, services.bureau.catalogue.knowledge_steps(case)
    )
    assert maintained.knowledge == knowledge
    assert {role: answer_view(latest) for role, latest in maintained.answers.items()} == answers
    shown = (await client.get(f"/api/cases/{case_id}")).json()
    assert (shown["knowledge"], shown["answers"]) == (knowledge, answers)


def write_row_past_the_gateway(
    gateway: MemoryGateway, user_id: str, agent_id: str, content: str, vector: Any, metadata: dict[str, Any]
) -> None:
    """A row put straight into the store, as a version before sealing (or a bug) wrote it: the text as given,
    the vector in no space's basis, nothing in the vault."""
    gateway.runner.client().storage.add_memory(
        {
            "content": content,
            "embedding": list(map(float, vector)),
            "user_id": user_id,
            "agent_id": agent_id,
            "metadata": metadata,
            "filters": {},
            "run_id": None,
            "hash": "",
            "category": "",
        }
    )


async def lifecycle_grant(vault: Vault, case_id: str) -> Grant:
    """What a card erasure holds, for a ledger test with a vault of its own: every space's lifecycle and the
    pseudonym key (the case's keys made first)."""
    from bureau.scope.keys import case_scopes
    from bureau.scope.vocabulary import Purpose

    await vault.create_case(case_id, "")
    return await vault.grant(case_id, None, Purpose.LIFECYCLE, writes=case_scopes(case_id), pseudonyms=True)


async def stored_rows(services: Services, case_id: str) -> dict[str, list[str]]:
    """Every row the store holds of a case, by space, in any generation, keys or no keys: the raw store's view
    (nothing opened), for tests that prove nothing was left behind."""
    from bureau.memory import owner_rows
    from bureau.scope.keys import SPACES

    client = services.gateway.runner.client()
    rows = await services.gateway.runner.run(lambda: list(owner_rows.rows(client, f"case:{case_id}")))
    found: dict[str, list[str]] = {space: [] for space in SPACES}
    for row in rows:
        found.setdefault(str(row.get("agent_id")), []).append(str(row["id"]))
    return found


async def stored_cards(services: Services, case_id: str, *spaces: str) -> list[Any]:
    """The cards of some spaces of a case (all of them by default) as the operator reads them now."""
    from bureau.scope.keys import SPACES

    grant = await grant_of(services, case_id, reads=spaces or SPACES)
    try:
        return [card for cards in (await services.gateway.list_spaces(grant)).values() for card in cards]
    finally:
        grant.close()
