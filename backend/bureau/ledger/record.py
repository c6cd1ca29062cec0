"""The case record: every interrogation and cross-examination of a case, kept in order (not a last-trace slot).

An entry has a content-free `summary` (traces: card ids, spaces, scores, certainty; provenance) and a
`body` with the text (question, answers, conclusion), sealed under the case key before it is written.
Erasing the case deletes the entries and the key, so a surviving copy of a row is ciphertext.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from bureau.ledger.keys import cipher_for
from bureau.ledger.models import CaseRow, RecordEntryRow
from bureau.ledger.transactions import TransactionRunner
from bureau.scope.vocabulary import RecordKind
from bureau.sealing import CaseCipher, SealError

INTERROGATION = RecordKind.INTERROGATION
CROSS_EXAMINATION = RecordKind.CROSS_EXAMINATION


@dataclass(frozen=True, slots=True)
class RecordDraft:
    """One entry to append in the same transaction as the change it records."""

    kind: str
    roles: list[str]
    audience: str  # a Readers label
    summary: dict[str, Any]
    body: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RecordEntry:
    id: int
    case_id: str
    kind: str
    roles: list[str]
    audience: str
    summary: dict[str, Any]
    body: dict[str, Any]  # {} when it cannot be opened (no key: the case is being erased)
    created_at: datetime


def _seal_body(cipher: CaseCipher, body: dict[str, Any]) -> str:
    return cipher.seal(json.dumps(body, ensure_ascii=False)) if body else ""


def _open_body(cipher: CaseCipher | None, sealed: str) -> dict[str, Any]:
    if not sealed or cipher is None:
        return {}
    try:
        return dict(orjson.loads(cipher.open(sealed)))
    except (SealError, ValueError):
        return {}


def append_entry(session: Session, case_id: str, draft: RecordDraft, created_at: datetime) -> RecordEntry:
    """Append one entry (its body sealed) and return it as read back, body open."""
    cipher = cipher_for(session, case_id)
    if cipher is None and draft.body:
        raise LookupError("no sealing key for this case")  # never store a body in the clear
    row = RecordEntryRow(
        case_id=case_id,
        kind=draft.kind,
        roles=list(draft.roles),
        audience=draft.audience,
        summary=draft.summary,
        body=_seal_body(cipher, draft.body) if cipher else "",
        created_at=created_at,
    )
    session.add(row)
    session.flush()  # its id: the maintained latest answer points at it
    roles, summary, body = list(draft.roles), dict(draft.summary), dict(draft.body)
    return RecordEntry(row.id, case_id, draft.kind, roles, draft.audience, summary, body, created_at)


def forget_entries(session: Session, case_id: str) -> None:
    session.execute(delete(RecordEntryRow).where(RecordEntryRow.case_id == case_id))


def read_entries(session: Session, case_id: str, *, kind: str | None = None, last: bool = False) -> list[RecordEntry]:
    stmt = select(RecordEntryRow).where(RecordEntryRow.case_id == case_id)
    if kind is not None:
        stmt = stmt.where(RecordEntryRow.kind == kind)
    stmt = stmt.order_by(RecordEntryRow.id.desc()).limit(1) if last else stmt.order_by(RecordEntryRow.id)
    rows = list(session.scalars(stmt))
    cipher = cipher_for(session, case_id) if rows else None
    return [_entry(row, cipher) for row in rows]


def read_page(
    session: Session, case_id: str, *, before: int | None, after: int | None, limit: int, until: int | None = None
) -> list[RecordEntry]:
    """At most `limit` entries by id: newest first below `before`, or oldest first above `after` and up to
    `until` (one of the two, or neither: the newest page). One index range (case_id, id), at any length."""
    stmt = select(RecordEntryRow).where(RecordEntryRow.case_id == case_id)
    if until is not None:
        stmt = stmt.where(RecordEntryRow.id <= until)
    if after is not None:
        stmt = stmt.where(RecordEntryRow.id > after).order_by(RecordEntryRow.id)
    else:
        if before is not None:
            stmt = stmt.where(RecordEntryRow.id < before)
        stmt = stmt.order_by(RecordEntryRow.id.desc())
    rows = list(session.scalars(stmt.limit(limit)))
    cipher = cipher_for(session, case_id) if rows else None
    return [_entry(row, cipher) for row in rows]


def _entry(row: RecordEntryRow, cipher: CaseCipher | None) -> RecordEntry:
    created = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
    return RecordEntry(
        row.id,
        row.case_id,
        row.kind,
        list(row.roles),
        row.audience,
        dict(row.summary),
        _open_body(cipher, row.body),
        created,
    )


def entries_citing(session: Session, case_id: str, card_id: str) -> list[RecordEntryRow]:
    """Entries whose provenance names `card_id` (the summary lists every card an entry was derived from)."""
    rows = session.scalars(select(RecordEntryRow).where(RecordEntryRow.case_id == case_id))
    return [row for row in rows if card_id in (row.summary or {}).get("ingredients", [])]


def redact_card(session: Session, case_id: str, card_id: str) -> int:
    """An erased card: every entry derived from it is marked, and its text (which may quote the card) is
    dropped. Returns how many entries were marked."""
    marked = 0
    for row in entries_citing(session, case_id, card_id):
        summary = dict(row.summary)
        summary["erased_ingredients"] = sorted({*summary.get("erased_ingredients", []), card_id})
        row.summary = summary
        row.body = ""
        marked += 1
    return marked


class RecordLedger(TransactionRunner):
    async def case_record(self, case_id: str) -> list[RecordEntry]:
        """Every interrogation and cross-examination of the case, oldest first."""
        return await self._read(lambda s: read_entries(s, case_id))

    async def record_since(self, case_id: str, after: int, limit: int, until: int | None = None) -> list[RecordEntry]:
        """The next `limit` entries above `after` (and up to `until`), oldest first: what an export streams."""
        return await self._read(lambda s: read_page(s, case_id, before=None, after=after, limit=limit, until=until))

    async def record_bounds(self, case_id: str) -> tuple[int, int]:
        """(how many entries, the newest id; 0 when empty), read together: an export announces the count and
        streams the entries up to that id."""

        def bounds(session: Session) -> tuple[int, int]:
            count = session.scalar(select(CaseRow.record_entries).where(CaseRow.id == case_id)) or 0
            newest = session.scalar(select(func.max(RecordEntryRow.id)).where(RecordEntryRow.case_id == case_id))
            return count, int(newest or 0)

        return await self._read(bounds)

    async def interrogations(self, case_id: str) -> list[RecordEntry]:
        """Every interrogation entry, oldest first: what the reference fold of the snapshot's state reads (tests;
        the snapshot itself reads the maintained state, `case_knowledge.py`)."""
        return await self._read(lambda s: read_entries(s, case_id, kind=INTERROGATION))
