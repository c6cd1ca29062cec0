"""Compaction after deletes (memory/compaction.py): the counting rule, and a real major compaction of the
session's embedded seekdb started by the gateway, with the cards intact through it."""

from __future__ import annotations

import asyncio
import secrets
import time

import pytest

from bureau.api.deps import Services
from bureau.memory.compaction import Compaction
from bureau.memory.types import CardDraft
from helpers import grant_of


class Statements:
    """The two statements compaction uses, as a store would answer them."""

    def __init__(self, *, running: bool = False, refuses: bool = False) -> None:
        self.running, self.refuses, self.started = running, refuses, 0

    def compacting(self) -> bool:
        return self.running

    def start_major_compaction(self) -> None:
        if self.refuses:
            raise PermissionError("no privilege")
        self.started += 1


def test_a_compaction_is_due_after_as_many_deletes_as_configured() -> None:
    compaction, store = Compaction(after_deletes=10), Statements()
    compaction.deleted(9)
    assert not compaction.due and not compaction.request(store) and store.started == 0
    compaction.deleted(1)
    assert compaction.due and compaction.request(store) and store.started == 1
    assert not compaction.due and not compaction.request(store)  # counted from zero again


def test_none_is_started_while_one_runs_and_it_stays_due() -> None:
    compaction, store = Compaction(after_deletes=1), Statements(running=True)
    compaction.deleted(5)
    assert not compaction.request(store) and store.started == 0
    assert compaction.due  # asked again at the next maintenance round
    store.running = False
    assert compaction.request(store) and store.started == 1


def test_a_refusal_is_asked_again_only_after_as_many_deletes_again(caplog: pytest.LogCaptureFixture) -> None:
    compaction, store = Compaction(after_deletes=3), Statements(refuses=True)
    compaction.deleted(3)
    assert not compaction.request(store) and not compaction.due
    assert "refused a compaction: PermissionError" in caplog.text and "no privilege" not in caplog.text
    compaction.deleted(3)
    assert compaction.due


def test_zero_means_never() -> None:
    compaction = Compaction(after_deletes=0)
    compaction.deleted(1_000_000)
    assert not compaction.due and not compaction.request(Statements())


async def test_the_gateway_starts_a_real_compaction_after_its_deletes_and_no_card_changes(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    gateway = services.gateway
    nearest = gateway.runner.nearest
    if nearest is None:
        pytest.skip("only seekdb compacts")
    monkeypatch.setattr(gateway.runner, "compaction", Compaction(after_deletes=40))
    scope = await grant_of(services, "t" + secrets.token_hex(8), reads=["suspect"], writes=["suspect"])
    kept = await gateway.write_many(
        scope, [CardDraft(content=f"Kept note {i}.", topic="t", kind="note") for i in range(5)]
    )
    gone = await gateway.write_many(
        scope, [CardDraft(content=f"Gone note {i}.", topic="t", kind="note") for i in range(40)]
    )
    assert not await gateway.compact_if_due()  # nothing deleted yet
    await gateway.delete_many(scope, "suspect", gone)
    assert gateway.runner.compaction.due

    before = await gateway.runner.run(nearest.execute, "SELECT frozen_scn FROM oceanbase.DBA_OB_MAJOR_COMPACTION")
    assert await gateway.compact_if_due()
    assert not gateway.runner.compaction.due and not await gateway.compact_if_due()

    # seekdb starts it in the background: first a new frozen version, then compacting until idle again.
    deadline = time.monotonic() + 120
    frozen = before
    while frozen == before or await gateway.runner.run(nearest.compacting):
        assert [c.id for c in await gateway.list(scope)] == [c.id for c in kept]  # reads go on meanwhile
        assert time.monotonic() < deadline, "no compaction began and ended within 2 minutes"
        await asyncio.sleep(0.5)
        frozen = await gateway.runner.run(nearest.execute, "SELECT frozen_scn FROM oceanbase.DBA_OB_MAJOR_COMPACTION")
    assert [(c.id, c.content) for c in await gateway.list(scope)] == [(c.id, c.content) for c in kept]
