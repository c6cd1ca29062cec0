"""Which grant each command holds: the table of docs/erasure.md, written once. A grant is minted from scopes
the game has already resolved (the role from the route, the case's generation from the ledger), names its
request, and is closed when the command ends.

| command | reads | writes |
|---|---|---|
| interrogation | own space, board | own space (its session record), the record (its entry) |
| cross-examination | per role asked: its space, board | the record (the sealed conclusion) |
| whisper | – | the target space |
| publish | the source space, the board | the board |
| findings (evaluate, promote) | every role, the board, the record; pseudonyms | the board, the record |
| case create, reset | – | every role's space, the record |
| operator views | every space, the record | – |
| stage views | the board | – |
| deletes, erasure, cleanups, retention | – (ids and metadata only) | every space (their keys' lifecycle); pseudonyms |
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

from bureau.game.errors import CaseNotFoundError
from bureau.ledger.repository import CaseRecord
from bureau.scope.keys import BOARD, ROLES, Role, case_scopes, role_scope, space_scope
from bureau.scope.vocabulary import Purpose
from bureau.vault import CaseKeysGoneError, Grant, LegacyCaseError, Vault


class Reseal(Protocol):
    async def reseal(self, case_id: str) -> None: ...

    async def reseal_all(self) -> int: ...


class Keys:
    """Mints the grants of the game's commands (an async context each: the grant closes with its command). A
    case an earlier version sealed under one key is re-sealed into its compartments on its first touch."""

    def __init__(self, vault: Vault, resealer: Reseal) -> None:
        self.vault = vault
        self.resealer = resealer

    @contextlib.asynccontextmanager
    async def _held(
        self, case_id: str, generation: str | None, purpose: Purpose, **covers: Any
    ) -> AsyncIterator[Grant]:
        try:
            try:
                grant = await self.vault.grant(case_id, generation, purpose, **covers)
            except LegacyCaseError:
                await self.resealer.reseal(case_id)
                grant = await self.vault.grant(case_id, generation, purpose, **covers)
        except CaseKeysGoneError as exc:
            raise CaseNotFoundError(case_id) from exc  # no key, no case: erased here or before a restore
        try:
            yield grant
        finally:
            grant.close()

    def interrogation(self, case: CaseRecord, role: Role) -> contextlib.AbstractAsyncContextManager[Grant]:
        own, board = role_scope(case.id, role, case.generation), space_scope(case.id, BOARD, case.generation)
        return self._held(
            case.id, case.generation, Purpose.INTERROGATION, reads=[own, board], writes=[own], record_writes=True
        )

    def cross_examination(
        self, case: CaseRecord, roles: Sequence[Role]
    ) -> contextlib.AbstractAsyncContextManager[Grant]:
        """One grant for the question: each role's part is its narrowed interrogation grant (`role_part`)."""
        reads = [role_scope(case.id, role, case.generation) for role in roles]
        reads.append(space_scope(case.id, BOARD, case.generation))
        return self._held(case.id, case.generation, Purpose.CROSS_EXAMINATION, reads=reads, record_writes=True)

    @staticmethod
    def role_part(grant: Grant, role: Role) -> Grant:
        """A cross-examination's grant for one role: its own space and the board, nothing else."""
        return grant.narrowed(reads=[role, BOARD], writes=[], record=False)

    def whisper(self, case: CaseRecord, role: Role) -> contextlib.AbstractAsyncContextManager[Grant]:
        return self._held(
            case.id, case.generation, Purpose.WHISPER, writes=[role_scope(case.id, role, case.generation)]
        )

    def publish(self, case: CaseRecord, role: Role) -> contextlib.AbstractAsyncContextManager[Grant]:
        source, board = role_scope(case.id, role, case.generation), space_scope(case.id, BOARD, case.generation)
        return self._held(case.id, case.generation, Purpose.PUBLISH, reads=[source, board], writes=[board])

    def findings(self, case: CaseRecord) -> contextlib.AbstractAsyncContextManager[Grant]:
        spaces = case_scopes(case.id, case.generation)
        board = [scope for scope in spaces if scope.space == BOARD]
        return self._held(
            case.id,
            case.generation,
            Purpose.FINDINGS,
            reads=spaces,
            writes=board,
            record_reads=True,
            record_writes=True,
            pseudonyms=True,
        )

    def case_setup(self, case_id: str, generation: str) -> contextlib.AbstractAsyncContextManager[Grant]:
        """A new case's or a reset's opening cards, into `generation`."""
        writes = [role_scope(case_id, role, generation) for role in ROLES]
        return self._held(case_id, generation, Purpose.CASE_SETUP, writes=writes, record_writes=True)

    def operator(self, case: CaseRecord) -> contextlib.AbstractAsyncContextManager[Grant]:
        return self._held(
            case.id, case.generation, Purpose.OPERATOR, reads=case_scopes(case.id, case.generation), record_reads=True
        )

    def stage(self, case: CaseRecord) -> contextlib.AbstractAsyncContextManager[Grant]:
        """The board's cards, and every space's count (listed, never opened)."""
        board = space_scope(case.id, BOARD, case.generation)
        return self._held(
            case.id, case.generation, Purpose.STAGE, reads=[board], lists=case_scopes(case.id, case.generation)
        )

    def lifecycle(self, case_id: str) -> contextlib.AbstractAsyncContextManager[Grant]:
        """Ids and metadata of every space, in every generation: their keys destroyed with them, no text read."""
        return self._held(case_id, None, Purpose.LIFECYCLE, writes=case_scopes(case_id), pseudonyms=True)
