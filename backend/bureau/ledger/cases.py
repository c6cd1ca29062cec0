"""Cases: the case row and its version, every change committed together with its events (and its case-record
entry), and erasing a case's rows. The keys are the vault's: a body is sealed through the command's grant."""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, bindparam, delete, select, update
from sqlalchemy.orm import Session

from bureau.ledger.case_knowledge import (
    KnowledgeRepository,
    KnowledgeState,
    StepOf,
    fold_again,
    forget_knowledge,
    knowledge_state,
    read_knowledge_rows,
    step_forward,
)
from bureau.ledger.cleanups import CleanupIntent, CleanupTask, add_intents, task_of
from bureau.ledger.database import checkpoint_wal
from bureau.ledger.event_records import EventRecord, PendingEvent
from bureau.ledger.events import append_event, append_events
from bureau.ledger.finding_rows import FindingRecord, forget_findings, withdraw_unsupported, withdrawn_events
from bureau.ledger.models import CaseRow, CleanupTaskRow, EventRow, PublicationRow, table
from bureau.ledger.policy_audit import PolicyDecision, append_decisions
from bureau.ledger.record import (
    CROSS_EXAMINATION,
    INTERROGATION,
    AnyRow,
    RecordDraft,
    RecordEntry,
    SealedBody,
    append_entry,
    entry_of,
    forget_entries,
    open_bodies,
    read_last,
    read_page,
    redact_card,
    seal_body,
)
from bureau.ledger.tombstones import entomb_publication
from bureau.ledger.transactions import (
    CaseMissingError,
    GenerationMovedError,
    Repository,
    TransactionRunner,
    VersionMismatchError,
    affected,
    aware,
    utcnow,
)
from bureau.scope.keys import BOARD, RECORD
from bureau.scope.vocabulary import CaseStatus, EventType
from bureau.vault.errors import GenerationRetiredError
from bureau.vault.grants import Grant

LOADING, ACTIVE, ERASING = CaseStatus.LOADING, CaseStatus.ACTIVE, CaseStatus.ERASING
log = logging.getLogger("bureau.ledger")


@dataclass(frozen=True, slots=True)
class CaseRecord:
    id: str
    scenario_id: str
    language: str
    status: str
    version: int
    created_at: datetime
    generation: str = ""  # every reset replaces it (ledger/models.py: CaseRow.generation)


@dataclass(frozen=True, slots=True)
class CaseView:
    """A case as its views read it (`CaseRepository.case_view`); `case` None: no such case."""

    case: CaseRecord | None
    last_interrogation: RecordEntry | None
    last_cross_examination: RecordEntry | None
    knowledge: KnowledgeState | None


_cases = table(CaseRow).c
CASE_BY_ID = select(
    _cases.id,
    _cases.scenario_id,
    _cases.language,
    _cases.status,
    _cases.version,
    _cases.created_at,
    _cases.generation,
    _cases.knowledge_folded,
    _cases.record_entries,
).where(_cases.id == bindparam("case_id"))
CASE_FOR_UPDATE = CASE_BY_ID.with_for_update()  # a command's read of its case, under the row's lock


def case_record(row: CaseRow | AnyRow) -> CaseRecord:
    return CaseRecord(
        row.id, row.scenario_id, row.language, row.status, row.version, aware(row.created_at), row.generation or ""
    )


def new_generation() -> str:
    return secrets.token_hex(8)


