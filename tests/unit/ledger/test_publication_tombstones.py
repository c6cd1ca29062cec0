"""The tombstone a card erasure leaves in its publication row, on SQLite and on PostgreSQL: what a publish
racing the erasure collides with (the interleavings themselves: tests/unit/game/test_publication_races_erasure.py)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session

from bureau.ledger.database import create_ledger_engine, migrate
from bureau.ledger.models import CaseRow, PublicationRow
from bureau.ledger.publications import PublicationRecord
from bureau.ledger.repository import Ledger
from bureau.ledger.tombstones import entomb_publication
from bureau.ledger.transactions import utcnow
from bureau.vault import Vault
from helpers import lifecycle_grant

T = TypeVar("T")


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    url = (
        f"sqlite:///{tmp_path / 'bureau.db'}" if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    )
    engine = create_ledger_engine(url)
    migrate(engine)
    yield engine
    engine.dispose()


async def active_case(ledger: Ledger) -> str:
    case_id = "tomb" + os.urandom(6).hex()
    await ledger.cases.create_case(case_id, "safe-combination", "en")
    await ledger.cases.change_case(case_id, [], status="active")
    return case_id


async def erased(ledger: Ledger, vault: Vault, case_id: str, card_id: str, listed: list[str]) -> list[str]:
    """A card erasure's board copies to delete: the tasks it wrote in its own transaction (docs/erasure.md)."""
    grant = await lifecycle_grant(vault, case_id)
    tasks = await ledger.cases.erase_card(case_id, card_id, "informant", listed, grant=grant)
    grant.close()
    assert [(t.space, t.card_id) for t in tasks][:1] == [("informant", card_id)]  # the card itself first
    return [t.card_id for t in tasks if t.space == "bulletin_board"]


async def abandoned(ledger: Ledger, case_id: str) -> list[PublicationRecord]:
    """The sweep's work in this case (the PostgreSQL database is shared by the session's tests)."""
    return [r for r in await ledger.publications.abandoned_publications(older_than_s=0) if r.case_id == case_id]


async def test_an_erasure_over_a_pending_reservation_blocks_it_and_keeps_it_for_the_sweep(
    engine: Engine, vault: Vault
) -> None:
    ledger = Ledger(engine)
    case_id = await active_case(ledger)
    reserved, _ = await ledger.publications.reserve_publication(case_id, "card1", "informant", "attempt-a", 0.0)
    assert reserved
    assert await erased(ledger, vault, case_id, "card1", []) == []

    tombstone = await ledger.publications.get_publication(case_id, "card1")
    assert tombstone is not None and (tombstone.state, tombstone.owner) == ("erased", "attempt-a")
    again, existing = await ledger.publications.reserve_publication(case_id, "card1", "informant", "attempt-b", 10.0)
    assert not again and existing.state == "erased"
    assert await ledger.publications.complete_publication(case_id, "card1", "attempt-a", "copy1", []) is None
    assert not await ledger.publications.take_over_expired(case_id, "card1", "attempt-b", 10.0)
    await ledger.publications.release_publication(case_id, "card1", "attempt-a")  # releases only a pending row
    assert [r.source_card_id for r in await abandoned(ledger, case_id)] == ["card1"]
    assert await erased(ledger, vault, case_id, "card1", []) == []  # a repeated delete
    assert [r.owner for r in await abandoned(ledger, case_id)] == ["attempt-a"]  # still to be swept

    assert await ledger.publications.settle_tombstone(case_id, "card1", "attempt-a")
    assert await abandoned(ledger, case_id) == []
    swept = await ledger.publications.get_publication(case_id, "card1")
    assert swept is not None and (swept.state, swept.owner, swept.public_card_id) == ("erased", "", None)


async def test_an_erasure_deletes_the_copy_a_ready_row_names_and_reports_it(engine: Engine, vault: Vault) -> None:
    ledger = Ledger(engine)
    case_id = await active_case(ledger)
    await ledger.publications.reserve_publication(case_id, "card1", "informant", "attempt-a", 10.0)
    assert await ledger.publications.complete_publication(case_id, "card1", "attempt-a", "copy1", []) is not None

    assert await erased(ledger, vault, case_id, "card1", ["listed1", "copy1"]) == ["listed1", "copy1"]
    await ledger.publications.reserve_publication(case_id, "card2", "informant", "attempt-b", 10.0)
    assert await ledger.publications.complete_publication(case_id, "card2", "attempt-b", "copy2", []) is not None
    assert await erased(ledger, vault, case_id, "card2", ["listed2"]) == ["listed2", "copy2"]

    events = [e for e in await ledger.events.events_after(case_id, 0) if e.type == "card.erased"]
    assert [{k: e.payload[k] for k in ("space", "card_id", "board_card_ids")} for e in events] == [
        {"space": "informant", "card_id": "card1", "board_card_ids": ["listed1", "copy1"]},
        {"space": "informant", "card_id": "card2", "board_card_ids": ["listed2", "copy2"]},
    ]
    rows = {r.source_card_id: r for r in await ledger.publications.publications(case_id)}
    assert {(r.state, r.owner, r.public_card_id) for r in rows.values()} == {("erased", "", None)}
    assert not await ledger.publications.is_published_copy(case_id, "copy1")
    assert await abandoned(ledger, case_id) == []  # nothing was in flight


