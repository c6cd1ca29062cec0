"""Regressions from the security review: races, non-canonical ids, late writes, logs, echoed input."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import httpx
import pytest

from bureau.api.deps import Services
from bureau.ledger.repository import CaseMissingError, PendingEvent
from bureau.memory.types import MemoryUnavailableError
from bureau.scope.keys import SPACES
from helpers import NewCase, grant_of, informant_secret_card, snapshot, stored_rows
from live_server import LiveServer


async def card_counts(services: Services, case_id: str) -> dict[str, int]:
    return {space: len(rows) for space, rows in (await stored_rows(services, case_id)).items()}


async def test_nothing_can_commit_into_a_case_that_is_being_erased(new_case: NewCase, services: Services) -> None:
    """A command in flight when an erase begins must fail its commit (and undo its write), not outlive it."""
    case = await new_case()
    case_id = case["case"]["id"]
    secret = informant_secret_card(case)
    assert await services.ledger.cases.begin_erase(case_id)
    with pytest.raises(CaseMissingError):
        await services.ledger.cases.change_case(case_id, [PendingEvent("memory.written", {})])
    with pytest.raises(CaseMissingError):
        await services.ledger.publications.reserve_publication(case_id, secret["id"], "informant", "someone", 5)
    await services.bureau.case_service.erase(case_id)  # an erase that stopped half-way can be finished
    assert await services.ledger.cases.get_case(case_id) is None
    assert await card_counts(services, case_id) == dict.fromkeys(SPACES, 0)


@pytest.mark.parametrize("spelling", ["0{id}", "{id}0", "{fullwidth}", "²", " {id}", "{id}\n"])
async def test_only_the_canonical_card_id_finds_a_card(
    spelling: str, client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    fullwidth = secret["id"].translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    card_id = spelling.format(id=secret["id"], fullwidth=fullwidth)
    response = await client.post(f"/api/cases/{case_id}/publications", json={"role": "informant", "card_id": card_id})
    assert response.status_code in (404, 422)
    assert (await snapshot(client, case_id))["spaces"]["bulletin_board"] == []
    assert await services.ledger.publications.publications(case_id) == []
    canonical = await client.post(
        f"/api/cases/{case_id}/publications", json={"role": "informant", "card_id": secret["id"]}
    )
    assert canonical.status_code == 201


async def test_two_resets_at_once_never_duplicate_the_scenario(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    expected = await card_counts(services, case_id)
    responses = await asyncio.gather(*(client.post(f"/api/cases/{case_id}/reset") for _ in range(3)))
    assert [r.status_code for r in responses] == [200, 200, 200]  # no expected_version: they take turns
    assert await card_counts(services, case_id) == expected


async def test_a_reset_waits_its_turn_behind_concurrent_commands(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    expected = await card_counts(services, case_id)
    whispers = [
        client.post(f"/api/cases/{case_id}/whispers", json={"role": "suspect", "text": f"Note {i}."}) for i in range(30)
    ]
    reset = client.post(f"/api/cases/{case_id}/reset")
    *whispered, reset_response = await asyncio.gather(*whispers, reset)
    assert reset_response.status_code == 200, reset_response.text
    assert {r.status_code for r in whispered} == {201}
    # Whispers that committed before the reset are gone; the ones after it remain on top of the scenario.
    counts = await card_counts(services, case_id)
    assert {space: n for space, n in counts.items() if space != "suspect"} == {
        space: n for space, n in expected.items() if space != "suspect"
    }
    assert counts["suspect"] >= expected["suspect"]
    stale = await client.post(f"/api/cases/{case_id}/reset", json={"expected_version": 0})
    assert stale.status_code == 409  # with an expected version, a reset still refuses a stale view


async def test_a_write_that_times_out_never_lands(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store call stuck past BUREAU_MEMORY_CALL_TIMEOUT_S: 503, later calls refused at once instead of
    queueing behind it, readiness red; the stuck write, run after its request's grant expired, seals and stores
    nothing, and the supervisor's ping ends the stall. (A write stuck inside the store's own insert lands and is
    undone: against a SIGSTOPped seekdb, tests/faults/test_store_faults.py.)"""
    case = await new_case()
    case_id = case["case"]["id"]
    gateway = services.gateway
    real_write = gateway.calls.write_many
    landed = threading.Event()
    release = threading.Event()

    def stuck_write(grant, drafts):
        release.wait(30)  # inside the worker thread: the store hangs until the test lets it go
        try:
            return real_write(grant, drafts)
        finally:
            landed.set()  # its request is over: its grant no longer seals anything, so it lands nothing

    detective = await grant_of(services, case_id, reads=["detective"])
    with monkeypatch.context() as patch:
        patch.setattr(gateway.runner, "call_timeout_s", 0.2)
        patch.setattr(gateway.calls, "write_many", stuck_write)
        try:
            response = await client.post(
                f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": "A late note."}
            )
            assert response.status_code == 503
            assert response.json()["detail"]["code"] == "MEMORY_UNAVAILABLE"
            assert gateway.stalled
            with pytest.raises(MemoryUnavailableError):  # refused at once: the worker is still stuck
                await gateway.list(detective)
            assert (await client.get("/api/ready")).status_code == 503
            asked = await client.post(
                f"/api/cases/{case_id}/interrogations", json={"role": "detective", "question": "Who?"}
            )
            assert asked.status_code == 503
            assert not landed.is_set()  # nothing above waited for the stuck call
        finally:
            release.set()
        assert await asyncio.to_thread(landed.wait, 10)
        deadline = time.monotonic() + 20
        while gateway.stalled:  # the supervisor's next ping gets an answer and ends the stall
            assert time.monotonic() < deadline, "the stall did not end"
            await asyncio.sleep(0.05)
    # The late write ran after its request's 503: its grant had expired with the request, so it sealed nothing
    # and stored nothing (had it landed, its undo would have run on the same worker before any later call).
    assert "A late note." not in [c.content for c in await gateway.list(detective)]
    assert (await snapshot(client, case_id))["case"]["version"] == case["case"]["version"]
    assert (await client.get("/api/ready")).status_code == 200