class CaseRepository(Repository):
    """Cases and every change of one: `apply_change` is the one transaction a case changes in, and where
    another aggregate's work joins it (`extra`: publications, findings, a card's erasure)."""

    def __init__(self, runner: TransactionRunner, knowledge: KnowledgeRepository) -> None:
        super().__init__(runner)
        self.knowledge = knowledge  # a view folds a case not folded yet

    async def create_case(self, case_id: str, scenario_id: str, language: str) -> CaseRecord:
        def work(session: Session) -> CaseRecord:
            now = utcnow()
            row = CaseRow(
                id=case_id,
                scenario_id=scenario_id,
                language=language,
                status=LOADING,
                version=0,
                generation=new_generation(),
                created_at=now,
                updated_at=now,
            )
            session.add(row)
            session.flush()
            return case_record(row)

        return await self.runner.run(work)

    async def get_case(self, case_id: str) -> CaseRecord | None:
        def work(connection: Connection) -> CaseRecord | None:
            row = connection.execute(CASE_BY_ID, {"case_id": case_id}).first()
            return case_record(row) if row else None

        return await self.runner.read_rows(work)

    async def case_view(self, case_id: str, *, grant: Grant | None = None, steps: StepOf | None = None) -> CaseView:
        """What every view of a case starts from, in one read: the case, its newest interrogation (the console's
        X-ray, the stage's sentence), its newest cross-examination (what the stage announces) and, with a
        `grant` that reads the record (the operator's), their texts and the maintained matrix and latest
        answers (a case not folded yet is folded first, with `steps`: its scenario's), every text opened in one
        vault statement. Without one, content-free: what the stage may see."""

        def work(connection: Connection) -> CaseView:
            row = connection.execute(CASE_BY_ID, {"case_id": case_id}).first()
            if row is None:
                return CaseView(None, None, None, None)
            newest = [read_last(connection, case_id, kind) for kind in (INTERROGATION, CROSS_EXAMINATION)]
            known = read_knowledge_rows(connection, case_id) if grant is not None and row.knowledge_folded else None
            answer_ids = list(known.bodies) if known is not None else []
            sealed = [entry.body if entry is not None else "" for entry in newest]
            if known is not None:
                sealed += [known.bodies[i] for i in answer_ids]
            opened = open_bodies(grant, sealed)  # every text of the view, its keys in one vault statement
            last, joint = (
                entry_of(entry, body) if entry is not None else None
                for entry, body in zip(newest, opened[: len(newest)], strict=True)
            )
            knowledge = None
            if known is not None:
                knowledge = knowledge_state(known, dict(zip(answer_ids, opened[len(newest) :], strict=True)))
            return CaseView(case_record(row), last, joint, knowledge)

        view = await self.runner.read_rows(work)
        if grant is not None and view.case is not None and view.knowledge is None:
            if steps is None:
                raise LookupError("a case not folded yet is read with its scenario's knowledge steps")
            return replace(view, knowledge=await self.knowledge.case_knowledge(case_id, grant, steps))
        return view

    async def record_page(
        self, case_id: str, before: int | None, limit: int, grant: Grant | None
    ) -> tuple[CaseRecord | None, list[RecordEntry], int]:
        """The case, and a page of its record as the timeline shows it, newest first: the `limit` entries below
        `before`, and how many entries the record holds (the timeline numbers its rows from it). One read."""

        def work(connection: Connection) -> tuple[CaseRecord | None, list[RecordEntry], int]:
            row = connection.execute(CASE_BY_ID, {"case_id": case_id}).first()
            if row is None:
                return None, [], 0
            entries = read_page(connection, case_id, before=before, after=None, limit=limit, grant=grant)
            return case_record(row), entries, row.record_entries or 0

        return await self.runner.read_rows(work)

    async def list_cases(self) -> list[CaseRecord]:
        return await self.runner.read(
            lambda s: [case_record(r) for r in s.scalars(select(CaseRow).order_by(CaseRow.id))]
        )

    async def latest_active_case(self) -> CaseRecord | None:
        """The newest case that is in play: what a following stage shows."""

        def work(session: Session) -> CaseRecord | None:
            stmt = select(CaseRow).where(CaseRow.status == ACTIVE).order_by(CaseRow.created_at.desc(), CaseRow.id)
            row = session.scalars(stmt.limit(1)).first()
            return case_record(row) if row else None

        return await self.runner.read(work)

    async def change_case(
        self,
        case_id: str,
        events: Sequence[PendingEvent],
        *,
        expected_version: int | None = None,
        status: str | None = None,
        record: RecordDraft | None = None,
        decisions: Sequence[PolicyDecision] = (),
        generation: str | None = None,
        grant: Grant | None = None,
        steps: StepOf | None = None,
    ) -> CaseRecord:
        """Bump the case version and append its events in one transaction, with the policy decisions of the
        writes it keeps. Optionally append a case-record entry, its body sealed through `grant` (an
        interrogation also steps the maintained snapshot state, with `steps`: the case scenario's; without
        them the case is folded whole on its next read). `generation`: the generation the command began in,
        which must still be the case's (GenerationMovedError otherwise: a reset came first)."""
        return await self.apply_change(
            case_id,
            events,
            expected_version,
            status,
            record,
            generation=generation,
            grant=grant,
            steps=steps,
            decisions=decisions,
        )

    async def reset_case(
        self,
        case_id: str,
        events: Sequence[PendingEvent],
        *,
        reset_to: str,
        expected_version: int | None = None,
        decisions: Sequence[PolicyDecision] = (),
        generation: str | None = None,
    ) -> CaseRecord:
        """A reset, as one change of the case: it forgets publications, the record and the maintained state and
        makes `reset_to` the case's generation (the vault destroys the old generation's record key), with its
        events and the policy decisions of the opening cards; `generation` as for `change_case`."""

        def forget(session: Session) -> None:
            _forget_case_state(session, case_id)

        return await self.apply_change(
            case_id,
            events,
            expected_version,
            extra=forget,
            generation=generation,
            reset_to=reset_to,
            decisions=decisions,
        )

    async def apply_change(
        self,
        case_id: str,
        events: Sequence[PendingEvent],
        expected_version: int | None = None,
        status: str | None = None,
        record: RecordDraft | None = None,
        extra: Callable[[Session], Sequence[PendingEvent] | None] | None = None,
        *,
        generation: str | None = None,
        reset_to: str | None = None,
        grant: Grant | None = None,
        steps: StepOf | None = None,
        decisions: Sequence[PolicyDecision] = (),
    ) -> CaseRecord:
        """The one way a case changes: version bump, optional extra work of another aggregate (which may
        return events of its own, known only inside the transaction), the policy decisions, events. An
        interrogation's record entry steps the maintained snapshot state in the same transaction; its body is
        sealed through `grant` before the transaction begins. Under the case row's lock: the generation the
        command began in is checked, and a reset replaces it."""
        sealed: list[SealedBody] = []

        def seal() -> None:  # on the ledger's thread, outside the transaction (its key goes into the vault)
            if record is not None and not sealed:
                try:
                    sealed.append(seal_body(grant, record))
                except GenerationRetiredError as exc:  # another process's reset retired its record key
                    raise GenerationMovedError(case_id) from exc

        def work(session: Session) -> tuple[CaseRecord, list[EventRecord]]:
            row = session.execute(CASE_FOR_UPDATE, {"case_id": case_id}).first()  # columns: no ORM object
            if row is None or row.status == ERASING:
                raise CaseMissingError(case_id)  # an erase has begun: in-flight commands must undo, not commit
            if expected_version is not None and row.version != expected_version:
                raise VersionMismatchError(row.version)
            if generation is not None and (row.generation or "") != generation:
                raise GenerationMovedError(case_id)  # a reset came first: what the command wrote is gone
            new_version = row.version + 1
            stmt = update(table(CaseRow)).where(_cases.id == case_id, _cases.version == row.version)
            values: dict[str, Any] = {"version": new_version, "updated_at": utcnow()}
            if status is not None:
                values["status"] = status
            if reset_to is not None:
                values["generation"] = reset_to
            if record is not None:
                values["record_entries"] = row.record_entries + 1  # the row is locked: no other writer
            if affected(session.execute(stmt.values(**values))) != 1:
                # Another process bumped it between our read and write.
                current = session.scalar(select(CaseRow.version).where(CaseRow.id == case_id))
                raise VersionMismatchError(current or 0)
            if record is not None:
                entry = append_entry(session, case_id, record, sealed[0], utcnow())
                if record.kind == INTERROGATION:
                    step_forward(session, row, entry, steps)
            found = extra(session) if extra is not None else None
            append_decisions(session, case_id, decisions, utcnow())
            appended = append_events(session, case_id, [*events, *(found or ())], new_version)
            # The case as this transaction leaves it, from the row read under its lock and what it changed.
            changed = replace(
                case_record(row),
                version=new_version,
                status=row.status if status is None else status,
                generation=(row.generation or "") if reset_to is None else reset_to,
            )
            return changed, appended

        try:
            case, committed = await self.runner.run(work, before=seal)
        except BaseException:
            await destroy_unstored(grant, [body.item for body in sealed if body.item])
            raise
        self.runner.notify(committed)
        return case

    async def begin_erase(self, case_id: str) -> bool:
        """Mark the case as being erased, so no command can commit into it any more. False if unknown."""

        def work(session: Session) -> bool:
            stmt = update(CaseRow).where(CaseRow.id == case_id).values(status=ERASING, updated_at=utcnow())
            return affected(session.execute(stmt)) == 1

        return await self.runner.run(work)

    async def delete_case(self, case_id: str, *, tombstone: bool = True) -> None:
        """Erase every ledger row of a case and (by default) leave one content-free tombstone event, so live
        streams of the case learn that it is gone."""

        def work(session: Session) -> EventRecord | None:
            session.execute(delete(EventRow).where(EventRow.case_id == case_id))
            session.execute(delete(PublicationRow).where(PublicationRow.case_id == case_id))
            forget_entries(session, case_id)
            forget_knowledge(session, case_id)
            forget_findings(session, case_id)
            session.execute(delete(CleanupTaskRow).where(CleanupTaskRow.case_id == case_id))
            session.execute(delete(CaseRow).where(CaseRow.id == case_id))
            if not tombstone:
                return None
            return append_event(session, case_id, PendingEvent(EventType.CASE_ERASED, {}), 0)

        erased = await self.runner.run(work)
        if not await asyncio.to_thread(checkpoint_wal, self.runner.engine):
            log.warning("the ledger WAL could not be truncated after an erase; a later checkpoint will")
        self.runner.notify([erased] if erased else [])

    async def erase_card(
        self,
        case_id: str,
        card_id: str,
        space: str,
        listed_copy_ids: Sequence[str],
        expected_version: int | None = None,
        withdrawn: list[FindingRecord] | None = None,
        generation: str | None = None,
        *,
        grant: Grant,
    ) -> list[CleanupTask]:
        """One private card is erased, with the case's version and a `card.erased` event: its publication
        row becomes a tombstone (no publish can reserve the card again, and a pending attempt can no longer
        mark it ready), and every record entry derived from it or from one of its board copies is marked
        (and loses its text). Findings it supported are re-checked by leave-one-out in the same transaction
        (the pseudonyms through `grant`); those withdrawn are appended to `withdrawn`. The maintained snapshot
        state is folded again on its next read when an entry lost its text.

        Returns the cleanup tasks written in the same transaction, which the caller carries out at once (a
        crash leaves them to the background loop): the card and every board copy (those listed, and the one
        the row names: a publish may have marked it ready after the listing), each with its keys, the keys of
        every text dropped, and the board cards of withdrawn findings."""
        copy_ids = list(dict.fromkeys(listed_copy_ids))
        tasks: list[CleanupTask] = []

        def extra(session: Session) -> list[PendingEvent]:
            named = entomb_publication(session, case_id, card_id, space)
            if named is not None and named not in copy_ids:
                copy_ids.append(named)
            marked, texts = 0, list[str]()
            for erased in (card_id, *copy_ids):
                count, items = redact_card(session, case_id, erased)
                marked, texts = marked + count, texts + items
            gone = withdraw_unsupported(session, case_id, [card_id], grant, texts)  # entries quoting it lose text
            if marked or gone:
                fold_again(session, case_id)
            if withdrawn is not None:
                withdrawn.extend(gone)
            intents = [
                CleanupIntent(space, card_id, "card_erased"),
                *(CleanupIntent(BOARD, copy, "card_erased") for copy in copy_ids),
                *(CleanupIntent(BOARD, f.public_card_id, "finding_withdrawn") for f in gone if f.public_card_id),
                *(CleanupIntent(RECORD, "", "card_erased", item) for item in texts),
            ]
            tasks.extend(task_of(row) for row in add_intents(session, case_id, intents))
            payload = {"space": space, "card_id": card_id, "board_card_ids": list(copy_ids)}
            return [PendingEvent(EventType.CARD_ERASED, payload), *withdrawn_events(gone)]

        await self.apply_change(case_id, [], expected_version, extra=extra, generation=generation)
        return tasks


def _forget_case_state(session: Session, case_id: str) -> None:
    """Publications, the case record and its maintained state: what a reset returns to nothing (their texts'
    keys go with the old generation's record key, in the vault)."""
    session.execute(delete(PublicationRow).where(PublicationRow.case_id == case_id))
    forget_entries(session, case_id)
    session.execute(update(CaseRow).where(CaseRow.id == case_id).values(record_entries=0))
    forget_knowledge(session, case_id)
    forget_findings(session, case_id)


async def destroy_unstored(grant: Grant | None, items: Sequence[str]) -> None:
    """Keys sealed for texts a failed transaction never stored: destroyed now (best effort; the orphan sweep
    destroys what this misses)."""
    if grant is None or not items:
        return
    try:
        await asyncio.to_thread(grant.destroy, RECORD, items)
    except Exception as exc:
        log.warning("could not destroy %d unstored key(s) (%s): the orphan sweep will", len(items), type(exc).__name__)
