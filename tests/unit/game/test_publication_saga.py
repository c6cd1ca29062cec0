"""The publish Saga: failures and crashes at every step, recovery, compensation, two OS processes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bureau.api.deps import Services
from bureau.memory.types import CardDraft, MemoryUnavailableError
from bureau.vault import Grant
from helpers import NewCase, grant_of, informant_secret_card, publish, snapshot
from live_server import LiveServer

STEPS = ("after_reserve", "after_board_write", "before_mark_ready")


class SimulatedCrash(BaseException):
    """Like a process dying mid-step: no `except Exception` compensation runs."""


@pytest.fixture
def faults(services: Services) -> Iterator[dict[str, BaseException]]:
    armed: dict[str, BaseException] = {}

    def hook(step: str) -> None:
        if step in armed:
            raise armed.pop(step)

    services.bureau.publisher.fault = hook
    yield armed
    services.bureau.publisher.fault = lambda step: None


async def board(client: httpx.AsyncClient, case_id: str) -> list[dict[str, Any]]:
    return (await snapshot(client, case_id))["spaces"]["bulletin_board"]


@pytest.mark.parametrize("step", STEPS)
async def test_a_failure_at_any_step_leaves_nothing_and_a_retry_publishes_once(
    step: str,
    client: httpx.AsyncClient,
    new_case: NewCase,
    faults: dict[str, BaseException],
    services: Services,
) -> None:
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    faults[step] = MemoryUnavailableError("injected")
    failed = await publish(client, case_id, "informant", secret["id"])
    assert failed.status_code == 503
    assert failed.json()["detail"]["code"] == "MEMORY_UNAVAILABLE"
    assert await board(client, case_id) == []
    assert await services.ledger.publications.get_publication(case_id, secret["id"]) is None

    retry = await publish(client, case_id, "informant", secret["id"])
    assert retry.status_code == 201 and retry.json()["idempotent"] is False
    assert [c["id"] for c in await board(client, case_id)] == [retry.json()["public_card"]["id"]]


@pytest.mark.parametrize("step", STEPS)
async def test_a_crash_at_any_step_is_reconciled_to_exactly_one_copy(
    step: str,
    client: httpx.AsyncClient,
    new_case: NewCase,
    faults: dict[str, BaseException],
    services: Services,
) -> None:
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    faults[step] = SimulatedCrash()
    with pytest.raises(SimulatedCrash):
        await services.bureau.publication_service.publish(case_id, "informant", secret["id"])
    pending = await services.ledger.publications.get_publication(case_id, secret["id"])
    assert pending is not None and pending.state == "pending"

    # The crashed owner's lease (1 s in tests) runs out while the retry waits; the retry takes over and
    # finds the crashed attempt's copy by its source card id instead of writing a second one.
    retry = await publish(client, case_id, "informant", secret["id"])
    assert retry.status_code == 201, retry.text
    copies = await board(client, case_id)
    assert len(copies) == 1
    assert copies[0]["id"] == retry.json()["public_card"]["id"]
    assert copies[0]["source"]["card_id"] == secret["id"]
    again = await publish(client, case_id, "informant", secret["id"])
    assert again.status_code == 200 and again.json()["public_card"]["id"] == copies[0]["id"]


async def test_a_live_lease_answers_409_with_retry_after_but_never_forever(
    client: httpx.AsyncClient, new_case: NewCase, faults: dict[str, BaseException], services: Services
) -> None:
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    publisher = services.bureau.publisher
    publisher.lease_s = 4.0
    try:
        faults["after_reserve"] = SimulatedCrash()
        with pytest.raises(SimulatedCrash):
            await services.bureau.publication_service.publish(case_id, "informant", secret["id"])
        pending = await publish(client, case_id, "informant", secret["id"])
        assert pending.status_code == 409
        assert pending.json()["detail"]["code"] == "PUBLICATION_PENDING"
        assert int(pending.headers["Retry-After"]) >= 1
    finally:
        publisher.lease_s = services.settings.publication_lease_s
    deadline = time.monotonic() + 15
    while True:
        response = await publish(client, case_id, "informant", secret["id"])
        if response.status_code == 201 or time.monotonic() > deadline:
            break
        assert response.status_code == 409
    assert response.status_code == 201
    assert len(await board(client, case_id)) == 1


async def test_a_failed_compensation_becomes_a_cleanup_task_that_finishes_later(
    client: httpx.AsyncClient,
    new_case: NewCase,
    faults: dict[str, BaseException],
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    gateway = services.gateway

    async def failing_delete(scope, card_id):
        raise MemoryUnavailableError("injected")

    faults["before_mark_ready"] = MemoryUnavailableError("injected")
    open_before = await services.ledger.cleanups.open_cleanups()
    with monkeypatch.context() as patch:
        patch.setattr(gateway, "delete", failing_delete)
        failed = await publish(client, case_id, "informant", secret["id"])
    assert failed.status_code == 503
    assert await services.ledger.cleanups.open_cleanups() == open_before + 1
    board = await grant_of(services, case_id, reads=["bulletin_board"])
    orphan = await gateway.list(board)
    assert len(orphan) == 1  # the copy whose delete failed, waiting for the cleanup

    assert await services.bureau.case_service.run_cleanups() >= 1
    assert await services.ledger.cleanups.open_cleanups() == open_before
    assert await gateway.list(board) == []


@pytest.fixture(scope="module")
def twin_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, LiveServer]]:
    """Two app instances, two OS processes, one data dir (embedded seekdb + SQLite ledger)."""
    shared = tmp_path_factory.mktemp("twin-data")
    first = LiveServer(shared).start()
    second = LiveServer(shared).start()
    yield first, second
    second.stop()
    first.stop()


async def test_7_concurrent_publish_from_two_processes_makes_exactly_one_copy(
    twin_servers: tuple[LiveServer, LiveServer],
) -> None:
    first, second = twin_servers
    async with httpx.AsyncClient(timeout=30) as http:
        created = await http.post(first.url + "/api/cases", json={"scenario_id": "safe-combination"})
        case = created.json()
        case_id, secret = case["case"]["id"], informant_secret_card(case)
        body = {"role": "informant", "card_id": secret["id"]}
        requests = [
            http.post(server.url + f"/api/cases/{case_id}/publications", json=body)
            for _ in range(12)
            for server in (first, second)
        ]
        responses = await asyncio.gather(*requests)
        statuses = [r.status_code for r in responses]
        assert statuses.count(201) == 1, statuses
        assert set(statuses) <= {200, 201}, statuses
        assert sum(1 for r in responses if r.json()["idempotent"] is False) == 1
        assert len({r.json()["public_card"]["id"] for r in responses}) == 1
        for server in (first, second):
            snap = (await http.get(server.url + f"/api/cases/{case_id}")).json()
            assert len(snap["spaces"]["bulletin_board"]) == 1


async def test_a_retry_that_adopts_an_orphan_copy_keeps_it_safe_from_the_pending_cleanup(
    client: httpx.AsyncClient,
    new_case: NewCase,
    faults: dict[str, BaseException],
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Compensation fails (cleanup task recorded), a retry reconciles onto the orphan copy, then cleanup runs:
    the copy is live now and must survive, and the card must stay publishable (never a permanent 409)."""
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)

    async def failing_delete(scope, card_id):
        raise MemoryUnavailableError("injected")

    faults["before_mark_ready"] = MemoryUnavailableError("injected")
    with monkeypatch.context() as patch:
        patch.setattr(services.gateway, "delete", failing_delete)
        assert (await publish(client, case_id, "informant", secret["id"])).status_code == 503
    retry = await publish(client, case_id, "informant", secret["id"])
    assert retry.status_code == 201
    adopted = retry.json()["public_card"]["id"]

    await services.bureau.case_service.run_cleanups()
    assert [c["id"] for c in await board(client, case_id)] == [adopted]
    again = await publish(client, case_id, "informant", secret["id"])
    assert again.status_code == 200 and again.json()["public_card"]["id"] == adopted


