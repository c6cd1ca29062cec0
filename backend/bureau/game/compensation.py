"""Undo card writes and carry out card deletes: now, or as cleanup tasks the background loop retries. Each
delete destroys the card's keys first (every copy of its text stops opening), then its row."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from bureau.game.errors import CaseNotFoundError
from bureau.game.keys import Keys
from bureau.ledger.repository import CleanupRepository, CleanupTask, LedgerError, PublicationRepository
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import MemoryUnavailableError, RowFacts, StoredCard
from bureau.scope.keys import BOARD, RECORD, SPACES
from bureau.vault import Grant, VaultUnavailableError

log = logging.getLogger("bureau.game")
# Longer than any reset takes between opening its generation and committing it: its grant lives 5 minutes at
# most (vault/grants.py: GRANT_LIFETIME_S), so a generation this old that is not the case's is over.
SUPERSEDED_GRACE = timedelta(minutes=10)


def _deleting(grant: Grant, space: str) -> Grant:
    return grant.narrowed(reads=(), writes=[space], record=False)


async def discard_card(
    gateway: MemoryGateway, cleanups: CleanupRepository, grant: Grant, space: str, card_id: str, reason: str
) -> None:
    """Never raises, so it is safe inside an `except` block that must re-raise the original error."""
    try:
        await gateway.delete(_deleting(grant, space), card_id)
    except (MemoryUnavailableError, VaultUnavailableError):
        try:
            await cleanups.add_cleanup(grant.case_id, space, card_id, reason)
        except LedgerError:
            log.error("could not record a cleanup task for a card of %s", space)


async def discard_many(
    gateway: MemoryGateway,
    cleanups: CleanupRepository,
    grant: Grant,
    space: str,
    cards: Sequence[RowFacts | StoredCard],
    reason: str,
) -> None:
    """One batched delete; if the store or the vault fails, card by card, each failure left as a cleanup task."""
    if not cards:
        return
    try:
        await gateway.delete_many(_deleting(grant, space), space, cards)
    except (MemoryUnavailableError, VaultUnavailableError):
        for card in cards:
            await discard_card(gateway, cleanups, grant, space, card.id, reason)


async def discard_superseded(
    gateway: MemoryGateway,
    cleanups: CleanupRepository,
    keys: Keys,
    case_id: str,
    current: str,
    replaced: str | None = None,
) -> int:
    """Delete what generations other than `current` left, in every space, however many, and their record keys:
    the `replaced` one's (a reset just replaced it: its cards, and what commands that began before the reset
    wrote into it), and any other's older than the grace (a reset that died between its steps). A younger
    generation that is not the case's may be a reset's still writing its opening cards before its commit:
    it is never touched (deleting it would empty the case that reset is about to commit). Reads never see any
    of them; this frees the store and destroys their keys. Returns how many cards were found."""
    cutoff = datetime.now(UTC) - SUPERSEDED_GRACE
    found = 0
    async with keys.lifecycle(case_id) as grant:
        listed = await gateway.rows(grant)
        for space in SPACES:
            stale = [
                row
                for row in listed[space]
                if row.generation != current and (row.generation == replaced or row.created_at < cutoff)
            ]
            found += len(stale)
            await discard_many(gateway, cleanups, grant, space, stale, "reset")
    if replaced is not None and replaced != current:
        await keys.vault.retire_generation(case_id, replaced)
    await keys.vault.retire_stale_generations(case_id, current, older_than=SUPERSEDED_GRACE)
    return found


async def run_cleanup(
    gateway: MemoryGateway, publications: PublicationRepository, keys: Keys, task: CleanupTask
) -> bool:
    """One cleanup task: an item's key destroyed, and/or a card deleted (its keys first). True when done
    (a case erased meanwhile has nothing left to clean); False when it is to be retried later."""
    if task.space == BOARD and task.card_id and await publications.is_published_copy(task.case_id, task.card_id):
        return True  # a retry adopted this copy (found by source id) after its compensation failed: it is live
    try:
        if task.item and task.space == RECORD:
            await keys.vault.destroy_items(task.case_id, [task.item])
        if task.card_id:
            async with keys.lifecycle(task.case_id) as grant:
                await gateway.delete(_deleting(grant, task.space), task.card_id)
    except (MemoryUnavailableError, VaultUnavailableError):
        return False
    except CaseNotFoundError:  # the case's keys are gone: it was erased, its rows with it
        return True
    return True
