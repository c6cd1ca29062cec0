"""Heartbeat sign-in checks of many streams share one ledger read (api/session_checks.py), over a real
SQLite ledger: the answers are each session's own, and a ledger fault reaches every waiting stream."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import Engine

from bureau.api.session_checks import SessionChecks
from bureau.ledger.repository import Ledger, LedgerError
from bureau.ledger.sessions import ACTIVE_CHECK_BATCH


async def _sessions(ledger: Ledger, count: int, prefix: str, ttl_s: int = 3600) -> list[str]:
    hashes = [f"{prefix}-{i:04d}" for i in range(count)]
    for token_hash in hashes:
        await ledger.sessions.create_session(token_hash, f"csrf-{token_hash}", "stage", "tag", ttl_s)
    return hashes


async def test_active_sessions_names_only_those_neither_revoked_nor_expired(engine: Engine) -> None:
    ledger = Ledger(engine)
    active = await _sessions(ledger, ACTIVE_CHECK_BATCH + 20, "active")  # more than one IN (...) list
    [revoked] = await _sessions(ledger, 1, "revoked")
    await ledger.sessions.revoke_session(revoked)
    [expired] = await _sessions(ledger, 1, "expired", ttl_s=-1)
    asked = [*active, revoked, expired, "never-signed-in"]
    assert await ledger.sessions.active_sessions(asked) == set(active)
    assert await ledger.sessions.active_sessions([]) == set()


async def test_checks_made_together_share_one_read_and_each_gets_its_own_answer(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger = Ledger(engine)
    active = await _sessions(ledger, 300, "active")
    revoked = await _sessions(ledger, 300, "revoked")
    for token_hash in revoked:
        await ledger.sessions.revoke_session(token_hash)
    reads: list[int] = []
    real_read = ledger.sessions.active_sessions

    async def counted(token_hashes: list[str]) -> set[str]:
        reads.append(len(token_hashes))
        return await real_read(token_hashes)

    monkeypatch.setattr(ledger.sessions, "active_sessions", counted)
    checks = SessionChecks(ledger.sessions)
    asked = [*active, *revoked, *active[:10]]  # two streams of one session ask once
    leaving = asyncio.ensure_future(checks.signed_in(active[0]))  # a stream that goes away meanwhile
    answers = asyncio.gather(*(checks.signed_in(h) for h in asked))
    await asyncio.sleep(0)
    leaving.cancel()
    assert await answers == [True] * 300 + [False] * 300 + [True] * 10
    assert reads == [600]
    assert await checks.signed_in(revoked[0]) is False  # a later check is a new read
    assert len(reads) == 2


@pytest.mark.parametrize(
    ("failure", "raised"),
    [
        (LedgerError("OperationalError"), LedgerError),
        (RuntimeError("cannot schedule new futures after shutdown"), RuntimeError),  # not a ledger error either
    ],
    ids=["ledger-fault", "other-failure"],
)
async def test_a_failed_read_reaches_every_waiting_check(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, failure: Exception, raised: type[Exception]
) -> None:
    ledger = Ledger(engine)
    hashes = await _sessions(ledger, 5, type(failure).__name__)

    async def refuse(token_hashes: list[str]) -> set[str]:
        raise failure

    monkeypatch.setattr(ledger.sessions, "active_sessions", refuse)
    checks = SessionChecks(ledger.sessions)
    outcomes = await asyncio.wait_for(asyncio.gather(*(checks.signed_in(h) for h in hashes), return_exceptions=True), 5)
    assert all(type(o) is raised for o in outcomes)  # none left waiting, each with its own error
