"""Orphan keys (issue 34.2; game/orphans.py): keys the vault holds for items that never reached the store or the
ledger (a command that died between storing its keys and writing its rows), and the keys of a case neither the
ledger nor the store knows. The retention sweep destroys them once they are older than the grace (lowered here
in process), never before it, and never a key that something stored still needs."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest

from bureau.api.deps import Services
from bureau.game import orphans
from bureau.game.services.cases import new_case_id
from bureau.scope.keys import RECORD, SPACES
from bureau.vault.items import new_item_id
from helpers import NewCase, ask, grant_of, stored_cards


def item_keys(services: Services, case_id: str) -> set[str]:
    store = services.vault.store
    return {item for key in store.compartments(case_id) for item in store.compartment_items(case_id, key.compartment)}


async def test_orphan_keys_go_after_their_grace_and_every_key_in_use_stays(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    case_id = (await new_case())["case"]["id"]
    whisper = {"role": "suspect", "text": "The butler heard the safe click.", "source": "the cook"}
    assert (await client.post(f"/api/cases/{case_id}/whispers", json=whisper)).status_code == 201
    assert (await ask(client, case_id, "informant"))["certainty"] == "known"  # a record text of its own
    in_use = item_keys(services, case_id)
    cards = {card.id for card in await stored_cards(services, case_id)}

    # A command that died after storing its keys: a card's and a record text's, sealed, never written.
    grant = await grant_of(services, case_id, writes=["suspect"], record=True)
    orphaned = [new_item_id(), new_item_id()]
    grant.seal("suspect", orphaned[0], "A card that never reached the store.")
    grant.seal(RECORD, orphaned[1], "A record text that never reached the ledger.")
    await asyncio.to_thread(grant.store_new_keys)
    grant.close()
    stray = new_case_id()  # keys of a case the ledger and the store never knew (an erase that died, say)
    await services.vault.create_case(stray, "")
    assert set(services.vault.store.items(case_id, orphaned)) == set(orphaned)

    # Within the grace: nothing goes (a command may still be between its keys and its rows).
    assert await services.bureau.sweeper.sweep() is not None
    assert item_keys(services, case_id) == in_use | set(orphaned)
    assert services.vault.store.compartments(stray)

    monkeypatch.setattr(orphans, "ORPHAN_GRACE", timedelta(0))
    assert await services.bureau.sweeper.sweep() is not None
    assert item_keys(services, case_id) == in_use  # the orphans' keys gone, every key in use kept
    assert services.vault.store.compartments(stray) == [] and stray not in services.vault.store.cases()
    assert {card.id for card in await stored_cards(services, case_id, *SPACES)} == cards  # every card opens
    asked = await ask(client, case_id, "suspect", "What did the butler hear?")
    assert asked["certainty"] == "known"
