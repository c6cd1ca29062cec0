"""The one transaction runner every ledger repository shares, and the errors that may leave the ledger.

Each transaction runs its (blocking) SQL in a worker thread so the event loop never waits on the database
file, and no SQLAlchemy exception escapes: a unique-key conflict becomes `LedgerConflictError`, anything
else `LedgerError`.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar, cast

from sqlalchemy import Connection, CursorResult, Engine, Result
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from bureau.ledger.database import BUSY_TIMEOUT_S, READ_ONLY
from bureau.ledger.event_records import EventRecord

T = TypeVar("T")


class LedgerFault(StrEnum):
    """Why the ledger could not answer, as far as the database says: what an operator has to fix."""

    BUSY = "busy"  # another writer held the lock past the busy timeout
    READ_ONLY = "read_only"  # the file or filesystem refuses writes (or the disk failed the write)
    FULL = "full"  # no space left
    UNAVAILABLE = "unavailable"  # anything else: unreachable, rejected the statement


class LedgerError(RuntimeError):
    """The ledger database could not answer (locked, read-only, full, unreachable, rejected the statement)."""

    def __init__(self, reason: str, fault: LedgerFault = LedgerFault.UNAVAILABLE) -> None:
        super().__init__(reason)
        self.fault = fault


class LedgerConflictError(LedgerError):
    """A unique key was already taken: the caller decides what that means (someone else owns it)."""


class CaseMissingError(LookupError):
    pass


class GenerationMovedError(RuntimeError):
    """A reset committed after the command began: what it wrote belongs to a generation that is gone."""


class VersionMismatchError(RuntimeError):
    def __init__(self, current_version: int) -> None:
        super().__init__("version mismatch")
        self.current_version = current_version


def utcnow() -> datetime:
    return datetime.now(UTC)


def aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything in the ledger is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def affected(result: Result[Any]) -> int:
    """Rows an UPDATE or DELETE changed (its result is a cursor result)."""
    return cast(CursorResult[Any], result).rowcount


def inserted_id(result: Result[Any]) -> int:
    """The primary key an INSERT of one row made."""
    key = cast(CursorResult[Any], result).inserted_primary_key
    if key is None or key[0] is None:
        raise LedgerError("the database returned no id for the row")
    return int(key[0])


# SQLite result codes (the primary code is the low byte of an extended one) and PostgreSQL SQLSTATEs.
_SQLITE_FAULTS = {5: LedgerFault.BUSY, 6: LedgerFault.BUSY, 8: LedgerFault.READ_ONLY, 13: LedgerFault.FULL}
_SQLITE_IOERR_WRITE = 778  # write() itself failed: a read-only filesystem (EROFS), an immutable file, a bad disk
_POSTGRES_FAULTS = {
    "55P03": LedgerFault.BUSY,  # lock_not_available
    "40P01": LedgerFault.BUSY,  # deadlock_detected
    "25006": LedgerFault.READ_ONLY,  # read_only_sql_transaction (a standby, or default_transaction_read_only)
    "53100": LedgerFault.FULL,  # disk_full
}


def fault_of(exc: SQLAlchemyError) -> LedgerFault:
    """Classify a database error by its driver's code, never by its message (which may quote values)."""
    driver_error = getattr(exc, "orig", None)
    code = getattr(driver_error, "sqlite_errorcode", None)
    if isinstance(code, int):
        if code == _SQLITE_IOERR_WRITE:
            return LedgerFault.READ_ONLY
        return _SQLITE_FAULTS.get(code & 0xFF, LedgerFault.UNAVAILABLE)
    return _POSTGRES_FAULTS.get(str(getattr(driver_error, "pgcode", "") or ""), LedgerFault.UNAVAILABLE)


