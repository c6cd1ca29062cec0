"""Undo a card write: delete it now, or leave a cleanup task the background loop retries."""

from __future__ import annotations

import logging

from bureau.ledger.repository import Ledger, LedgerError
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import MemoryUnavailableError
from bureau.scope.keys import MemoryScope, case_scopes

log = logging.getLogger("bureau.game")


async def discard_card(gateway: MemoryGateway, ledger: Ledger, scope: MemoryScope, card_id: str, reason: str) -> None:
    """Never raises, so it is safe inside an `except` block that must re-raise the original error."""
    try:
        await gateway.delete(scope, card_id)
    except MemoryUnavailableError:
        try:
            await ledger.add_cleanup(scope.case_id, scope.space, card_id, reason)
        except LedgerError:
            log.error("could not record a cleanup task for card %s in %s", card_id, scope.key)


async def discard_many(
    gateway: MemoryGateway, ledger: Ledger, scope: MemoryScope, card_ids: list[str], reason: str
) -> None:
    """One batched delete; if the store fails, card by card, each failure left as a cleanup task."""
    if not card_ids:
        return
    try:
        await gateway.delete_many(scope, card_ids)
    except MemoryUnavailableError:
        for card_id in card_ids:
            await discard_card(gateway, ledger, scope, card_id, reason)


async def discard_superseded(gateway: MemoryGateway, ledger: Ledger, case_id: str, generation: str) -> int:
    """Delete every card of the case that is not of `generation`, in every space, however many: what a reset
    replaced, and what commands that began before it wrote (reads never see them; this frees the store).
    Returns how many were found."""
    scopes = case_scopes(case_id)  # every generation
    listed = await gateway.list_spaces(scopes)
    found = 0
    for scope in scopes:
        stale = [card.id for card in listed[scope.space] if card.generation != generation]
        found += len(stale)
        await discard_many(gateway, ledger, scope, stale, "reset")
    return found