async def test_an_erasure_without_a_row_leaves_a_tombstone_a_later_reservation_meets(
    engine: Engine, vault: Vault
) -> None:
    ledger = Ledger(engine)
    case_id = await active_case(ledger)
    assert await erased(ledger, vault, case_id, "card1", []) == []
    reserved, existing = await ledger.publications.reserve_publication(case_id, "card1", "informant", "attempt-a", 10.0)
    assert not reserved and (existing.state, existing.role) == ("erased", "informant")
    await ledger.cases.reset_case(case_id, [], reset_to="g2")  # a reset takes the tombstone with it
    assert await ledger.publications.publications(case_id) == []


async def test_an_erasure_waits_for_a_reservation_in_flight_and_entombs_it(engine: Engine, vault: Vault) -> None:
    """PostgreSQL: a reservation's INSERT holds the case row (its key-share lock) until it commits, and the
    erasure's case change waits for it, then finds the reservation and entombs it: never two INSERTs of one
    key at once. (SQLite has one writer at a time: the erasure begins after the reservation has committed.)"""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time: nothing to wait for")
    ledger = Ledger(engine)
    case_id = await active_case(ledger)

    def reserve(session: Session) -> None:
        now = utcnow()
        session.get(CaseRow, case_id, with_for_update={"key_share": True})
        session.add(
            PublicationRow(
                case_id=case_id,
                source_card_id="card1",
                role="informant",
                state="pending",
                owner="attempt-a",
                lease_expires_at=now,
                created_at=now,
                updated_at=now,
            )
        )

    erasing = erased(ledger, vault, case_id, "card1", [])
    assert await while_another_transaction_holds(engine, reserve, erasing) == []
    tombstone = await ledger.publications.get_publication(case_id, "card1")
    assert tombstone is not None and (tombstone.state, tombstone.owner) == ("erased", "attempt-a")


async def test_a_reservation_that_meets_an_erasure_in_flight_waits_and_then_collides_with_its_tombstone(
    engine: Engine,
) -> None:
    """PostgreSQL, the other order: the erasure holds the case row first. The reservation waits for it before
    its INSERT (had its key gone into the unique index first, the erasure's tombstone INSERT would wait on it
    while it waits on the case row: a deadlock, and a 503 for one of them), then meets the tombstone."""
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite has one writer at a time: nothing to wait for")
    ledger = Ledger(engine)
    case_id = await active_case(ledger)
    reserving = ledger.publications.reserve_publication(case_id, "card1", "informant", "attempt-b", 10.0)
    reserved, existing = await while_another_transaction_holds(
        engine,
        lambda session: session.get(CaseRow, case_id, with_for_update=True),
        reserving,
        then=lambda session: entomb_publication(session, case_id, "card1", "informant"),
    )
    assert not reserved and existing.state == "erased"


async def while_another_transaction_holds(
    engine: Engine,
    hold: Callable[[Session], object],
    command: Coroutine[Any, Any, T],
    then: Callable[[Session], object] = lambda session: None,
) -> T:
    """Run `command` while another transaction has done `hold` and not committed; once `command` waits on a
    lock, that transaction does `then` and commits. Returns what `command` returns (it must have waited)."""
    holding, release, failures = threading.Event(), threading.Event(), []

    def other_transaction() -> None:
        try:
            with Session(engine) as session, session.begin():
                hold(session)
                session.flush()
                holding.set()
                assert release.wait(60)
                then(session)
        except BaseException as exc:
            failures.append(exc)
            holding.set()

    holder = threading.Thread(target=other_transaction)
    holder.start()
    try:
        assert await asyncio.to_thread(holding.wait, 60) and not failures
        running = asyncio.ensure_future(command)
        deadline = time.monotonic() + 30
        while not await asyncio.to_thread(_someone_waits_on_a_lock, engine):
            assert time.monotonic() < deadline and not running.done(), "the command never waited"
            await asyncio.sleep(0.02)
    finally:
        release.set()
        await asyncio.to_thread(holder.join, 60)
    assert not failures, failures
    return await running


def _someone_waits_on_a_lock(engine: Engine) -> bool:
    query = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
    with engine.connect() as connection:
        return bool(connection.execute(text(query)).scalar())
