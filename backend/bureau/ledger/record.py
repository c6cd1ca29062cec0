"""The case record: every interrogation and cross-examination of a case, kept in order (not a last-trace slot).

An entry has a content-free `summary` (traces: card ids, spaces, scores, certainty; provenance) and a
`body` with the text (question, answers, conclusion), sealed under a key of its own in the record compartment
(through the grant of the command that writes it) before it is written, and opened only through a grant that
reads the record. A reset, a card erasure that drops a body and an erase destroy those keys, so a surviving
copy of a row is ciphertext no key opens.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import Connection, Row, bindparam, delete, func, insert, select
from sqlalchemy.orm import Session

from bureau.ledger.models import CaseRow, FindingRow, RecordEntryRow, table
from bureau.ledger.transactions import Repository, inserted_id
from bureau.scope.keys import RECORD
from bureau.scope.vocabulary import RecordKind
from bureau.vault.grants import Grant
from bureau.vault.items import item_of, new_item_id

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
class SealedBody:
    """A draft's body sealed under a new item key of the record compartment (stored in the vault already)."""

    text: str  # "" for an empty body
    item: str | None


def seal_body(grant: Grant | None, draft: RecordDraft) -> SealedBody:
    """Before the transaction (blocking: the new key goes into the vault first). A body is never stored in the
    clear: no grant that writes the record, no body."""
    if not draft.body:
        return SealedBody("", None)
    if grant is None:
        raise LookupError("a record body is sealed through a grant that writes the record")
    item = new_item_id()
    sealed = grant.seal(RECORD, item, json.dumps(draft.body, ensure_ascii=False))
    grant.store_new_keys()
    return SealedBody(sealed, item)


@dataclass(frozen=True, slots=True)
class RecordEntry:
    id: int
    case_id: str
    kind: str
    roles: list[str]
    audience: str
    summary: dict[str, Any]
    body: dict[str, Any]  # {} when it cannot be opened (no grant that reads the record, or its key is gone)
    created_at: datetime


def open_bodies(grant: Grant | None, sealed: Sequence[str]) -> list[dict[str, Any]]:
    """Bodies opened through `grant`, their keys fetched in one vault statement; {} for what does not open."""
    if grant is None or not grant.shape.record:
        return [{} for _ in sealed]
    grant.load({RECORD: [item for text in sealed if (item := _item(text))]})
    opened = []
    for text in sealed:
        plain = grant.open(RECORD, text) if text else None
        try:
            opened.append(dict(orjson.loads(plain)) if plain else {})
        except ValueError:
            opened.append({})
    return opened


def _item(sealed: str) -> str | None:
    return item_of(sealed) if sealed else None


def append_entry(
    session: Session, case_id: str, draft: RecordDraft, body: SealedBody, created_at: datetime
) -> RecordEntry:
    """Append one entry (its body sealed beforehand, `seal_body`) and return it as read back, body open. One
    INSERT, no ORM object: its id is what the maintained latest answer points at."""
    values = {
        "case_id": case_id,
        "kind": draft.kind,
        "roles": list(draft.roles),
        "audience": draft.audience,
        "summary": draft.summary,
        "body": body.text,
        "body_item": body.item,
        "created_at": created_at,
    }
    entry_id = inserted_id(session.execute(INSERT_ENTRY, values))
    roles, summary, opened = list(draft.roles), dict(draft.summary), dict(draft.body)
    return RecordEntry(entry_id, case_id, draft.kind, roles, draft.audience, summary, opened, created_at)


def forget_entries(session: Session, case_id: str) -> None:
    session.execute(delete(RecordEntryRow).where(RecordEntryRow.case_id == case_id))


_entries_table = table(RecordEntryRow).c
# An entry as every reader reads it: columns, never an ORM object (rows from a session or a plain connection).
ENTRY_COLUMNS = (
    _entries_table.id,
    _entries_table.case_id,
    _entries_table.kind,
    _entries_table.roles,
    _entries_table.audience,
    _entries_table.summary,
    _entries_table.body,
    _entries_table.created_at,
)
# The newest entry of one kind (the console's X-ray, the stage's sentence): one index range, built once.
LAST_OF_KIND = (
    select(*ENTRY_COLUMNS)
    .where(_entries_table.case_id == bindparam("case_id"), _entries_table.kind == bindparam("kind"))
    .order_by(_entries_table.id.desc())
    .limit(1)
)
BODIES_BY_ID = select(_entries_table.id, _entries_table.body).where(
    _entries_table.case_id == bindparam("case_id"), _entries_table.id.in_(bindparam("ids", expanding=True))
)
INSERT_ENTRY = insert(table(RecordEntryRow))
Reader = Session | Connection  # a read runs on an ORM session or on a plain connection alike
AnyRow = Row[*tuple[Any, ...]]  # a row of columns, read by their names


def read_entries(
    reader: Reader, case_id: str, *, kind: str | None = None, last: bool = False, grant: Grant | None = None
) -> list[RecordEntry]:
    stmt = select(*ENTRY_COLUMNS).where(_entries_table.case_id == case_id)
    if kind is not None:
        stmt = stmt.where(_entries_table.kind == kind)
    stmt = stmt.order_by(_entries_table.id.desc()).limit(1) if last else stmt.order_by(_entries_table.id)
    return entries_of(list(reader.execute(stmt)), grant)


