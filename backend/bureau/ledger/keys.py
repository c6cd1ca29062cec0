"""Per-case sealing keys, kept in the ledger (outside the memory store). Destroying a key is what makes an
erased case's leftovers in the store's logs unreadable (docs/erasure.md)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete
from sqlalchemy.orm import Session

from bureau.ledger.models import CaseKeyRow
from bureau.sealing import CaseCipher, new_case_key


def case_key(session: Session, case_id: str) -> bytes | None:
    row = session.get(CaseKeyRow, case_id)
    return bytes(row.key) if row is not None else None


def cipher_for(session: Session, case_id: str) -> CaseCipher | None:
    key = case_key(session, case_id)
    return CaseCipher(case_id, key) if key is not None else None


def create_key(session: Session, case_id: str) -> bytes:
    """A fresh key for a case; an existing one is kept (idempotent)."""
    existing = case_key(session, case_id)
    if existing is not None:
        return existing
    key = new_case_key()
    session.add(CaseKeyRow(case_id=case_id, key=key, created_at=datetime.now(UTC)))
    session.flush()
    return key


def destroy_key(session: Session, case_id: str) -> None:
    session.execute(delete(CaseKeyRow).where(CaseKeyRow.case_id == case_id))
