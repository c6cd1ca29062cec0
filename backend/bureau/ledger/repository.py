"""The ledger: cases, the event outbox, the publication Saga, traces, sessions, cleanup and process slots.

State changes and the event that records them commit in one transaction. Methods are async and run the
(blocking) SQL in a worker thread so the event loop never waits on the database file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import Engine, delete, func, select, text, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from bureau.ledger.database import READ_ONLY
from bureau.ledger.models import (
    CaseRow,
    CleanupTaskRow,
    EventRow,
    ProcessSlotRow,
    PublicationRow,
    SessionRow,
    TraceRow,
)

T = TypeVar("T")
SLOT_COUNT = 1024
EVENT_APPEND_LOCK = 0x62757265  # advisory lock key ("bure") serialising event appends on PostgreSQL
# Case statuses: created as LOADING (scenario cards being written), ACTIVE, then ERASING until it is gone.
LOADING, ACTIVE, ERASING = "loading", "active", "erasing"


class LedgerError(RuntimeError):
    """The ledger database could not answer (locked, unreachable, rejected the statement)."""


class LedgerConflictError(LedgerError):
    """A unique key was already taken: the caller decides what that means (someone else owns it)."""


class CaseMissingError(LookupError):
    pass


class VersionMismatchError(RuntimeError):
    def __init__(self, current_version: int) -> None:
        super().__init__("version mismatch")
        self.current_version = current_version


def utcnow() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; everything in the ledger is UTC."""
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class CaseRecord:
    id: str
    scenario_id: str
    language: str
    status: str
    version: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class EventRecord:
    id: int
    case_id: str
    type: str
    payload: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PublicationRecord:
    case_id: str
    source_card_id: str
    role: str
    state: str
    owner: str
    lease_expires_at: datetime
    public_card_id: str | None

    def lease_live(self) -> bool:
        return self.lease_expires_at > utcnow()


@dataclass(frozen=True, slots=True)
class TraceRecord:
    case_id: str
    role: str
    trace: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class SessionRecord:
    token_hash: str
    csrf_hash: str
    audience: str
    credential_tag: str | None
    expires_at: datetime
    revoked: bool

    @property
    def active(self) -> bool:
        return not self.revoked and self.expires_at > utcnow()


@dataclass(frozen=True, slots=True)
class CleanupTask:
    id: int
    case_id: str
    space: str
    card_id: str
    reason: str
    attempts: int


def _case(row: CaseRow) -> CaseRecord:
    return CaseRecord(row.id, row.scenario_id, row.language, row.status, row.version, _aware(row.created_at))


def _event(row: EventRow) -> EventRecord:
    return EventRecord(row.id, row.case_id, row.type, dict(row.payload), _aware(row.created_at))


def _publication(row: PublicationRow) -> PublicationRecord:
    return PublicationRecord(
        row.case_id,
        row.source_card_id,
        row.role,
        row.state,
        row.owner,
        _aware(row.lease_expires_at),
        row.public_card_id,
    )


@dataclass(frozen=True, slots=True)
class PendingEvent:
    """An event to append in the same transaction as a change."""

    type: str
    payload: dict[str, Any]