def read_last(reader: Reader, case_id: str, kind: str) -> AnyRow | None:
    """The newest entry of one kind, its body still sealed (`entries_of` opens it)."""
    return reader.execute(LAST_OF_KIND, {"case_id": case_id, "kind": kind}).first()


def read_bodies(reader: Reader, case_id: str, ids: Sequence[int]) -> dict[int, str]:
    """Some entries' sealed bodies, by id: only the text, where only the text is wanted."""
    if not ids:
        return {}
    return {entry_id: body for entry_id, body in reader.execute(BODIES_BY_ID, {"case_id": case_id, "ids": list(ids)})}


def read_page(
    reader: Reader,
    case_id: str,
    *,
    before: int | None,
    after: int | None,
    limit: int,
    until: int | None = None,
    grant: Grant | None = None,
) -> list[RecordEntry]:
    """At most `limit` entries by id: newest first below `before`, or oldest first above `after` and up to
    `until` (one of the two, or neither: the newest page). One index range (case_id, id), at any length."""
    stmt = select(*ENTRY_COLUMNS).where(_entries_table.case_id == case_id)
    if until is not None:
        stmt = stmt.where(_entries_table.id <= until)
    if after is not None:
        stmt = stmt.where(_entries_table.id > after).order_by(_entries_table.id)
    else:
        if before is not None:
            stmt = stmt.where(_entries_table.id < before)
        stmt = stmt.order_by(_entries_table.id.desc())
    return entries_of(list(reader.execute(stmt.limit(limit))), grant)


def entries_of(rows: Sequence[AnyRow], grant: Grant | None) -> list[RecordEntry]:
    """Entries from their rows (`ENTRY_COLUMNS`), their bodies opened through `grant` in one vault statement."""
    bodies = open_bodies(grant, [row.body for row in rows])
    return [entry_of(row, body) for row, body in zip(rows, bodies, strict=True)]


def entry_of(row: AnyRow, body: dict[str, Any]) -> RecordEntry:
    """An entry from its row (`ENTRY_COLUMNS`) and its opened body."""
    created = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
    return RecordEntry(row.id, row.case_id, row.kind, list(row.roles), row.audience, dict(row.summary), body, created)


def entries_citing(session: Session, case_id: str, card_id: str) -> list[RecordEntryRow]:
    """Entries whose provenance names `card_id` (the summary lists every card an entry was derived from)."""
    rows = session.scalars(select(RecordEntryRow).where(RecordEntryRow.case_id == case_id))
    return [row for row in rows if card_id in (row.summary or {}).get("ingredients", [])]


def redact_card(session: Session, case_id: str, card_id: str) -> tuple[int, list[str]]:
    """An erased card: every entry derived from it is marked, and its text (which may quote the card) is
    dropped. Returns how many entries were marked, and the items of the texts dropped (their keys are destroyed
    once the erasure has committed)."""
    marked, dropped = 0, []
    for row in entries_citing(session, case_id, card_id):
        summary = dict(row.summary)
        summary["erased_ingredients"] = sorted({*summary.get("erased_ingredients", []), card_id})
        row.summary = summary
        if row.body_item:
            dropped.append(row.body_item)
        row.body, row.body_item = "", None
        marked += 1
    return marked, dropped


class RecordRepository(Repository):
    async def case_record(self, case_id: str, grant: Grant | None) -> list[RecordEntry]:
        """Every interrogation and cross-examination of the case, oldest first (bodies open through `grant`)."""
        return await self.runner.read(lambda s: read_entries(s, case_id, grant=grant))

    async def record_since(
        self, case_id: str, after: int, limit: int, until: int | None = None, *, grant: Grant | None
    ) -> list[RecordEntry]:
        """The next `limit` entries above `after` (and up to `until`), oldest first: what an export streams."""
        return await self.runner.read(
            lambda s: read_page(s, case_id, before=None, after=after, limit=limit, until=until, grant=grant)
        )

    async def record_items(self, case_id: str) -> set[str]:
        """Every vault item a text of the case's ledger rows names (record bodies, finding claims): what the
        orphan sweep keeps."""

        def work(session: Session) -> set[str]:
            bodies = session.scalars(select(RecordEntryRow.body_item).where(RecordEntryRow.case_id == case_id))
            claims = session.scalars(select(FindingRow.claim_item).where(FindingRow.case_id == case_id))
            return {item for item in (*bodies, *claims) if item}

        return await self.runner.read(work)

    async def record_bounds(self, case_id: str) -> tuple[int, int]:
        """(how many entries, the newest id; 0 when empty), read together: an export announces the count and
        streams the entries up to that id."""

        def bounds(session: Session) -> tuple[int, int]:
            count = session.scalar(select(CaseRow.record_entries).where(CaseRow.id == case_id)) or 0
            newest = session.scalar(select(func.max(RecordEntryRow.id)).where(RecordEntryRow.case_id == case_id))
            return count, int(newest or 0)

        return await self.runner.read(bounds)

    async def interrogations(self, case_id: str, grant: Grant | None) -> list[RecordEntry]:
        """Every interrogation entry, oldest first: what the reference fold of the snapshot's state reads (tests;
        the snapshot itself reads the maintained state, `case_knowledge.py`)."""
        return await self.runner.read(lambda s: read_entries(s, case_id, kind=INTERROGATION, grant=grant))
