"""Live events: an in-process wake-up broadcast plus SSE streams that read the ledger by cursor.

Subscribers never poll the database on a timer. A commit in this process wakes them at once; one
watcher per process (not per connection) notices events committed by other processes sharing the ledger
(pushed by LISTEN/NOTIFY on PostgreSQL, polled on SQLite).
Each stream reads `events after <its cursor>` from the ledger, so delivery is ordered and exactly-once
across reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from bureau.api.delivery import project_event
from bureau.ledger.notifications import CommitListener
from bureau.ledger.repository import EventRecord, Ledger
from bureau.scope.audience import Audience
from bureau.scope.vocabulary import EventType

log = logging.getLogger("bureau.events")
RETRY_MS = 2000


FALLBACK_POLL_S = 2.0  # with database notifications: only a safety net


class EventHub:
    def __init__(self, ledger: Ledger, cross_process_interval_s: float = 0.25) -> None:
        self._ledger = ledger
        self._interval = cross_process_interval_s
        self._wakeup = asyncio.Event()
        self._latest_seen = 0
        self.closing = False

    def token(self) -> asyncio.Event:
        """Take before reading the ledger, then wait on it: no wake-up can slip in between."""
        return self._wakeup

    def notify(self, events: list[EventRecord]) -> None:
        if events:
            self._latest_seen = max(self._latest_seen, max(e.id for e in events))
        self._wake()

    def _wake(self) -> None:
        fired, self._wakeup = self._wakeup, asyncio.Event()
        fired.set()

    async def wait(self, token: asyncio.Event, timeout_s: float) -> bool:
        try:
            await asyncio.wait_for(token.wait(), timeout_s)
            return True
        except TimeoutError:
            return False

    async def watch_other_processes(self) -> None:
        """One loop per process: wake subscribers when another process has committed events. On PostgreSQL
        the database pushes a notification at every commit of any instance, and this poll slows down to a
        safety net; on SQLite (one host) it polls `max(id)` every 0.25 s."""
        loop = asyncio.get_running_loop()
        listener = self._ledger.commit_listener()
        if listener is not None:
            listener.start(lambda: loop.call_soon_threadsafe(self._wake))
        try:
            await self._poll(listener)
        finally:
            if listener is not None:
                await asyncio.to_thread(listener.stop)

    async def _poll(self, listener: CommitListener | None) -> None:
        with contextlib.suppress(Exception):
            self._latest_seen = await self._ledger.latest_event_id()
        while not self.closing:
            pushed = listener is not None and listener.connected
            await asyncio.sleep(FALLBACK_POLL_S if pushed else self._interval)
            try:
                latest = await self._ledger.latest_event_id()
            except Exception:
                log.warning("event watcher could not read the ledger; retrying")
                continue
            if latest > self._latest_seen:
                self._latest_seen = latest
                self._wake()

    def close(self) -> None:
        self.closing = True
        self._wake()


def format_frame(event: EventRecord, data: dict) -> str:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"id: {event.id}\nevent: {event.type}\ndata: {body}\n\n"


async def event_stream(
    hub: EventHub,
    ledger: Ledger,
    case_id: str,
    audience: Audience,
    after: int,
    heartbeat_s: float,
    is_disconnected: Callable[[], Awaitable[bool]],
) -> AsyncIterator[str]:
    yield f"retry: {RETRY_MS}\n\n"
    cursor = after
    loop = asyncio.get_running_loop()
    # A deadline, not a per-wait timeout: every commit anywhere wakes every stream, and a quiet stream on a
    # busy server must still get its heartbeat (and its disconnect check) on time.
    next_ping = loop.time() + heartbeat_s
    while not hub.closing:
        token = hub.token()
        batch = await ledger.events_after(case_id, cursor)
        for event in batch:
            cursor = event.id
            data = project_event(audience, event.type, event.payload)
            if data is not None:
                yield format_frame(event, data)
                next_ping = loop.time() + heartbeat_s
            if event.type == EventType.CASE_ERASED:
                return
        if batch:
            continue
        remaining = next_ping - loop.time()
        if remaining > 0 and await hub.wait(token, remaining):
            continue
        if hub.closing or await is_disconnected():
            return
        yield ": ping\n\n"
        next_ping = loop.time() + heartbeat_s
