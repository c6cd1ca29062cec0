"""The policy audit trail in the ledger (accepted / rejected writes, filtered reads, retention purges: codes
and counts, never content) and the retention sweeper (store and ledger, every card, one sweeper at a time)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.exc import OperationalError

from bureau.api.deps import Services
from bureau.game.retention import LEASE_NAME, RetentionSweeper
from bureau.ledger import cases as case_ledger
from bureau.memory import owner_rows
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft
from bureau.scope.memory_policy import MemoryPolicyError
from bureau.scope.vocabulary import MemoryType
from helpers import NewCase, ask, grant_of, publish, stored_rows

SECRET_TEXT = "The courier's codename is Nightjar."


async def decisions(client: httpx.AsyncClient, case_id: str, after: int = 0, limit: int = 100) -> dict[str, Any]:
    response = await client.get(f"/api/cases/{case_id}/policy-decisions", params={"after": after, "limit": limit})
    assert response.status_code == 200, response.text
    return response.json()


def rows(page: dict[str, Any], action: str) -> list[tuple[str, str, str, str, int]]:
    return [
        (d["code"], d["memory_type"], d["creator"], d["space"], d["count"])
        for d in page["decisions"]
        if d["action"] == action
    ]


async def test_writes_and_reads_are_audited_without_content(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case_id = (await new_case())["case"]["id"]
    loaded = rows(await decisions(client, case_id), "write_accepted")
    assert ("ok", "long_term_knowledge", "scenario", "informant", 2) in loaded  # the scenario's cards

    refused = [
        {"role": "informant", "text": "Call me on +44 20 7946 0958 after six."},
        {"role": "informant", "text": SECRET_TEXT, "memory_type": "audit_record"},
    ]
    for body in refused:
        assert (await client.post(f"/api/cases/{case_id}/whispers", json=body)).status_code in (400, 403)
    # A value its key does not take is the schema's over HTTP (422, nothing audited: the game never saw it);
    # a write that comes another way meets the policy table, which refuses it and audits the refusal.
    klingon = {"role": "suspect", "text": "klingon", "memory_type": "user_preference", "key": "preferred_language"}
    assert (await client.post(f"/api/cases/{case_id}/whispers", json=klingon)).status_code == 422
    with pytest.raises(MemoryPolicyError):
        await services.bureau.whisper_service.whisper(
            case_id, "suspect", "klingon", None, MemoryType.USER_PREFERENCE, "preferred_language"
        )
    ok = await client.post(f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": SECRET_TEXT})
    assert ok.status_code == 201
    await ask(client, case_id, "detective", "What is the courier's codename?")
    await ask(client, case_id, "detective", "What is the courier's codename?")

    page = await decisions(client, case_id)
    rejected = [
        (d["code"], d["detail"], d["memory_type"], d["space"])
        for d in page["decisions"]
        if d["action"] == "write_rejected"
    ]
    assert rejected == [
        ("UNSAFE_INPUT", "phone_number", "long_term_knowledge", "informant"),
        ("MEMORY_TYPE_FORBIDDEN", "operator:audit_record:ordinary", "audit_record", "informant"),
        ("PREFERENCE_VALUE_INVALID", "preferred_language", "user_preference", "suspect"),
    ]
    accepted = rows(page, "write_accepted")
    assert ("ok", "long_term_knowledge", "operator", "detective", 1) in accepted
    assert accepted.count(("ok", "session", "system", "detective", 1)) == 2  # each "I was asked" record
    # the second question found the first one's session record: context, never evidence, and audited so
    assert ("type_not_evidence", "session", "system", "detective", 1) in rows(page, "read_filtered")

    dumped = json.dumps(page)
    for text in (SECRET_TEXT, "7946", "klingon", "courier"):
        assert text not in dumped  # codes and counts only


async def test_the_audit_trail_pages_and_goes_with_the_case(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case_id = (await new_case())["case"]["id"]
    for _ in range(3):
        await client.post(f"/api/cases/{case_id}/whispers", json={"role": "suspect", "text": SECRET_TEXT})
    everything = (await decisions(client, case_id, limit=500))["decisions"]
    seen, after = [], 0
    while True:
        page = await decisions(client, case_id, after=after, limit=2)
        seen += page["decisions"]
        if page["next_after"] is None:
            break
        after = page["next_after"]
    assert [d["id"] for d in seen] == [d["id"] for d in everything] and len(seen) >= 5

    assert (await client.delete(f"/api/cases/{case_id}")).status_code == 204
    assert await services.ledger.policy_audit.policy_decisions(case_id) == []  # erased with the case
    assert (await client.get(f"/api/cases/{case_id}/policy-decisions")).status_code == 404


async def test_the_stage_never_sees_the_audit_trail(client: httpx.AsyncClient, new_case: NewCase) -> None:
    case_id = (await new_case())["case"]["id"]
    await client.post(f"/api/cases/{case_id}/whispers", json={"role": "suspect", "text": "+44 20 7946 0958"})
    stage = (await client.get(f"/api/cases/{case_id}/stage")).text
    assert "UNSAFE_INPUT" not in stage and "write_rejected" not in stage


async def test_memory_policy_route_offers_what_the_operator_may_write(client: httpx.AsyncClient) -> None:
    body = (await client.get("/api/memory-policy")).json()
    assert body["writable_types"] == ["user_preference", "long_term_knowledge", "operational_memory"]
    assert body["default_type"] == "long_term_knowledge"
    assert "dietary_preference" in body["preference_keys"]


# ----- the retention sweeper -------------------------------------------------------------------------------


async def raw_ids(services: Services, case_id: str, space: str) -> set[str]:
    return set((await stored_rows(services, case_id))[space])


async def test_the_sweeper_pages_through_every_card_and_cleans_store_and_ledger(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    case_id = (await new_case())["case"]["id"]
    gateway, scope = services.gateway, await grant_of(services, case_id, writes=["informant"])
    soon = datetime.now(UTC) + timedelta(seconds=1.5)
    published = await gateway.write(scope, CardDraft("The drop is at the old mill.", "drop", "secret", expires_at=soon))
    assert (await publish(client, case_id, "informant", published.id)).status_code == 201
    past = datetime.now(UTC) - timedelta(seconds=1)
    expired = [
        await gateway.write(scope, CardDraft(f"Old note {i}.", "note", "note", expires_at=past)) for i in range(7)
    ]
    live = await raw_ids(services, case_id, "informant") - {c.id for c in expired} - {published.id}
    monkeypatch.setattr(owner_rows, "_PAGE_SIZE", 3)  # several pages even for a small case

    await asyncio.sleep(max(0.0, (soon - datetime.now(UTC)).total_seconds()) + 0.05)  # let `soon` pass
    purged = await sweep_when_free(new_sweeper(services, gateway))
    assert purged >= 9  # 7 expired + the published card + its board copy

    assert await raw_ids(services, case_id, "informant") == live
    assert await raw_ids(services, case_id, "bulletin_board") == set()
    assert await services.ledger.publications.publications(case_id) == []  # the ledger forgot the copy too
    swept: dict[tuple[str, str], int] = {}
    for code, memory_type, creator, space, count in rows(await decisions(client, case_id), "retention_purged"):
        assert (code, memory_type, creator) == ("expired", "long_term_knowledge", "operator")
        swept[space] = swept.get(space, 0) + count
    assert swept == {"informant": 8, "bulletin_board": 1}


def new_sweeper(services: Services, gateway: MemoryGateway) -> RetentionSweeper:
    """Another process's sweeper: its own lease owner, over the same ledger and store."""
    ledger = services.ledger
    return RetentionSweeper(
        gateway,
        services.bureau.keys,
        cases=ledger.cases,
        record=ledger.record,
        publications=ledger.publications,
        cleanups=ledger.cleanups,
        policy_audit=ledger.policy_audit,
    )


