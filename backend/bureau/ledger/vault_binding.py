"""Which vault holds this ledger's keys (`ledger_meta.vault_id`, stamped once), and the one-per-case keys an
earlier version kept here (`case_keys`): read once when the ledger is first bound, then emptied, with SQLite's
`secure_delete` overwriting their pages and the WAL truncated (bootstrap/vault_binding.py)."""

from __future__ import annotations

import asyncio
import os

from sqlalchemy import Select, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from bureau.ledger.database import checkpoint_wal
from bureau.ledger.models import CaseKeyRow, CaseRow, LedgerMetaRow
from bureau.ledger.transactions import Repository

VAULT_ID = "vault_id"


class VaultBindingRepository(Repository):
    async def vault_id(self) -> str | None:
        return await self.runner.read(lambda session: session.scalar(_meta(VAULT_ID)))

    async def bind_vault(self, vault_id: str) -> str:
        """Stamp the vault id unless one is stamped; returns the one that holds (two processes binding)."""

        def work(session: Session) -> None:
            session.add(LedgerMetaRow(name=VAULT_ID, value=vault_id))
            session.flush()

        try:
            await self.runner.run(work)
        except Exception as exc:  # a unique-key conflict: another process stamped first
            if not isinstance(exc.__cause__, IntegrityError):
                raise
        bound = await self.vault_id()
        if bound is None:
            raise LookupError("the vault id did not stick")
        return bound

    async def keys_to_move(self) -> list[tuple[str, bytes]]:
        """Every case key an earlier version kept here, and a key for each case that had none (sealed before
        keys existed: its plaintext rows are sealed when the case is re-sealed)."""

        def work(session: Session) -> list[tuple[str, bytes]]:
            found = {row.case_id: bytes(row.key) for row in session.scalars(select(CaseKeyRow))}
            keyless = [case for case in session.scalars(select(CaseRow.id)) if case not in found]
            return [*found.items(), *((case_id, os.urandom(32)) for case_id in keyless)]

        return await self.runner.read(work)

    async def has_case_keys(self) -> bool:
        return await self.runner.read(lambda session: session.scalar(select(CaseKeyRow.case_id).limit(1)) is not None)

    async def has_cases(self) -> bool:
        return await self.runner.read(lambda session: session.scalar(select(CaseRow.id).limit(1)) is not None)

    async def forget_case_keys(self) -> None:
        """Empty `case_keys` for good: rows deleted (overwritten on SQLite), then the WAL truncated."""
        await self.runner.run(lambda session: session.execute(delete(CaseKeyRow)))
        await asyncio.to_thread(checkpoint_wal, self.runner.engine)


def _meta(name: str) -> Select[str]:
    return select(LedgerMetaRow.value).where(LedgerMetaRow.name == name)
