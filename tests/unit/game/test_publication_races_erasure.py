"""A publish racing an erasure of the same card (docs/publish-saga.md, "A publish racing a card delete").

Each interleaving is provoked in a fixed order by asyncio events around the real ledger's own steps (the
publish's reservation and mark-ready, the erasure's commit), over the real store and the real SQLite ledger.
Afterwards the board holds no copy of the erased card, its publication row is a tombstone (never `ready`),
a retry of the publish answers 404 as for any erased card, and no event carries the card's text. Each test
fails without the tombstone: the publish marks a copy ready that outlives its erased source, or the
erasure misses the copy the row names.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from bureau.api.deps import Services
from helpers import NewCase, grant_of, informant_secret_card, publish

Step = Callable[[], Awaitable[None]]


class SimulatedCrash(BaseException):
    """Like a process dying mid-step: no `except Exception` compensation runs."""


def around(
    monkeypatch: pytest.MonkeyPatch, ledger: Any, name: str, before: Step | None = None, after: Step | None = None
) -> None:
    """Run `before` / `after` around every call of one real ledger method: where the other command moves."""
    real = getattr(ledger, name)

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        if before is not None:
            await before()
        result = await real(*args, **kwargs)
        if after is not None:
            await after()
        return result

    monkeypatch.setattr(ledger, name, wrapped)


def signal(event: asyncio.Event, then: asyncio.Event | None = None) -> Step:
    """Set `event`, then (optionally) wait for `then`."""

    async def step() -> None:
        event.set()
        if then is not None:
            await asyncio.wait_for(then.wait(), 60)

    return step


def release(event: asyncio.Event, task: asyncio.Task[Any]) -> Step:
    """Set `event`, then wait for the publish it lets go to finish, however it ends."""

    async def step() -> None:
        event.set()
        await asyncio.wait([task], timeout=60)
        assert task.done(), "the publish never finished"

    return step


async def erase(client: httpx.AsyncClient, case_id: str, card_id: str) -> None:
    response = await client.delete(f"/api/cases/{case_id}/cards/{card_id}")
    assert response.status_code == 204, response.text


async def assert_nothing_of_the_card_survives(
    client: httpx.AsyncClient, services: Services, case_id: str, secret: dict[str, Any]
) -> list[str]:
    """The shared outcome of every interleaving. Returns the board copy ids the erasure reported."""
    board = await grant_of(services, case_id, reads=["bulletin_board"], writes=["bulletin_board"])
    assert await services.gateway.list(board) == []
    assert await services.gateway.find_by_source(board, secret["id"]) == []
    row = await services.ledger.publications.get_publication(case_id, secret["id"])
    assert row is not None and row.state == "erased" and row.public_card_id is None
    retry = await publish(client, case_id, "informant", secret["id"])
    assert (retry.status_code, retry.json()["detail"]["code"]) == (404, "CARD_NOT_FOUND")
    events = await services.ledger.events.events_after(case_id, 0)
    assert secret["content"] not in json.dumps([e.payload for e in events], ensure_ascii=False)
    [erased] = [e for e in events if e.type == "card.erased"]
    assert erased.payload["card_id"] == secret["id"]
    return list(erased.payload["board_card_ids"])


@pytest.mark.parametrize("row_read", ["before the erasure commits", "after the erasure commits"])
async def test_a_publish_that_read_the_card_before_it_left_the_store_meets_the_tombstone(
    row_read: str,
    client: httpx.AsyncClient,
    new_case: NewCase,
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Interleaving 1: the erasure lists the board (nothing) and commits; while the card is still in the store
    a publish reads it and reserves. Before: either it had read the (missing) row and the card before the
    commit and reserves after it, colliding with the tombstone; or it reads the row after the commit and
    meets the tombstone there (a repeat is never answered from a tombstone)."""
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    ledger = services.ledger
    outcome: dict[str, httpx.Response] = {}

    if row_read == "before the erasure commits":
        at_reservation, committed = asyncio.Event(), asyncio.Event()
        around(monkeypatch, ledger.publications, "reserve_publication", before=signal(at_reservation, then=committed))
        publishing = asyncio.create_task(publish(client, case_id, "informant", secret["id"]))
        await asyncio.wait_for(at_reservation.wait(), 60)  # the row read (none) and the card read are done
        around(monkeypatch, ledger.cases, "erase_card", after=release(committed, publishing))
        await erase(client, case_id, secret["id"])
        outcome["publish"] = publishing.result()
    else:
        store_reads: list[str] = []
        real_get = services.gateway.get

        async def recorded_get(grant: Any, card_id: str) -> Any:
            store_reads.extend(grant.shape.reads)
            return await real_get(grant, card_id)

        async def publish_now() -> None:  # committed, the card not yet deleted from the store
            with monkeypatch.context() as patch:
                patch.setattr(services.gateway, "get", recorded_get)
                outcome["publish"] = await publish(client, case_id, "informant", secret["id"])

        around(monkeypatch, ledger.cases, "erase_card", after=publish_now)
        await erase(client, case_id, secret["id"])
        assert store_reads == []  # answered from the tombstone: the card (still in the store) was not read

    answered = outcome["publish"]
    assert (answered.status_code, answered.json()["detail"]["code"]) == (404, "CARD_NOT_FOUND"), answered.text
    assert await assert_nothing_of_the_card_survives(client, services, case_id, secret) == []


