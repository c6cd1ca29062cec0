"""Publish a private card to the board as a sourced copy: a Saga over the ledger, idempotent across
retries, processes and crashes.

reserve (unique INSERT) → write the board copy (carrying the source card id) → mark ready.
A crashed attempt leaves a pending row whose lease expires; the next attempt takes it over and finds
the copy again by its source card id instead of writing a second one.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import cast

from bureau.game.compensation import discard_card
from bureau.game.contract import Card
from bureau.game.errors import CardNotFoundError, CaseNotFoundError, PublicationPendingError
from bureau.game.keys import Keys
from bureau.game.views import card_event_view, card_view
from bureau.ledger.repository import (
    CaseMissingError,
    CaseRecord,
    CleanupRepository,
    GenerationMovedError,
    PendingEvent,
    PublicationRecord,
    PublicationRepository,
)
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft, MemoryUnavailableError, StoredCard
from bureau.scope.audience import Readers, readers_of_space
from bureau.scope.keys import BOARD, Role
from bureau.scope.memory_policy import parse_trust
from bureau.scope.vocabulary import EventType, MemoryType, PublicationState
from bureau.vault import Grant

log = logging.getLogger("bureau.publication")
PENDING_WAIT_S = 2.0
PENDING_POLL_S = 0.05
FIRST_POLL_S = 0.005  # a waiter reads the row after 5 ms, then 10, 20, 40, 50, 50 … (a read takes no lock)

# Test seam: the named steps of the Saga where a fault can be injected. A hook may raise to simulate a
# failure or a crash at that point; `BUREAU_TEST_KILL_AT` (test settings only) kills the process there.
SAGA_STEPS = ("after_reserve", "after_board_write", "before_mark_ready", "after_mark_ready")
FaultHook = Callable[[str], None]
CaseCheck = Callable[[str], Awaitable[CaseRecord]]


class Publisher:
    def __init__(
        self,
        gateway: MemoryGateway,
        publications: PublicationRepository,
        cleanups: CleanupRepository,
        keys: Keys,
        lease_s: float,
    ) -> None:
        self.gateway = gateway
        self.publications, self.cleanups = publications, cleanups  # the Saga's rows; a copy left to delete
        self.keys = keys
        self.lease_s = lease_s
        self.fault: FaultHook = lambda step: None
        self._running: dict[tuple[str, Role, str], asyncio.Future[tuple[Card, bool]]] = {}

    @property
    def runs_in_flight(self) -> int:
        """The publish runs this process shares right now. A test seam: each is dropped once it has finished."""
        return len(self._running)

    async def publish(self, case_id: str, role: Role, card_id: str, check_case: CaseCheck) -> tuple[Card, bool]:
        """Returns (public card view, idempotent). Concurrent publishes of one card in this process share one
        run of the Saga, `check_case` (a missing or erased case raises) included, and the others answer as a
        repeat would: 25 at once must not each read the case and the card, contend for the reservation and
        poll the pending row. Other processes meet in the ledger: the first to reserve publishes, the others
        wait by reading its row."""
        key = (case_id, role, card_id)
        running = self._running.get(key)
        if running is not None:
            view, _ = await asyncio.shield(running)
            return view, True
        run = asyncio.ensure_future(self._publish_card(case_id, role, card_id, check_case))
        self._running[key] = run
        run.add_done_callback(lambda done: self._forget(key, done))
        return await asyncio.shield(run)

    def _forget(self, key: tuple[str, Role, str], done: asyncio.Future[tuple[Card, bool]]) -> None:
        self._running.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved here: every caller still awaiting it re-raises it

    async def _publish_card(self, case_id: str, role: Role, card_id: str, check_case: CaseCheck) -> tuple[Card, bool]:
        case = await check_case(case_id)
        try:
            async with self.keys.publish(case, role) as grant:
                return await self._settle(case_id, role, card_id, grant)
        except CaseMissingError as exc:  # erased while we were publishing
            raise CaseNotFoundError(case_id) from exc
        except GenerationMovedError as exc:  # reset while we were publishing: the card is gone with its generation
            raise CardNotFoundError(card_id) from exc

    async def _settle(self, case_id: str, role: Role, card_id: str, grant: Grant) -> tuple[Card, bool]:
        """Read the card's publication row and act on it until the card is published, by us or by another
        attempt (perhaps in another process). A repeat is answered from the row and the copy it names,
        without reading the source card or writing to the ledger: the row is this role's only while the
        card is (an erasure turns it into a tombstone, a reset or an erase of the case deletes it). The
        source is read only when the Saga must act: no row (reserve), a lease that ran out (take over), a
        lost copy (reopen), or a row of another role (the source read answers 404). While another attempt
        holds a live lease we wait by reading the row (5, 10, 20, 40, then every 50 ms), never by writing,
        and answer 409 after 2 s."""
        loop = asyncio.get_running_loop()
        deadline, delay = loop.time() + PENDING_WAIT_S, FIRST_POLL_S
        owner = secrets.token_hex(8)
        source: StoredCard | None = None
        record = await self.publications.get_publication(case_id, card_id)
        while True:
            if record is not None and record.state == PublicationState.ERASED:
                raise CardNotFoundError(card_id)  # a tombstone: answered as for any erased card
            if record is not None and record.role == role:
                if record.state == PublicationState.READY and record.public_card_id:
                    copy = await self.gateway.get(_reading(grant, BOARD), record.public_card_id)
                    if copy is not None:
                        return card_view(copy), True
                elif record.state == PublicationState.PENDING and record.lease_live():
                    if loop.time() >= deadline:
                        raise self._pending()
                    await asyncio.sleep(delay)
                    delay = min(2 * delay, PENDING_POLL_S)
                    record = await self.publications.get_publication(case_id, card_id)
                    continue
            if source is None:
                source = await self.gateway.get(_reading(grant, role), card_id)
                if source is None or not source.may_be_evidence:
                    raise CardNotFoundError(card_id)  # same answer whether the id exists elsewhere or nowhere
                card_id = source.id  # ledger keys use the stored card's own id, never the request's spelling
            if await self._claim(source, record, owner):
                return await self._run_owned(grant, source, owner)
            if loop.time() >= deadline:
                raise self._pending()
            record = await self.publications.get_publication(case_id, card_id)  # someone else acted first: look again

    async def _claim(self, source: StoredCard, record: PublicationRecord | None, owner: str) -> bool:
        """Make `owner` the attempt that publishes the source, as the row allows: reserve it (no row), reopen
        it (ready, its copy lost), or take it over (pending, its lease ran out). False if another attempt
        acted first."""
        case_id, card_id = source.case_id, source.id
        if record is None:
            reserved, _ = await self.publications.reserve_publication(
                case_id, card_id, source.space, owner, self.lease_s
            )
            return reserved
        if record.state == PublicationState.READY and record.public_card_id:
            if await self.publications.reopen_lost_copy(case_id, card_id, record.public_card_id, owner, self.lease_s):
                log.warning("a ready publication had lost its board copy; publishing it again")
                return True
            return False
        return await self.publications.take_over_expired(case_id, card_id, owner, self.lease_s)

    def _pending(self) -> PublicationPendingError:
        return PublicationPendingError(retry_after_s=max(1, round(self.lease_s / 2)))

    async def _run_owned(self, grant: Grant, source: StoredCard, owner: str) -> tuple[Card, bool]:
        """(public card view, idempotent): idempotent when we stalled and another attempt's result won."""
        case_id = source.case_id
        copy: StoredCard | None = None
        try:
            self.fault("after_reserve")
            copy = await self._find_or_write_copy(grant, source)
            self.fault("after_board_write")
            self.fault("before_mark_ready")
            if not await self._still_private(grant, source):
                raise CardNotFoundError(source.id)  # erased or reset while we wrote the copy: undo it
            done = await self.publications.complete_publication(
                case_id,
                source.id,
                owner,
                copy.id,
                [
                    PendingEvent(EventType.MEMORY_WRITTEN, {"card": card_event_view(copy)}),
                    PendingEvent(
                        EventType.PUBLICATION_COMPLETED,
                        {
                            "role": source.space,
                            "source_card_id": source.id,
                            "public_card_id": copy.id,
                            "idempotent": False,
                        },
                    ),
                ],
                generation=source.generation,
            )
        except Exception:
            # A failure (not a crash): undo our copy and free the reservation so a retry starts clean.
            if copy is not None:
                await self._compensate(grant, copy.id)
            await self._release_quietly(case_id, source.id, owner)
            raise
        self.fault("after_mark_ready")
        if done is None:
            return await self._lost_lease(grant, source, copy), True
        await self._remove_strays(grant, source, keep=copy)
        return card_view(copy), False

    async def roll_back_abandoned(self) -> int:
        """Undo publishes whose process died between the copy and `ready` and that nobody retried: without
        this their copy would stay on the board for good, accounted for by no publication. Only leases that
        ran out a whole lease ago, taken over first, so a live owner or a retry is never undercut (a stalled
        owner that wakes up finds its lease lost and removes its own copy). Returns how many were undone."""
        undone = 0
        for record in await self.publications.abandoned_publications(older_than_s=self.lease_s):
            case_id, source_card_id = record.case_id, record.source_card_id
            if record.state == PublicationState.ERASED:
                undone += await self._sweep_erased(record)
                continue
            owner = secrets.token_hex(8)
            if not await self.publications.take_over_expired(case_id, source_card_id, owner, self.lease_s):
                continue  # a retry got there first: it reconciles
            await self._discard_copies(case_id, source_card_id)
            await self.publications.release_publication(case_id, source_card_id, owner)
            undone += 1
        if undone:
            log.warning("rolled back %d publication(s) abandoned by a crashed process", undone)
        return undone

    async def _sweep_erased(self, tombstone: PublicationRecord) -> int:
        """The card was erased while an attempt to publish it was in flight, and that attempt's lease is a
        lease past: if it wrote a copy after the erasure listed the board and then died, the copy is still
        there. Delete every copy of the source, then mark the tombstone swept. (An attempt that is merely
        slow finds the tombstone when it marks ready and removes its own copy.)"""
        await self._discard_copies(tombstone.case_id, tombstone.source_card_id)
        settled = await self.publications.settle_tombstone(tombstone.case_id, tombstone.source_card_id, tombstone.owner)
        return int(settled)

    async def _discard_copies(self, case_id: str, source_card_id: str) -> None:
        """Every board copy of a source card, in any generation (maintenance: ids only, their keys first)."""
        try:
            async with self.keys.lifecycle(case_id) as grant:
                for copy in await self.gateway.find_by_source(grant, source_card_id):
                    await self._compensate(grant, copy.id)
        except CaseNotFoundError:
            return  # the case's keys are gone: it was erased, its copies with it

    async def _remove_strays(self, grant: Grant, source: StoredCard, keep: StoredCard) -> None:
        """A stalled attempt's copy can become visible only after we looked for it, and that attempt keeps
        it while we are still pending. Once ours is ready, every other copy of the source goes."""
        try:
            strays = [c for c in await self.gateway.find_by_source(grant, source.id) if c.id != keep.id]
        except MemoryUnavailableError:
            log.warning("could not look for stray board copies; a stalled attempt removes its own on return")
            return
        for stray in strays:
            await self._compensate(grant, stray.id)

    async def _still_private(self, grant: Grant, source: StoredCard) -> bool:
        """Publishing is the one way anything widens, so it is checked again at the moment it happens: the
        source must still be this role's own private card in this case."""
        current = await self.gateway.get(_reading(grant, cast(Role, source.space)), source.id)
        if current is None or current.is_derived:
            return False
        return readers_of_space(current.space) == Readers.of(source.space)

    async def _find_or_write_copy(self, grant: Grant, source: StoredCard) -> StoredCard:
        """Reconcile first: a crashed attempt may already have written the copy (found by its source id, then
        read under the grant, which reads the board it writes)."""
        existing = await self.gateway.find_by_source(grant, source.id)
        if existing:
            for extra in existing[1:]:  # a duplicate from an old race: keep exactly one copy
                await self._compensate(grant, extra.id)
            found = await self.gateway.get(_reading(grant, BOARD), existing[0].id)
            if found is not None:
                return found
        draft = CardDraft(
            content=source.content,
            topic=source.topic,
            kind=source.kind,
            memory_type=MemoryType(source.memory_type),
            trust=source.trust,
            created_by=parse_trust(source.created_by),  # a copy is exactly as trusted as its source
            key=source.key,
            expires_at=source.expires_at,  # a copy never outlives its source's retention
            source_role=source.space,
            source_card_id=source.id,
        )
        return await self.gateway.write(grant, draft)

    async def _lost_lease(self, grant: Grant, source: StoredCard, copy: StoredCard) -> Card:
        """We stalled past our lease and someone else took over. Their result wins."""
        record: PublicationRecord | None = await self.publications.get_publication(source.case_id, source.id)
        erased = record is not None and record.state == PublicationState.ERASED
        if record is None or erased or (record.state == PublicationState.READY and record.public_card_id != copy.id):
            # Our copy lost: nobody holds a reservation any more (reset), the card was erased meanwhile, or
            # another copy won. A pending owner who took over keeps it: it finds our copy by source id.
            await self._compensate(grant, copy.id)
        if erased:
            raise CardNotFoundError(source.id)
        if record and record.public_card_id:
            winner = await self.gateway.get(_reading(grant, BOARD), record.public_card_id)
            if winner is not None:
                return card_view(winner)
        raise self._pending()

    async def _compensate(self, grant: Grant, copy_id: str) -> None:
        await discard_card(self.gateway, self.cleanups, grant, BOARD, copy_id, "publication_compensation")

    async def _release_quietly(self, case_id: str, source_card_id: str, owner: str) -> None:
        try:
            await self.publications.release_publication(case_id, source_card_id, owner)
        except Exception:
            # The lease expires on its own; the next attempt reconciles.
            log.warning("could not release a publication reservation; its lease will expire")


def _reading(grant: Grant, space: str) -> Grant:
    """The part of a publish grant that reads one space (the source's, or the board)."""
    return grant.narrowed(reads=[space], writes=(), record=False)
