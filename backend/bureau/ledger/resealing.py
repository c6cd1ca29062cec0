"""Re-sealing a case an earlier version sealed under one case key (game/reseal.py): its record bodies and
finding claims, `sealed:v1:`, each re-sealed under a key of its own in the record compartment, through the
migration's grant; its latest answers' copies dropped (the text is the entry's body now). In bounded batches:
on SQLite each batch holds the database's single writer lock, never the whole rewrite. A row already re-sealed
is left alone, and a row changed meanwhile is not overwritten, so a re-seal that crashed is run again."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from bureau.ledger.models import FindingRow, LatestAnswerRow, RecordEntryRow
from bureau.ledger.transactions import Repository
from bureau.scope.keys import RECORD
from bureau.vault.grants import ResealGrant
from bureau.vault.items import new_item_id

RESEAL_BATCH = 200
_V1 = "sealed:v1:%"


class ResealRepository(Repository):
    async def reseal_texts(self, case_id: str, grant: ResealGrant, batch: int = RESEAL_BATCH) -> int:
        """Every `sealed:v1:` body and claim of the case re-sealed; returns how many."""
        done = 0
        while found := await self.runner.read(lambda s: _legacy_rows(s, case_id, batch)):
            resealed = _Batch(grant, found)
            await self.runner.run(resealed.write, before=resealed.seal)
            done += len(found)
            if len(found) < batch:
                break
        stmt = update(LatestAnswerRow).where(LatestAnswerRow.case_id == case_id, LatestAnswerRow.answer != "")
        await self.runner.run(lambda s: s.execute(stmt.values(answer="")))
        return done


class _Batch:
    """One batch: sealed on the ledger's thread before its transaction (the keys go into the vault first),
    written in it."""

    def __init__(self, grant: ResealGrant, found: list[tuple[type, int | str, str]]) -> None:
        self._grant = grant
        self._found = found
        self._resealed: list[tuple[type, int | str, str, str, str]] = []

    def seal(self) -> None:
        for table, row_id, text in self._found:
            opened = self._grant.open_legacy(text)  # a body's or a claim's JSON, as it was sealed
            item = new_item_id()
            value = self._grant.seal(RECORD, item, opened) if opened else ""
            self._resealed.append((table, row_id, text, value, item if value else ""))
        self._grant.store_new_keys()

    def write(self, session: Session) -> None:
        _write(session, self._resealed)


def _legacy_rows(session: Session, case_id: str, limit: int) -> list[tuple[type, int | str, str]]:
    bodies = session.execute(
        select(RecordEntryRow.id, RecordEntryRow.body)
        .where(RecordEntryRow.case_id == case_id, RecordEntryRow.body.like(_V1))
        .order_by(RecordEntryRow.id)
        .limit(limit)
    )
    found: list[tuple[type, int | str, str]] = [(RecordEntryRow, i, b) for i, b in bodies]
    if len(found) < limit:
        claims = session.execute(
            select(FindingRow.id, FindingRow.claim)
            .where(FindingRow.case_id == case_id, FindingRow.claim.like(_V1))
            .order_by(FindingRow.id)
            .limit(limit - len(found))
        )
        found += [(FindingRow, i, c) for i, c in claims]
    return found


def _write(session: Session, resealed: list[tuple[type, int | str, str, str, str]]) -> None:
    for table, row_id, old, new, item in resealed:
        if table is RecordEntryRow:
            session.execute(
                update(RecordEntryRow)
                .where(RecordEntryRow.id == row_id, RecordEntryRow.body == old)
                .values(body=new, body_item=item or None)
            )
        else:
            session.execute(
                update(FindingRow)
                .where(FindingRow.id == row_id, FindingRow.claim == old)
                .values(claim=new, claim_item=item or None)
            )
