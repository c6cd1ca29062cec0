"""The retention sweeper: expired records leave the store and the ledger at start-up and on a schedule.

One sweeper at a time across every process sharing the ledger (a named lease row), paging through every
card of every case. Reads already hide and purge expired records they meet; the sweeper also removes the
ones nobody reads, and the publication rows that point at them, and the cards of generations a reset
replaced that a crash left behind (reads never see them), and the vault's orphan keys (game/orphans.py).
"""

from __future__ import annotations

import logging
import secrets
from collections import Counter

from bureau.game.compensation import discard_superseded
from bureau.game.errors import CaseNotFoundError
from bureau.game.keys import Keys
from bureau.game.orphans import OrphanKeys
from bureau.ledger.policy_audit import PolicyDecision
from bureau.ledger.repository import (
    ACTIVE,
    CaseRepository,
    CleanupRepository,
    PolicyAuditRepository,
    PublicationRepository,
    RecordRepository,
)
from bureau.memory.gateway import MemoryGateway
from bureau.scope.vocabulary import PolicyAction, PolicyCode

log = logging.getLogger("bureau.retention")
LEASE_NAME = "retention_sweeper"


class RetentionSweeper:
    def __init__(
        self,
        gateway: MemoryGateway,
        keys: Keys,
        *,
        cases: CaseRepository,
        record: RecordRepository,
        publications: PublicationRepository,
        cleanups: CleanupRepository,
        policy_audit: PolicyAuditRepository,
        lease_s: float = 120.0,
    ) -> None:
        """`policy_audit` holds the sweeper's lease and records what it purged."""
        self.gateway = gateway
        self.cases, self.publications, self.cleanups, self.policy_audit = cases, publications, cleanups, policy_audit
        self.keys = keys
        self.lease_s = lease_s
        self.owner = secrets.token_hex(8)
        self.orphans = OrphanKeys(gateway, cases, record, keys.vault)

    async def sweep(self) -> int | None:
        """Purge every expired record now. Returns how many, or None when another process holds the lease."""
        if not await self.policy_audit.acquire_lease(LEASE_NAME, self.owner, self.lease_s):
            return None
        purged = 0
        try:
            for case in await self.cases.list_cases():
                if case.status != ACTIVE:
                    continue  # loading or erasing: the command in flight owns its cards
                try:
                    purged += await self._sweep_case(case.id)
                    # A reset whose process died between its commit and its deletes left the old generation.
                    await discard_superseded(self.gateway, self.cleanups, self.keys, case.id, case.generation)
                    await self.orphans.sweep_case(case.id)
                except CaseNotFoundError:
                    continue  # its keys are gone (a restored ledger's erased case): reads answer 404
                if not await self.policy_audit.acquire_lease(LEASE_NAME, self.owner, self.lease_s):  # renew
                    log.warning("retention sweeper lost its lease mid-sweep; another process goes on")
                    break
            await self.orphans.sweep_cases()
        finally:
            await self.policy_audit.release_lease(LEASE_NAME, self.owner)
        if purged:
            log.info("retention sweeper purged %d expired records", purged)
        return purged

    async def _sweep_case(self, case_id: str) -> int:
        """Expired records out, as metadata (no text is read), their keys destroyed first."""
        async with self.keys.lifecycle(case_id) as grant:
            cards = await self.gateway.purge_expired(grant)
        if not cards:
            return 0
        await self.publications.forget_publications_of(case_id, [card.id for card in cards])
        by_kind = Counter((card.space, card.memory_type, card.created_by) for card in cards)
        await self.policy_audit.record_policy(
            case_id,
            [
                PolicyDecision(PolicyAction.RETENTION_PURGED, PolicyCode.EXPIRED, memory_type, creator, space, count)
                for (space, memory_type, creator), count in sorted(by_kind.items())
            ],
        )
        return len(cards)