class Ledger:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._read_sessions = sessionmaker(engine.execution_options(**{READ_ONLY: True}), expire_on_commit=False)
        # Called on the event loop with each batch of committed events (wakes live streams).
        self.on_commit: Callable[[list[EventRecord]], None] | None = None

    async def _run(self, fn: Callable[[Session], T], *, read_only: bool = False) -> T:
        """Run one transaction off the event loop. No SQLAlchemy error leaves the ledger."""
        sessions = self._read_sessions if read_only else self._sessions

        def work() -> T:
            try:
                with sessions.begin() as session:
                    return fn(session)
            except IntegrityError as exc:
                raise LedgerConflictError(type(exc).__name__) from exc
            except SQLAlchemyError as exc:
                raise LedgerError(type(exc).__name__) from exc

        return await asyncio.to_thread(work)

    async def _read(self, fn: Callable[[Session], T]) -> T:
        return await self._run(fn, read_only=True)

    def _notify(self, events: list[EventRecord]) -> None:
        if events and self.on_commit is not None:
            self.on_commit(events)

    @staticmethod
    def _append(session: Session, case_id: str, event: PendingEvent, version: int) -> EventRow:
        if session.get_bind().dialect.name == "postgresql":
            # Ids come from a sequence, so without this two transactions can commit them out of order, and a
            # stream whose cursor passed the later id would never see the earlier one. Held to commit.
            session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": EVENT_APPEND_LOCK})
        row = EventRow(
            case_id=case_id,
            type=event.type,
            payload={**event.payload, "case_id": case_id, "version": version},
            created_at=utcnow(),
        )
        session.add(row)
        session.flush()
        return row

    # ----- cases ---------------------------------------------------------------------------------------

    async def create_case(self, case_id: str, scenario_id: str, language: str) -> CaseRecord:
        def work(session: Session) -> CaseRecord:
            now = utcnow()
            row = CaseRow(
                id=case_id,
                scenario_id=scenario_id,
                language=language,
                status=LOADING,
                version=0,
                created_at=now,
                updated_at=now,
            )
            session.add(row)
            return _case(row)

        return await self._run(work)

    async def get_case(self, case_id: str) -> CaseRecord | None:
        def work(session: Session) -> CaseRecord | None:
            row = session.get(CaseRow, case_id)
            return _case(row) if row else None

        return await self._read(work)

    async def list_cases(self) -> list[CaseRecord]:
        return await self._read(lambda s: [_case(r) for r in s.scalars(select(CaseRow).order_by(CaseRow.id))])

    async def change_case(
        self,
        case_id: str,
        events: Sequence[PendingEvent],
        *,
        expected_version: int | None = None,
        status: str | None = None,
        trace: TraceRecord | None = None,
        forget_state: bool = False,
    ) -> CaseRecord:
        """Bump the case version and append its events in one transaction. Optionally store the last trace,
        or forget publications and the trace (a reset)."""
        extra = (lambda session: _forget_case_state(session, case_id)) if forget_state else None
        return await self._change(case_id, events, expected_version, status, trace, extra)

    async def _change(
        self,
        case_id: str,
        events: Sequence[PendingEvent],
        expected_version: int | None = None,
        status: str | None = None,
        trace: TraceRecord | None = None,
        extra: Callable[[Session], None] | None = None,
    ) -> CaseRecord:
        def work(session: Session) -> tuple[CaseRecord, list[EventRecord]]:
            row = session.get(CaseRow, case_id, with_for_update=True)
            if row is None or row.status == ERASING:
                raise CaseMissingError(case_id)  # an erase has begun: in-flight commands must undo, not commit
            if expected_version is not None and row.version != expected_version:
                raise VersionMismatchError(row.version)
            new_version = row.version + 1
            stmt = update(CaseRow).where(CaseRow.id == case_id, CaseRow.version == row.version)
            values: dict[str, Any] = {"version": new_version, "updated_at": utcnow()}
            if status is not None:
                values["status"] = status
            if session.execute(stmt.values(**values)).rowcount != 1:
                # Another process bumped it between our read and write.
                current = session.scalar(select(CaseRow.version).where(CaseRow.id == case_id))
                raise VersionMismatchError(current or 0)
            if trace is not None:
                session.merge(
                    TraceRow(
                        case_id=case_id,
                        role=trace.role,
                        trace=trace.trace,
                        created_at=trace.created_at,
                    )
                )
            if extra is not None:
                extra(session)
            rows = [self._append(session, case_id, item, new_version) for item in events]
            session.flush()
            session.refresh(row)
            return _case(row), [_event(r) for r in rows]

        case, committed = await self._run(work)
        self._notify(committed)
        return case

    async def begin_erase(self, case_id: str) -> bool:
        """Mark the case as being erased, so no command can commit into it any more. False if unknown."""

        def work(session: Session) -> bool:
            stmt = update(CaseRow).where(CaseRow.id == case_id).values(status=ERASING, updated_at=utcnow())
            return session.execute(stmt).rowcount == 1

        return await self._run(work)

    async def delete_case(self, case_id: str, *, tombstone: bool = True) -> None:
        """Erase every ledger row of a case and (by default) leave one content-free tombstone event, so live
        streams of the case learn that it is gone."""

        def work(session: Session) -> EventRecord | None:
            session.execute(delete(EventRow).where(EventRow.case_id == case_id))
            session.execute(delete(PublicationRow).where(PublicationRow.case_id == case_id))
            session.execute(delete(TraceRow).where(TraceRow.case_id == case_id))
            session.execute(delete(CleanupTaskRow).where(CleanupTaskRow.case_id == case_id))
            session.execute(delete(CaseRow).where(CaseRow.id == case_id))
            if not tombstone:
                return None
            return _event(self._append(session, case_id, PendingEvent("case.erased", {}), 0))

        erased = await self._run(work)
        self._notify([erased] if erased else [])

    # ----- events --------------------------------------------------------------------------------------

    async def events_after(self, case_id: str, after_id: int, limit: int = 500) -> list[EventRecord]:
        def work(session: Session) -> list[EventRecord]:
            stmt = (
                select(EventRow)
                .where(EventRow.case_id == case_id, EventRow.id > after_id)
                .order_by(EventRow.id)
                .limit(limit)
            )
            return [_event(r) for r in session.scalars(stmt)]

        return await self._read(work)

    async def latest_event_id(self) -> int:
        return await self._read(lambda s: int(s.scalar(select(func.max(EventRow.id))) or 0))

    # ----- traces --------------------------------------------------------------------------------------

    async def get_trace(self, case_id: str) -> TraceRecord | None:
        def work(session: Session) -> TraceRecord | None:
            row = session.get(TraceRow, case_id)
            if row is None:
                return None
            return TraceRecord(row.case_id, row.role, dict(row.trace), _aware(row.created_at))

        return await self._read(work)

    # ----- publication Saga ----------------------------------------------------------------------------

    async def reserve_publication(
        self, case_id: str, source_card_id: str, role: str, owner: str, lease_s: float
    ) -> tuple[bool, PublicationRecord]:
        """INSERT the reservation. (True, row) if we own it; (False, existing) on a unique-key conflict."""

        def insert(session: Session) -> tuple[PublicationRecord, EventRecord]:
            now = utcnow()
            case = session.get(CaseRow, case_id)
            if case is None or case.status != ACTIVE:
                raise CaseMissingError(case_id)
            version = case.version
            row = PublicationRow(
                case_id=case_id,
                source_card_id=source_card_id,
                role=role,
                state="pending",
                owner=owner,
                lease_expires_at=now + timedelta(seconds=lease_s),
                created_at=now,
                updated_at=now,
            )
            session.add(row)
            session.flush()
            started = PendingEvent("publication.started", {"role": role, "source_card_id": source_card_id})
            return _publication(row), _event(self._append(session, case_id, started, version))

        for _ in range(2):  # a conflicting row deleted before we could read it: insert once more
            try:
                record, started = await self._run(insert)
            except LedgerConflictError:
                existing = await self.get_publication(case_id, source_card_id)
                if existing is not None:
                    return False, existing
                continue
            self._notify([started])
            return True, record
        raise LedgerError("publication reservation kept conflicting")

    async def get_publication(self, case_id: str, source_card_id: str) -> PublicationRecord | None:
        def work(session: Session) -> PublicationRecord | None:
            row = session.scalar(
                select(PublicationRow).where(
                    PublicationRow.case_id == case_id, PublicationRow.source_card_id == source_card_id
                )
            )
            return _publication(row) if row else None

        return await self._read(work)

    async def take_over_expired(self, case_id: str, source_card_id: str, owner: str, lease_s: float) -> bool:
        """Claim a pending reservation whose lease ran out (its owner crashed or stalled)."""

        def work(session: Session) -> bool:
            now = utcnow()
            stmt = (
                update(PublicationRow)
                .where(
                    PublicationRow.case_id == case_id,
                    PublicationRow.source_card_id == source_card_id,
                    PublicationRow.state == "pending",
                    PublicationRow.lease_expires_at <= now,
                )
                .values(owner=owner, lease_expires_at=now + timedelta(seconds=lease_s), updated_at=now)
            )
            return session.execute(stmt).rowcount == 1

        return await self._run(work)

    async def complete_publication(
        self, case_id: str, source_card_id: str, owner: str, public_card_id: str, events: list[PendingEvent]
    ) -> CaseRecord | None:
        """Mark ready + bump the case + append the events, only if we still own the lease. None if we lost it."""

        def mark(session: Session) -> None:
            stmt = (
                update(PublicationRow)
                .where(
                    PublicationRow.case_id == case_id,
                    PublicationRow.source_card_id == source_card_id,
                    PublicationRow.owner == owner,
                    PublicationRow.state == "pending",
                )
                .values(state="ready", public_card_id=public_card_id, updated_at=utcnow())
            )
            if session.execute(stmt).rowcount != 1:
                raise _LostLease

        try:
            return await self._change(case_id, events, extra=mark)
        except _LostLease:
            return None

    async def reopen_lost_copy(
        self, case_id: str, source_card_id: str, lost_card_id: str, owner: str, lease_s: float
    ) -> bool:
        """A `ready` row whose board copy is gone (deleted outside the Saga): take it back to pending, owned."""

        def work(session: Session) -> bool:
            now = utcnow()
            stmt = (
                update(PublicationRow)
                .where(
                    PublicationRow.case_id == case_id,
                    PublicationRow.source_card_id == source_card_id,
                    PublicationRow.state == "ready",
                    PublicationRow.public_card_id == lost_card_id,
                )
                .values(
                    state="pending",
                    owner=owner,
                    public_card_id=None,
                    lease_expires_at=now + timedelta(seconds=lease_s),
                    updated_at=now,
                )
            )
            return session.execute(stmt).rowcount == 1

        return await self._run(work)

    async def is_published_copy(self, case_id: str, card_id: str) -> bool:
        """Whether a ready publication points at this board card (then no cleanup may delete it)."""

        def work(session: Session) -> bool:
            stmt = select(PublicationRow.id).where(
                PublicationRow.case_id == case_id,
                PublicationRow.state == "ready",
                PublicationRow.public_card_id == card_id,
            )
            return session.scalar(stmt) is not None

        return await self._read(work)

    async def release_publication(self, case_id: str, source_card_id: str, owner: str) -> None:
        def work(session: Session) -> None:
            session.execute(
                delete(PublicationRow).where(
                    PublicationRow.case_id == case_id,
                    PublicationRow.source_card_id == source_card_id,
                    PublicationRow.owner == owner,
                    PublicationRow.state == "pending",
                )
            )

        await self._run(work)

    async def publications(self, case_id: str) -> list[PublicationRecord]:
        def work(session: Session) -> list[PublicationRecord]:
            stmt = select(PublicationRow).where(PublicationRow.case_id == case_id)
            return [_publication(r) for r in session.scalars(stmt)]

        return await self._read(work)

    # ----- cleanup tasks -------------------------------------------------------------------------------

    async def add_cleanup(self, case_id: str, space: str, card_id: str, reason: str) -> None:
        def work(session: Session) -> None:
            now = utcnow()
            session.add(
                CleanupTaskRow(
                    case_id=case_id,
                    space=space,
                    card_id=card_id,
                    reason=reason,
                    attempts=0,
                    next_attempt_at=now,
                    created_at=now,
                )
            )

        await self._run(work)

    async def due_cleanups(self, limit: int = 20) -> list[CleanupTask]:
        def work(session: Session) -> list[CleanupTask]:
            stmt = (
                select(CleanupTaskRow)
                .where(CleanupTaskRow.done_at.is_(None), CleanupTaskRow.next_attempt_at <= utcnow())
                .order_by(CleanupTaskRow.id)
                .limit(limit)
            )
            return [
                CleanupTask(r.id, r.case_id, r.space, r.card_id, r.reason, r.attempts) for r in session.scalars(stmt)
            ]

        return await self._read(work)

    async def finish_cleanup(self, task_id: int) -> None:
        await self._run(
            lambda s: s.execute(update(CleanupTaskRow).where(CleanupTaskRow.id == task_id).values(done_at=utcnow()))
        )

    async def retry_cleanup_later(self, task_id: int, attempts: int) -> None:
        delay = min(300.0, 2.0**attempts)
        await self._run(
            lambda s: s.execute(
                update(CleanupTaskRow)
                .where(CleanupTaskRow.id == task_id)
                .values(attempts=attempts, next_attempt_at=utcnow() + timedelta(seconds=delay))
            )
        )

    async def open_cleanups(self) -> int:
        return await self._read(
            lambda s: int(s.scalar(select(func.count()).where(CleanupTaskRow.done_at.is_(None))) or 0)
        )

    # ----- sessions ------------------------------------------------------------------------------------

    async def create_session(
        self, token_hash: str, csrf_hash: str, audience: str, credential_tag: str, ttl_s: int
    ) -> None:
        def work(session: Session) -> None:
            now = utcnow()
            session.add(
                SessionRow(
                    token_hash=token_hash,
                    csrf_hash=csrf_hash,
                    audience=audience,
                    credential_tag=credential_tag,
                    created_at=now,
                    expires_at=now + timedelta(seconds=ttl_s),
                )
            )

        await self._run(work)

    async def get_session(self, token_hash: str) -> SessionRecord | None:
        def work(session: Session) -> SessionRecord | None:
            row = session.scalar(select(SessionRow).where(SessionRow.token_hash == token_hash))
            if row is None:
                return None
            return SessionRecord(
                row.token_hash,
                row.csrf_hash,
                row.audience,
                row.credential_tag,
                _aware(row.expires_at),
                row.revoked_at is not None,
            )

        return await self._read(work)

    async def purge_expired_sessions(self) -> None:
        await self._run(lambda s: s.execute(delete(SessionRow).where(SessionRow.expires_at <= utcnow())))

    async def revoke_session(self, token_hash: str) -> None:
        await self._run(
            lambda s: s.execute(
                update(SessionRow).where(SessionRow.token_hash == token_hash).values(revoked_at=utcnow())
            )
        )

    # ----- process slots (Snowflake worker ids) --------------------------------------------------------

    async def claim_slot(self, owner: str, stale_after_s: float = 120.0, wanted: int | None = None) -> int:
        """Lease the lowest free Snowflake slot (or exactly `wanted`), so no two live processes sharing this
        ledger generate the same card ids. A `wanted` slot held by a live process raises LedgerConflictError."""

        def work(session: Session) -> int:
            now = utcnow()
            stale = now - timedelta(seconds=stale_after_s)
            taken = {
                slot: _aware(beat)
                for slot, beat in session.execute(select(ProcessSlotRow.slot, ProcessSlotRow.heartbeat_at))
            }
            for slot in range(SLOT_COUNT) if wanted is None else (wanted,):
                beat = taken.get(slot)
                if beat is None:
                    session.add(ProcessSlotRow(slot=slot, owner=owner, heartbeat_at=now))
                    session.flush()
                    return slot
                if beat < stale:
                    stmt = (
                        update(ProcessSlotRow)
                        .where(ProcessSlotRow.slot == slot, ProcessSlotRow.heartbeat_at < stale)
                        .values(owner=owner, heartbeat_at=now)
                    )
                    if session.execute(stmt).rowcount == 1:
                        return slot
            if wanted is not None:
                raise LedgerConflictError(f"worker id {wanted} is held by another live process")
            raise LedgerError("no free process slot")

        for _ in range(5):
            try:
                return await self._run(work)
            except LedgerConflictError:
                if wanted is not None:
                    raise
                continue  # another process took the same slot first
        raise LedgerError("could not claim a process slot")

    async def heartbeat_slot(self, slot: int, owner: str) -> bool:
        """Renew the lease. False means another process took the slot over: ids could now collide."""

        def work(session: Session) -> bool:
            stmt = (
                update(ProcessSlotRow)
                .where(ProcessSlotRow.slot == slot, ProcessSlotRow.owner == owner)
                .values(heartbeat_at=utcnow())
            )
            return session.execute(stmt).rowcount == 1

        return await self._run(work)

    async def release_slot(self, slot: int, owner: str) -> None:
        await self._run(
            lambda s: s.execute(
                delete(ProcessSlotRow).where(ProcessSlotRow.slot == slot, ProcessSlotRow.owner == owner)
            )
        )


class _LostLease(Exception):
    pass


def _forget_case_state(session: Session, case_id: str) -> None:
    """Publications and the last trace: what a reset returns to nothing."""
    session.execute(delete(PublicationRow).where(PublicationRow.case_id == case_id))
    session.execute(delete(TraceRow).where(TraceRow.case_id == case_id))