async def test_publishing_into_a_case_erased_meanwhile_is_not_found(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    erased: list[Any] = []

    def erase_meanwhile(step: str) -> None:
        if step == "before_mark_ready" and not erased:
            erased.append(asyncio.ensure_future(services.ledger.cases.begin_erase(case_id)))

    services.bureau.publisher.fault = erase_meanwhile
    original_complete = services.ledger.publications.complete_publication

    async def complete_after_erase(*args, **kwargs):
        await asyncio.gather(*erased)
        return await original_complete(*args, **kwargs)

    services.ledger.publications.complete_publication = complete_after_erase  # type: ignore[method-assign]
    try:
        response = await client.post(
            f"/api/cases/{case_id}/publications", json={"role": "informant", "card_id": secret["id"]}
        )
    finally:
        services.bureau.publisher.fault = lambda step: None
        del services.ledger.publications.complete_publication
    assert response.status_code == 404 and response.json()["detail"]["code"] == "CASE_NOT_FOUND"
    assert (await stored_rows(services, case_id))["bulletin_board"] == []  # compensated


async def test_a_committed_interrogation_is_not_reported_as_failed_when_retention_fails(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]

    async def list_unavailable(scope):
        raise MemoryUnavailableError("injected")

    with monkeypatch.context() as patch:
        patch.setattr(services.gateway, "list", list_unavailable)
        response = await client.post(
            f"/api/cases/{case_id}/interrogations",
            json={"role": "informant", "question": "What is the safe combination?"},
        )
    assert response.status_code == 200 and response.json()["certainty"] == "known"
    assert (await snapshot(client, case_id))["last_trace"] == response.json()["trace"]


def test_store_loggers_cannot_leak_card_text(services: Services, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        for name in ("powermem.core.memory", "pyobvector.client", "sqlalchemy.engine.Engine", "pyseekdb"):
            logging.getLogger(name).error("Failed to add memory: [parameters: {'document': 'SECRET-9931'}]")
    assert "SECRET-9931" not in caplog.text


async def test_unknown_field_names_and_huge_cursors_are_not_echoed(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    response = await client.post(
        f"/api/cases/{case_id}/whispers", json={"role": "suspect", "text": "ok", "The vault code is 7319": 1}
    )
    assert response.status_code == 422 and "7319" not in response.text
    for cursor in ("99999999999999999999999", "-1", "１２"):
        assert (await client.get(f"/api/cases/{case_id}/events?after={cursor}")).status_code == 422
        headers = {"Last-Event-ID": cursor.encode()}
        assert (await client.get(f"/api/cases/{case_id}/events", headers=headers)).status_code == 422


def test_changing_a_passcode_signs_its_sessions_out(tmp_path_factory: pytest.TempPathFactory) -> None:
    data = tmp_path_factory.mktemp("rotation-data")
    codes = {"BUREAU_OPERATOR_PASSCODE": "operator-one-1", "BUREAU_STAGE_PASSCODE": "stage-stays-22"}
    server = LiveServer(data, **codes).start()
    try:
        cookies = {}
        for audience, code in (("operator", "operator-one-1"), ("stage", "stage-stays-22")):
            response = httpx.post(server.url + "/api/session", headers={"X-Bureau-Passcode": code})
            assert response.status_code == 204
            cookies[audience] = response.cookies
        for audience in ("operator", "stage"):
            assert httpx.get(server.url + "/api/session", cookies=cookies[audience]).json()["audience"] == audience
    finally:
        server.stop()

    server.env["BUREAU_OPERATOR_PASSCODE"] = "operator-two-2"
    server.start()
    try:
        who = {a: httpx.get(server.url + "/api/session", cookies=cookies[a]).json()["audience"] for a in cookies}
        assert who == {"operator": None, "stage": "stage"}
        assert httpx.get(server.url + "/api/scenarios", cookies=cookies["operator"]).status_code == 401
    finally:
        server.stop()


async def test_open_play_answers_only_to_this_machines_own_host_names(client: httpx.AsyncClient) -> None:
    """DNS rebinding: a page on evil.example re-pointed at 127.0.0.1 sends `Host: evil.example`."""
    assert (await client.get("/api/health", headers={"Host": "evil.example"})).status_code == 400
    assert (
        await client.post("/api/cases", json={"scenario_id": "mole"}, headers={"Host": "evil.example"})
    ).status_code == 400
    for host in ("127.0.0.1:8000", "localhost:8000", "localhost"):
        assert (await client.get("/api/health", headers={"Host": host})).status_code == 200
