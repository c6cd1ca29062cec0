"""The heartbeat sign-in checks of many live streams, answered by one ledger read.

At each heartbeat a stream checks that its session is still signed in, so a sign-out or an expiry ends it.
The streams of a case get their frames together, so their heartbeats come due together: 500 screens made
500 ledger reads within the same few milliseconds, each a trip through the thread pool, queued in front of
the read that delivers the next event. Checks asked for within `window_s` of the first of them now share
one read; each waits at most that long more.
"""

from __future__ import annotations

import asyncio

from bureau.ledger.repository import LedgerError, SessionRepository

WINDOW_S = 0.05


class SessionChecks:
    def __init__(self, sessions: SessionRepository, window_s: float = WINDOW_S) -> None:
        self._sessions = sessions
        self._window_s = window_s
        self._due: dict[str, asyncio.Future[bool | Exception]] | None = None  # the batch being gathered
        self._reads: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks

    async def signed_in(self, token_hash: str) -> bool:
        """Whether the session is signed in now. Raises LedgerError when the ledger cannot answer."""
        loop = asyncio.get_running_loop()
        if self._due is None:
            self._due = {}
            loop.call_later(self._window_s, self._read_due)
        answer = self._due.get(token_hash)
        if answer is None:
            answer = self._due[token_hash] = loop.create_future()
        result = await asyncio.shield(answer)  # a stream that leaves meanwhile must not cancel the others'
        if isinstance(result, LedgerError):
            raise LedgerError(str(result), result.fault)
        if isinstance(result, Exception):  # each waiter raises its own error, as its own read would have
            raise RuntimeError("the session check failed") from result
        return result

    def _read_due(self) -> None:
        due, self._due = self._due or {}, None
        task = asyncio.ensure_future(self._answer(due))
        self._reads.add(task)
        task.add_done_callback(self._reads.discard)

    async def _answer(self, due: dict[str, asyncio.Future[bool | Exception]]) -> None:
        try:
            active = await self._sessions.active_sessions(due)
        except Exception as exc:  # any failure reaches every waiter: none may wait for ever
            for answer in due.values():
                answer.set_result(exc)  # a result, not an exception: nobody may be left to retrieve it
            return
        for token_hash, answer in due.items():
            answer.set_result(token_hash in active)
