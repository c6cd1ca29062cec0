"""Undo a card write: delete it now, or leave a cleanup task the background loop retries."""

from __future__ import annotations

import logging

from bureau.ledger.repository import Ledger, LedgerError
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import MemoryUnavailableError
from bureau.scope.keys import MemoryScope

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
