"""Orphan keys: keys the vault holds for items that never reached the store or the ledger (a command that
failed after storing its keys, a process killed between the two), and keys of cases the ledger no longer
knows. Harmless (they open nothing that exists) but kept for nothing: the retention sweep destroys them once
they are older than a grace period, so a command still between its two steps is never undercut."""

from __future__ import annotations

import logging
from datetime import timedelta

from bureau.ledger.repository import CaseRepository, RecordRepository
from bureau.memory.gateway import MemoryGateway
from bureau.scope.keys import SPACES, case_scopes
from bureau.scope.vocabulary import Purpose
from bureau.vault import CaseKeysGoneError, Vault

log = logging.getLogger("bureau.retention")
ORPHAN_GRACE = timedelta(minutes=10)  # far longer than any command between storing its keys and its rows
_PAGE = 500


class OrphanKeys:
    def __init__(self, gateway: MemoryGateway, cases: CaseRepository, record: RecordRepository, vault: Vault) -> None:
        self.gateway = gateway
        self.cases, self.record = cases, record
        self.vault = vault
        self.destroyed = 0  # this process, so far (tests read it)

    async def sweep_case(self, case_id: str) -> int:
        """Destroy the keys of the case's items older than the grace that name nothing in the store or the
        ledger. Returns how many."""
        try:
            grant = await self.vault.grant(case_id, None, Purpose.LIFECYCLE, lists=case_scopes(case_id))
        except CaseKeysGoneError:
            return 0
        try:
            rows = await self.gateway.rows(grant)
        finally:
            grant.close()
        live = {row.item for space in SPACES for row in rows[space] if row.item}
        live |= await self.record.record_items(case_id)
        gone = 0
        async for page in self.vault.items_older_than(case_id, ORPHAN_GRACE, _PAGE):
            orphans = [item for item in page if item.split(".", 1)[0] not in live]
            gone += await self.vault.destroy_items(case_id, orphans)
        self.destroyed += gone
        if gone:
            log.info("destroyed %d orphan item key(s) of a case", gone)
        return gone

    async def sweep_cases(self) -> int:
        """Destroy every key of cases the ledger does not know and the store holds nothing of (an erase whose
        last step failed, a data directory replaced under a kept vault). Returns how many cases."""
        known = {case.id for case in await self.cases.list_cases()}
        stored = set(await self.gateway.list_case_ids())
        stale = [case_id for case_id in await self.vault.case_ids(older_than=ORPHAN_GRACE) if case_id not in known]
        for case_id in stale:
            if case_id not in stored:
                await self.vault.destroy_case(case_id)
        return len([c for c in stale if c not in stored])
