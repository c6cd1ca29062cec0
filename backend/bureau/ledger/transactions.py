"""The one transaction runner every ledger aggregate shares, and the errors that may leave the ledger.

Each transaction runs its (blocking) SQL in a worker thread so the event loop never waits on the database
file, and no SQLAlchemy exception escapes: a unique-key conflict becomes `LedgerConflictError`, anything
else `LedgerError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import CursorResult, Engine, Result
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from bureau.ledger.database import READ_ONLY

if TYPE_CHECKING:
    from bureau.ledger.events import EventRecord

T = TypeVar("T")


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


def aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; everything in the ledger is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def affected(result: Result[Any]) -> int:
    """Rows an UPDATE or DELETE changed (its result is a cursor result)."""
    return cast(CursorResult[Any], result).rowcount


class TransactionRunner:
    """Owns the engine and runs one transaction at a time off the event loop."""

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
