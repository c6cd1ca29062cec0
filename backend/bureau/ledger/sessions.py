"""Operator and stage sessions: only SHA-256 hashes of the session and CSRF tokens are stored."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, bindparam, delete, select, update
from sqlalchemy.orm import Session

from bureau.ledger.models import SessionRow, table
from bureau.ledger.transactions import Repository, aware, utcnow

ACTIVE_CHECK_BATCH = 500  # session hashes per IN (...) list
_sessions = table(SessionRow).c
# Every request of a signed-in screen reads its session: one statement, built once.
SESSION_BY_TOKEN = select(
    _sessions.token_hash,
    _sessions.csrf_hash,
    _sessions.audience,
    _sessions.credential_tag,
    _sessions.expires_at,
    _sessions.revoked_at,
).where(_sessions.token_hash == bindparam("token_hash"))


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


class SessionRepository(Repository):
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

        await self.runner.run(work)

    async def get_session(self, token_hash: str) -> SessionRecord | None:
        def work(connection: Connection) -> SessionRecord | None:
            row = connection.execute(SESSION_BY_TOKEN, {"token_hash": token_hash}).first()
            if row is None:
                return None
            return SessionRecord(
                row.token_hash,
                row.csrf_hash,
                row.audience,
                row.credential_tag,
                aware(row.expires_at),
                row.revoked_at is not None,
            )

        return await self.runner.read_rows(work)

    async def active_sessions(self, token_hashes: Collection[str]) -> set[str]:
        """Which of these sessions are still signed in (not revoked, not expired): one read for many."""
        wanted = list(token_hashes)

        def work(session: Session) -> set[str]:
            active: set[str] = set()
            for start in range(0, len(wanted), ACTIVE_CHECK_BATCH):
                stmt = select(SessionRow.token_hash).where(
                    SessionRow.token_hash.in_(wanted[start : start + ACTIVE_CHECK_BATCH]),
                    SessionRow.revoked_at.is_(None),
                    SessionRow.expires_at > utcnow(),
                )
                active.update(session.scalars(stmt))
            return active

        return await self.runner.read(work)

    async def purge_expired_sessions(self) -> None:
        await self.runner.run(lambda s: s.execute(delete(SessionRow).where(SessionRow.expires_at <= utcnow())))

    async def revoke_session(self, token_hash: str) -> None:
        await self.runner.run(
            lambda s: s.execute(
                update(SessionRow).where(SessionRow.token_hash == token_hash).values(revoked_at=utcnow())
            )
        )
