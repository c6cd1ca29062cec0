"""Re-sealing a case an earlier version sealed under one case key into its compartments, once: on its first
touch (a grant asked for it), or for every such case by `bureau setup`.

The vault gives the case its compartment keys (its pseudonym key derived from the old key, so the findings
mapping stays valid), then every store row and every ledger text is re-sealed under a key of its own through
the migration's grant (its vector moved from the old rotation into its space's basis), then the old key goes.
Each row is re-sealed on its own and a row sealed already is skipped, so a re-seal that crashed is run again
from the start; the old key stays until the last row is done.
"""

from __future__ import annotations

import asyncio
import logging

from bureau.game.publication import FaultHook
from bureau.ledger.repository import CaseRepository, ResealRepository
from bureau.memory.gateway import MemoryGateway
from bureau.vault import CaseKeysGoneError, Vault

log = logging.getLogger("bureau")
# Test seam (like the publish Saga's): the store's rows re-sealed, the ledger's texts and the old key not yet.
RESEAL_STEPS = ("after_store_reseal",)


class Resealer:
    def __init__(
        self, gateway: MemoryGateway, cases: CaseRepository, resealing: ResealRepository, vault: Vault
    ) -> None:
        self.gateway = gateway
        self.cases, self.resealing = cases, resealing
        self.vault = vault
        self._locks: dict[str, asyncio.Lock] = {}
        self.fault: FaultHook = lambda step: None

    async def reseal(self, case_id: str) -> None:
        """Re-seal one case (concurrent first touches share one run); nothing to do for a case re-sealed."""
        lock = self._locks.setdefault(case_id, asyncio.Lock())
        try:
            async with lock:
                if case_id not in await asyncio.to_thread(self.vault.legacy_cases_among, [case_id]):
                    return
                case = await self.cases.get_case(case_id)
                if case is None:
                    return  # keys of a case the ledger no longer has: the orphan sweep's
                await asyncio.to_thread(self.vault.compartmentalise, case_id, case.generation)
                grant = await self.vault.reseal_grant(case_id, case.generation)
                try:
                    rows = await self.gateway.reseal(grant)
                    self.fault("after_store_reseal")
                    texts = await self.resealing.reseal_texts(case_id, grant)
                finally:
                    grant.close()
                await asyncio.to_thread(self.vault.retire_legacy, case_id)
                log.info("re-sealed a case into its compartments (%d rows, %d texts)", rows, texts)
        finally:
            if not lock.locked():  # the last one out: no lock is kept per case
                self._locks.pop(case_id, None)

    async def reseal_all(self) -> int:
        """Every case still sealed under one key (`bureau setup`). Returns how many."""
        cases = await asyncio.to_thread(self.vault.legacy_cases)
        for case_id in cases:
            try:
                await self.reseal(case_id)
            except CaseKeysGoneError:
                continue
        return len(cases)