@pytest.mark.parametrize("mark_ready", ["before the erasure commits", "after the erasure commits"])
async def test_a_publish_that_reserved_first_and_wrote_its_copy_after_the_listing_leaves_no_copy(
    mark_ready: str,
    client: httpx.AsyncClient,
    new_case: NewCase,
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Interleaving 2: the publish reserves, the erasure lists the board (nothing yet), then the publish
    writes its copy. Marked ready before the commit, the row names the copy and the erasure deletes it (the
    publish had answered 201: it happened before the erasure). Marked ready after the commit, the mark-ready
    meets the tombstone and the publish removes its own copy and answers 404."""
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    ledger = services.ledger
    reserved, listed, committed = asyncio.Event(), asyncio.Event(), asyncio.Event()
    around(monkeypatch, ledger.publications, "reserve_publication", after=signal(reserved, then=listed))
    publishing = asyncio.create_task(publish(client, case_id, "informant", secret["id"]))
    await asyncio.wait_for(reserved.wait(), 60)
    if mark_ready == "before the erasure commits":
        around(monkeypatch, ledger.cases, "erase_card", before=release(listed, publishing))
    else:
        around(
            monkeypatch,
            ledger.publications,
            "complete_publication",
            before=lambda: asyncio.wait_for(committed.wait(), 60),
        )
        around(monkeypatch, ledger.cases, "erase_card", before=signal(listed), after=release(committed, publishing))
    await erase(client, case_id, secret["id"])

    answered = publishing.result()
    if mark_ready == "before the erasure commits":
        assert answered.status_code == 201, answered.text
        copy_id = answered.json()["public_card"]["id"]
        assert await assert_nothing_of_the_card_survives(client, services, case_id, secret) == [copy_id]
    else:
        assert (answered.status_code, answered.json()["detail"]["code"]) == (404, "CARD_NOT_FOUND"), answered.text
        assert await assert_nothing_of_the_card_survives(client, services, case_id, secret) == []


async def test_a_copy_left_by_an_attempt_that_died_during_the_erasure_is_swept_after_its_lease(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interleaving 2 with a crash: the publish writes its copy after the listing and dies before marking it
    ready, so nothing compensates. The tombstone keeps that attempt's owner and lease; a lease after the
    lease ran out, the maintenance loop's roll-back deletes the copy and marks the tombstone swept."""
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    ledger, publisher = services.ledger, services.bureau.publisher
    reserved, listed = asyncio.Event(), asyncio.Event()
    around(monkeypatch, ledger.publications, "reserve_publication", after=signal(reserved, then=listed))

    def crash(step: str) -> None:
        if step == "before_mark_ready":
            raise SimulatedCrash

    monkeypatch.setattr(publisher, "fault", crash)
    publishing = asyncio.create_task(
        publisher.publish(case_id, "informant", secret["id"], services.bureau.case_access.require_case)
    )
    await asyncio.wait_for(reserved.wait(), 60)
    around(monkeypatch, ledger.cases, "erase_card", before=release(listed, publishing))
    await erase(client, case_id, secret["id"])
    with pytest.raises(SimulatedCrash):
        publishing.result()
    board = await grant_of(services, case_id, reads=["bulletin_board"], writes=["bulletin_board"])
    [orphan] = await services.gateway.find_by_source(board, secret["id"])  # outlives the erasure
    tombstone = await ledger.publications.get_publication(case_id, secret["id"])
    assert tombstone is not None and tombstone.state == "erased" and tombstone.owner != ""

    deadline = time.monotonic() + 30  # the attempt's 1 s lease, then one more lease
    while await services.gateway.get(board, orphan.id) is not None:
        assert time.monotonic() < deadline, "the maintenance roll-back never swept the orphan copy"
        await publisher.roll_back_abandoned()
        await asyncio.sleep(0.1)
    swept = await ledger.publications.get_publication(case_id, secret["id"])
    assert swept is not None and swept.state == "erased" and swept.owner == ""
    assert await ledger.publications.abandoned_publications(older_than_s=0) == []  # nothing left to sweep, ever
    assert await assert_nothing_of_the_card_survives(client, services, case_id, secret) == []


async def test_a_tombstone_blocks_nothing_else_and_goes_with_a_reset(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    """The tombstone is the erased card's alone: another card of the same role still publishes (and is
    answered from its own row), and a reset removes every row of the case, tombstones included."""
    case = await new_case()
    case_id, secret = case["case"]["id"], informant_secret_card(case)
    other = next(c for c in case["spaces"]["informant"] if c["id"] != secret["id"])
    await erase(client, case_id, secret["id"])
    first = await publish(client, case_id, "informant", other["id"])
    again = await publish(client, case_id, "informant", other["id"])
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["public_card"]["id"] == first.json()["public_card"]["id"]
    assert {r.state for r in await services.ledger.publications.publications(case_id)} == {"erased", "ready"}

    assert (await client.post(f"/api/cases/{case_id}/reset")).status_code == 200
    assert await services.ledger.publications.publications(case_id) == []
