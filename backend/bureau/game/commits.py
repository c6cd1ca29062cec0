"""How a command meets the case it changes: the version it expected, a reset that commits while it runs, an erase
that races it, and its commit, all or nothing (a failed commit undoes the cards it wrote)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from bureau.game.case_access import CaseAccess
from bureau.game.changes import CaseChange
from bureau.game.compensation import discard_many
from bureau.game.errors import (
    CardNotFoundError,
    CaseNotFoundError,
    FindingNotQualifiedError,
    FindingPendingError,
    PublicationPendingError,
    VersionConflictError,
)
from bureau.ledger.repository import (
    CaseMissingError,
    CaseRecord,
    CaseRepository,
    CleanupRepository,
    GenerationMovedError,
    PendingEvent,
    StepOf,
    VersionMismatchError,
)
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import StoredCard
from bureau.vault import Grant

T = TypeVar("T")
# A command that met a reset in its commit runs again in the new generation, at most this many times (a reset
# is rare; a case reset over and over this fast answers 409 VERSION_CONFLICT instead of looping).
GENERATION_ATTEMPTS = 5


class Commits:
    def __init__(
        self, gateway: MemoryGateway, cases: CaseRepository, cleanups: CleanupRepository, access: CaseAccess
    ) -> None:
        self.gateway, self.access = gateway, access
        self.cases, self.cleanups = cases, cleanups  # what a commit changes; what an undo leaves to clean up

    async def check_version(self, case_id: str, expected_version: int | None) -> CaseRecord:
        case = await self.access.require_case(case_id)
        if expected_version is not None and case.version != expected_version:
            raise VersionConflictError(await self.access.snapshot(case_id))
        return case

    async def in_current_generation(
        self, case_id: str, expected_version: int | None, command: Callable[[CaseRecord], Awaitable[T]]
    ) -> T:
        """Run a command in the case's current generation. When a reset commits while it runs, its own commit
        refuses it (and undoes what it wrote): it runs again in the new generation, so a write acknowledged
        after a reset is a write of the reset case. A conditional command meets the reset as a version
        conflict instead (a reset bumps the version)."""
        for _ in range(GENERATION_ATTEMPTS):
            case = await self.check_version(case_id, expected_version)
            try:
                return await command(case)
            except GenerationMovedError:
                continue
        raise VersionConflictError(await self.access.snapshot(case_id))

    async def unless_erased(self, case_id: str, command: Awaitable[T]) -> T:
        """A command that raced the erase of its case may meet the erase as a missing card, an unqualified
        claim or a pending lease: what is gone is the case (404 CASE_NOT_FOUND, docs/api.md), so say that."""
        try:
            return await command
        except (CardNotFoundError, FindingNotQualifiedError, FindingPendingError, PublicationPendingError):
            await self.access.require_case(case_id)
            raise

    async def commit(self, case_id: str, events: list[PendingEvent], **kwargs: Any) -> CaseRecord:
        try:
            return await self.cases.change_case(case_id, events, **kwargs)
        except CaseMissingError as exc:
            raise CaseNotFoundError(case_id) from exc
        except VersionMismatchError as exc:
            raise VersionConflictError(await self.access.snapshot(case_id)) from exc

    async def commit_or_undo(
        self, case_id: str, grant: Grant, written: Sequence[StoredCard], events: list[PendingEvent], **kwargs: Any
    ) -> CaseRecord:
        """Commit, with the record body sealed through `grant`; a failed commit undoes the cards written."""
        try:
            return await self.commit(case_id, events, grant=grant, **kwargs)
        except BaseException:
            await self.undo(grant, written)
            raise

    async def commit_change(
        self, case_id: str, grant: Grant, change: CaseChange, *, steps: StepOf | None = None
    ) -> CaseRecord:
        """Commit what a step returned (the record body sealed through `grant`); a failed commit undoes its cards."""
        return await self.commit_or_undo(
            case_id,
            grant,
            change.written,
            change.events,
            expected_version=change.expected_version,
            generation=change.generation,
            record=change.record,
            decisions=change.decisions,
            steps=steps,
        )

    async def undo(self, grant: Grant, written: Sequence[StoredCard]) -> None:
        by_space: dict[str, list[StoredCard]] = {}
        for card in written:
            by_space.setdefault(card.space, []).append(card)
        for space, cards in by_space.items():
            await discard_many(self.gateway, self.cleanups, grant, space, cards, "undo_failed_command")