async def test_a_ready_publication_whose_copy_vanished_publishes_again(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    first = (await publish(client, case_id, "informant", secret["id"])).json()["public_card"]
    lost = await grant_of(services, case_id, writes=["bulletin_board"], purpose="lifecycle")
    assert await services.gateway.delete(lost, first["id"])  # lost outside the Saga
    response = await publish(client, case_id, "informant", secret["id"])
    assert response.status_code == 201 and response.json()["idempotent"] is False
    copies = await board(client, case_id)
    assert len(copies) == 1 and copies[0]["id"] != first["id"]
    assert copies[0]["source"]["card_id"] == secret["id"]


async def test_a_stalled_attempts_copy_seen_only_after_the_takeover_looked_is_removed(
    client: httpx.AsyncClient,
    new_case: NewCase,
    faults: dict[str, BaseException],
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The race behind two board copies under load: attempt A stalls past its lease with its copy written but
    not yet visible; B takes over, finds nothing, writes its own copy and marks ready. Exactly one must stay."""
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    faults["before_mark_ready"] = SimulatedCrash()  # A: copy written, never marked ready
    with pytest.raises(SimulatedCrash):
        await services.bureau.publication_service.publish(case_id, "informant", secret["id"])
    assert len(await board(client, case_id)) == 1

    real_find = services.gateway.find_by_source
    calls = 0

    async def not_yet_visible_once(scope, source_card_id):
        nonlocal calls
        calls += 1
        return [] if calls == 1 else await real_find(scope, source_card_id)

    monkeypatch.setattr(services.gateway, "find_by_source", not_yet_visible_once)
    retry = await publish(client, case_id, "informant", secret["id"])  # B, after A's 1 s lease ran out
    assert retry.status_code == 201, retry.text
    assert [c["id"] for c in await board(client, case_id)] == [retry.json()["public_card"]["id"]]


async def test_concurrent_publishes_of_one_card_in_one_process_share_one_run_of_the_saga(
    client: httpx.AsyncClient, services: Services, new_case: NewCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """25 at once: one reservation, one copy, one 201 and 24 repeats with the same copy. Without sharing
    each request read the card, contended for the reservation and polled the pending row (p99 2.5 s for
    4 × 25 in bench/publish_contention.py)."""
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    reservations = 0
    reserve = services.ledger.publications.reserve_publication

    async def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal reservations
        reservations += 1
        return await reserve(*args, **kwargs)

    monkeypatch.setattr(services.ledger.publications, "reserve_publication", counted)
    case_reads = 0
    get_case = services.ledger.cases.get_case

    async def counted_case(*args: Any) -> Any:
        nonlocal case_reads
        case_reads += 1
        return await get_case(*args)

    monkeypatch.setattr(services.ledger.cases, "get_case", counted_case)
    responses = await asyncio.gather(*(publish(client, case_id, "informant", secret["id"]) for _ in range(25)))
    assert sorted(r.status_code for r in responses) == [200] * 24 + [201]
    assert sum(1 for r in responses if not r.json()["idempotent"]) == 1
    assert len({r.json()["public_card"]["id"] for r in responses}) == 1
    assert reservations == 1
    assert case_reads == 1  # the run checks the case once for all who share it
    assert [c["source"]["card_id"] for c in await board(client, case_id)] == [secret["id"]]
    # Once it has finished, the next publish is an ordinary repeat through the ledger.
    again = await publish(client, case_id, "informant", secret["id"])
    assert again.status_code == 200 and again.json()["idempotent"] is True
    assert reservations == 1  # a repeat reads the row; it never attempts a reservation
    assert services.bureau.publisher.runs_in_flight == 0


async def test_a_conditional_publish_checks_its_own_version_while_a_run_of_the_card_is_in_flight(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    stale = case["case"]["version"] - 1
    body = {"role": "informant", "card_id": secret["id"], "expected_version": stale}
    plain = [publish(client, case_id, "informant", secret["id"]) for _ in range(5)]
    conditional = client.post(f"/api/cases/{case_id}/publications", json=body)
    *shared, refused = await asyncio.gather(*plain, conditional)
    assert sorted(r.status_code for r in shared) == [200] * 4 + [201]
    assert refused.status_code == 409 and refused.json()["detail"]["code"] == "VERSION_CONFLICT"
    gone = await client.post(f"/api/cases/{'0' * 24}/publications", json={"role": "informant", "card_id": secret["id"]})
    assert gone.status_code == 404 and gone.json()["detail"]["code"] == "CASE_NOT_FOUND"


@pytest.fixture
def store_reads(services: Services, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The space of every card read by id (`MemoryGateway.get`) while the test runs."""
    spaces: list[str] = []
    real_get = services.gateway.get

    async def recorded(grant: Grant, card_id: str) -> Any:
        spaces.extend(grant.shape.reads)
        return await real_get(grant, card_id)

    monkeypatch.setattr(services.gateway, "get", recorded)
    return spaces


async def test_a_repeat_is_answered_from_the_publication_row_and_its_copy_without_reading_the_source(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, store_reads: list[str]
) -> None:
    """The row names the copy: a repeat reads it and the copy, nothing else (no reservation attempt, no read
    of the private card). It is still the source's own role only, and only while the card exists."""
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    first = await publish(client, case_id, "informant", secret["id"])
    assert first.status_code == 201
    store_reads.clear()
    events_before = (await services.ledger.cases.get_case(case_id)).version

    again = await publish(client, case_id, "informant", secret["id"])
    assert again.status_code == 200 and again.json() == {**first.json(), "idempotent": True}
    assert store_reads == ["bulletin_board"]
    assert (await services.ledger.cases.get_case(case_id)).version == events_before

    wrong_role = await publish(client, case_id, "detective", secret["id"])
    assert wrong_role.status_code == 404 and wrong_role.json()["detail"]["code"] == "CARD_NOT_FOUND"
    assert (await client.delete(f"/api/cases/{case_id}/cards/{secret['id']}")).status_code == 204
    gone = await publish(client, case_id, "informant", secret["id"])
    assert gone.status_code == 404 and gone.json() == wrong_role.json()
    assert await board(client, case_id) == []


async def test_a_publish_waiting_on_another_attempt_answers_with_its_copy_without_reading_the_source(
    client: httpx.AsyncClient,
    new_case: NewCase,
    services: Services,
    store_reads: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another process holds the reservation (a live lease): the request waits by reading the row and
    answers with that attempt's copy once it is ready; it writes nothing and never reads the private card."""
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    ledger = services.ledger
    reserved, _ = await ledger.publications.reserve_publication(case_id, secret["id"], "informant", "elsewhere", 30.0)
    assert reserved
    row_reads = 0
    real_read = ledger.publications.get_publication

    async def counted(*args: Any) -> Any:
        nonlocal row_reads
        row_reads += 1
        return await real_read(*args)

    monkeypatch.setattr(ledger.publications, "get_publication", counted)
    reserve_attempts = 0

    async def no_reservation(*args: Any, **kwargs: Any) -> Any:
        nonlocal reserve_attempts
        reserve_attempts += 1
        raise AssertionError("a waiter must not attempt the reservation")

    monkeypatch.setattr(ledger.publications, "reserve_publication", no_reservation)
    waiting = asyncio.create_task(publish(client, case_id, "informant", secret["id"]))
    deadline = time.monotonic() + 10
    while row_reads < 3 and not waiting.done() and time.monotonic() < deadline:
        await asyncio.sleep(0.005)
    assert row_reads >= 3 and not waiting.done()  # waiting on the pending row, by reading it

    draft = CardDraft(
        content=secret["content"],
        topic=secret["topic"],
        kind=secret["kind"],
        source_role="informant",
        source_card_id=secret["id"],
    )
    elsewhere = await grant_of(services, case_id, writes=["bulletin_board"], purpose="publish")
    copy = await services.gateway.write(elsewhere, draft)  # "the other process" writes its copy
    assert await ledger.publications.complete_publication(case_id, secret["id"], "elsewhere", copy.id, []) is not None
    answered = await asyncio.wait_for(waiting, 10)
    assert answered.status_code == 200, answered.text
    assert answered.json()["idempotent"] is True and answered.json()["public_card"]["id"] == copy.id
    assert store_reads == ["bulletin_board"] and reserve_attempts == 0
    assert [c["id"] for c in await board(client, case_id)] == [copy.id]
