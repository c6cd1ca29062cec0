"""What a reset leaves behind is cleaned up without touching a reset still in flight (docs/faults.md,
"Concurrent commands"): the cleanup after a committed reset, and the retention sweep, delete the cards and
retire the record key of the generation the reset replaced and of generations older than the grace, never a
younger one that is not the case's (a reset writing its opening cards before its commit). Deleting those
emptied a case in the two-server checker run: the reset that committed next had nothing left."""

from __future__ import annotations

import secrets
from datetime import timedelta

import pytest

from bureau.api.deps import Services
from bureau.game import compensation
from bureau.game.compensation import discard_superseded
from bureau.memory.types import CardDraft
from bureau.vault.keyring import record_compartment
from helpers import NewCase


async def in_flight_reset(services: Services, case_id: str) -> str:
    """A reset between its writes and its commit: a generation of its own, its record key, opening cards."""
    generation = secrets.token_hex(8)
    await services.vault.open_generation(case_id, generation)
    async with services.bureau.keys.case_setup(case_id, generation) as grant:
        await services.gateway.write_many(
            grant.narrowed(writes=["informant"]), [CardDraft("The van was blue.", "van", "fact")]
        )
    return generation


async def generations(services: Services, case_id: str) -> tuple[set[str], set[str]]:
    """(the generations the store holds cards of, the record compartments the vault holds keys of)."""
    async with services.bureau.keys.lifecycle(case_id) as grant:
        rows = await services.gateway.rows(grant)
    cards = {row.generation for space in rows.values() for row in space}
    records = {k.compartment for k in services.vault.store.compartments(case_id) if k.compartment.startswith("record")}
    return cards, records


async def test_the_cleanup_leaves_a_younger_generation_alone_and_sweeps_an_old_one(
    new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    case_id = (await new_case())["case"]["id"]
    current = (await services.ledger.cases.get_case(case_id)).generation
    pending = await in_flight_reset(services, case_id)
    replaced = secrets.token_hex(8)  # a generation some reset replaced (nothing of it is left here)
    bureau = services.bureau

    await discard_superseded(
        services.gateway, services.ledger.cleanups, bureau.keys, case_id, current, replaced=replaced
    )
    await discard_superseded(services.gateway, services.ledger.cleanups, bureau.keys, case_id, current)  # the sweep
    cards, records = await generations(services, case_id)
    assert cards == {current, pending} and records == {record_compartment(current), record_compartment(pending)}

    monkeypatch.setattr(compensation, "SUPERSEDED_GRACE", timedelta(0))  # that reset died long ago
    await discard_superseded(services.gateway, services.ledger.cleanups, bureau.keys, case_id, current)
    cards, records = await generations(services, case_id)
    assert cards == {current} and records == {record_compartment(current)}


async def test_a_promotion_judged_on_cards_a_reset_replaced_runs_again_in_the_new_generation(
    new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reset lands between the promotion's grant and its assessment: the claim is judged first on the old
    generation's cards (gone by then), found unsupported, and that is not the answer: the case was reset, not
    refuted. It runs again, and the new generation's opening cards support it."""
    case_id = (await new_case("night-ferry", "en"))["case"]["id"]
    findings = services.bureau.findings
    real = findings.assess
    reset: list[bool] = []

    async def reset_first(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not reset:
            reset.append(True)
            await services.bureau.case_service.reset(case_id)
        return await real(*args, **kwargs)

    monkeypatch.setattr(findings, "assess", reset_first)
    promoted = await services.bureau.finding_service.promote(case_id, "The grey van left the harbour at midnight.")
    assert reset and promoted.card.content == "The grey van left the harbour at midnight."
    assert promoted.finding.state == "ready"