class WriterQueue:
    """This process's SQLite writers, one at a time and in order. SQLite lets one writer in and makes the
    others poll with growing sleeps (up to 100 ms each), so in a burst a commit could wait half a second with
    the lock free (docs/performance.md, "The tail at fifty players"). Queued here, a writer holds no thread
    while it waits, and starts as soon as the one before it is done. Other processes on the same file still
    meet SQLite's busy timeout; a turn waited for longer than that timeout is LEDGER_BUSY, as a lock held
    that long by another process would be."""

    def __init__(self, engine: Engine) -> None:
        self.timeout_s = float(engine.get_execution_options().get(BUSY_TIMEOUT_S, 15.0))
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    async def run(self, work: Callable[[], T]) -> T:
        """`work` on a worker thread in this writer's turn. The turn ends when the thread does, even if the
        caller is cancelled meanwhile: a cancelled write may still be committing, and the next must wait."""
        lock = self._lock()
        try:
            async with asyncio.timeout(self.timeout_s):
                await lock.acquire()
        except TimeoutError:
            raise LedgerError("waited for the writers before it", LedgerFault.BUSY) from None
        done = asyncio.ensure_future(asyncio.to_thread(work))
        done.add_done_callback(_end_turn(lock))
        return await asyncio.shield(done)

    def _lock(self) -> asyncio.Lock:
        """One queue per event loop (a lock belongs to the loop it first waited on)."""
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock


def _end_turn(lock: asyncio.Lock) -> Callable[[asyncio.Future[Any]], None]:
    def end(done: asyncio.Future[Any]) -> None:
        lock.release()
        if not done.cancelled():
            done.exception()  # a caller cancelled meanwhile never reads it: not an unretrieved error

    return end


class TransactionRunner:
    """Owns the engine and runs one transaction at a time off the event loop. Every repository runs its
    statements here; a command that changes several aggregates runs one function of theirs in one transaction
    (the repositories' session-level helpers compose inside it: `CaseRepository.apply_change`)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._read_engine = engine.execution_options(**{READ_ONLY: True})
        self._read_sessions = sessionmaker(self._read_engine, expire_on_commit=False)
        self._writers = WriterQueue(engine) if engine.dialect.name == "sqlite" else None
        # Called on the event loop with each batch of committed events (wakes live streams).
        self.on_commit: Callable[[list[EventRecord]], None] | None = None

    async def run(
        self, fn: Callable[[Session], T], *, read_only: bool = False, before: Callable[[], object] | None = None
    ) -> T:
        """Run one transaction off the event loop. No SQLAlchemy error leaves the ledger. `before` runs first,
        outside the transaction and before the writer's turn (sealing a text: its new key goes into the vault
        before the ledger stores what it opens, and never while the ledger's write lock is held)."""
        sessions = self._read_sessions if read_only else self._sessions

        def transaction() -> T:
            try:
                with sessions.begin() as session:
                    return fn(session)
            except IntegrityError as exc:
                raise LedgerConflictError(type(exc).__name__) from exc
            except SQLAlchemyError as exc:
                raise LedgerError(type(exc).__name__, fault_of(exc)) from exc

        if before is not None:
            await asyncio.to_thread(before)
        if read_only or self._writers is None:
            return await asyncio.to_thread(transaction)
        return await self._writers.run(transaction)

    async def read(self, fn: Callable[[Session], T]) -> T:
        return await self.run(fn, read_only=True)

    async def run_transaction(self, fn: Callable[[Session], T]) -> T:
        """One write transaction of the caller's own statements, run as the ledger's own are. A test seam: the
        PostgreSQL tests hold one open (tests/unit/ledger/test_postgres_ledger.py) to show what other
        transactions see and wait for meanwhile."""
        return await self.run(fn)

    async def read_rows(self, fn: Callable[[Connection], T]) -> T:
        """A read transaction on a plain connection: for the reads every request makes (its session, its case,
        a snapshot's view, a record page), whose statements select columns and need no ORM session. The same
        transaction as `read` (one snapshot of the database), at a third of its CPU (docs/performance.md,
        "Workshop")."""

        def work() -> T:
            try:
                with self._read_engine.connect() as connection:
                    return fn(connection)
            except SQLAlchemyError as exc:
                raise LedgerError(type(exc).__name__, fault_of(exc)) from exc

        return await asyncio.to_thread(work)

    def notify(self, events: list[EventRecord]) -> None:
        """Hand committed events to the listener (live streams); called after their transaction committed."""
        if events and self.on_commit is not None:
            self.on_commit(events)


class Repository:
    """One aggregate's statements, over the runner every repository shares (so they compose in one
    transaction where a command needs it)."""

    def __init__(self, runner: TransactionRunner) -> None:
        self.runner = runner