async def sweep_when_free(sweeper: RetentionSweeper, deadline_s: float = 30.0) -> int:
    """Sweep, waiting (with a deadline) while another sweeper of this test session holds the lease."""
    deadline = asyncio.get_running_loop().time() + deadline_s
    while (purged := await sweeper.sweep()) is None:
        assert asyncio.get_running_loop().time() < deadline, "the sweeper lease was never free"
        await asyncio.sleep(0.05)  # back-off between polls of the lease
    return purged


async def test_one_sweeper_at_a_time(services: Services) -> None:
    ledger = services.ledger
    first, second = new_sweeper(services, services.gateway), new_sweeper(services, services.gateway)
    await sweep_when_free(first)  # the lease is free now (the app's start-up sweep is over)
    assert await ledger.policy_audit.acquire_lease(LEASE_NAME, first.owner, 60)
    try:
        assert await second.sweep() is None  # another process holds the lease: this one skips
        assert await ledger.policy_audit.acquire_lease(LEASE_NAME, first.owner, 60)  # the holder renews
    finally:
        await ledger.policy_audit.release_lease(LEASE_NAME, first.owner)
    assert await second.sweep() is not None
    # a lease nobody renews can be taken over
    assert await ledger.policy_audit.acquire_lease(LEASE_NAME, first.owner, 0.01)
    await asyncio.sleep(0.05)  # let the 10 ms lease lapse (waiting for time, not for another task)
    assert await ledger.policy_audit.acquire_lease(LEASE_NAME, second.owner, 60)
    await ledger.policy_audit.release_lease(LEASE_NAME, second.owner)


@pytest.mark.parametrize("command", ["whisper", "interrogation"])
async def test_an_accepted_write_commits_with_its_audit_row_or_not_at_all(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """The audit row is part of the command's transaction: when it cannot be written, the command fails with a
    ledger error and leaves nothing (no card, no event, no version, no row); when it commits, the row is there."""

    case_id = (await new_case())["case"]["id"]
    before = await client.get(f"/api/cases/{case_id}")
    audited = len((await decisions(client, case_id))["decisions"])
    route, body = {
        "whisper": ("whispers", {"role": "detective", "text": SECRET_TEXT}),
        "interrogation": ("interrogations", {"role": "detective", "question": "Who is Nightjar?"}),
    }[command]
    url = f"/api/cases/{case_id}/{route}"

    def no_room(*_: Any) -> None:
        raise OperationalError("INSERT INTO policy_decisions", {}, Exception("injected"))

    monkeypatch.setattr(case_ledger, "append_decisions", no_room)
    failed = await client.post(url, json=body)
    assert failed.status_code == 503 and failed.json()["detail"]["code"] == "MEMORY_UNAVAILABLE"  # a storage fault
    after = await client.get(f"/api/cases/{case_id}")
    assert after.json() == before.json()  # the same cards (the written one undone), the same version
    assert len((await decisions(client, case_id))["decisions"]) == audited

    monkeypatch.undo()
    assert (await client.post(url, json=body)).status_code in (200, 201)
    page = await decisions(client, case_id)
    assert ("ok", "detective") in [(d["code"], d["space"]) for d in page["decisions"][audited:]]
