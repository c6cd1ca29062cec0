"""Live events: per-case feeds read once from the ledger and fanned out to every SSE stream of the case.

Subscribers never poll the database on a timer. A commit in this process wakes the streams of its case at
once; one watcher per process (not per connection) notices events committed by other processes sharing the
ledger (pushed by LISTEN/NOTIFY on PostgreSQL, polled on SQLite) and wakes every feed.
A wake-up costs one ledger read per case, not one per stream: the first stream of the case that runs reads
`events after <feed head>` for all of them, and each event is projected once per audience. The ledger stays
the source of truth and the order: a stream's cursor only moves through ids the ledger returned in order, so
delivery is ordered and exactly-once across reconnects.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

from bureau.api.delivery import project_event
from bureau.ledger.notifications import CommitListener
from bureau.ledger.repository import EventRecord, EventRepository
from bureau.scope.audience import Audience
from bureau.scope.vocabulary import EventType

log = logging.getLogger("bureau.events")
RETRY_MS = 2000
FALLBACK_POLL_S = 2.0  # with database notifications: only a safety net
FEED_READ_BATCH = 500  # events per ledger read
FEED_KEEP = 1000  # recent events a feed keeps; a stream further behind reads the ledger by itself


def format_frame(event: EventRecord, data: dict) -> str:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"id: {event.id}\nevent: {event.type}\ndata: {body}\n\n"


def render(event: EventRecord, audience: Audience) -> str | None:
    """The SSE frame `audience` may receive of `event`, or None (nothing is sent)."""
    data = project_event(audience, event.type, event.payload)
    return None if data is None else format_frame(event, data)


class _Entry:
    """One event of a feed with its frame per audience, rendered the first time a stream asks."""

    __slots__ = ("event", "frames")

    def __init__(self, event: EventRecord) -> None:
        self.event = event
        self.frames: dict[Audience, str | None] = {}

    def frame(self, audience: Audience) -> str | None:
        if audience not in self.frames:
            self.frames[audience] = render(self.event, audience)
        return self.frames[audience]


class CaseFeed:
    """The recent events of one case, shared by all of its live streams.

    Invariant: every event of the case with `floor < id <= head` is in `_entries`, in id order. A wake-up
    makes the next reader fetch `events after head` once; wake-ups that arrive while a read is running make
    another read due, and a stream that finds a read running waits for it, so none is missed.
    """

    def __init__(self, events: EventRepository, case_id: str, start: int) -> None:
        self._events = events
        self.case_id = case_id
        self.floor = self.head = start
        self._ids: list[int] = []
        self._entries: list[_Entry] = []
        self._wakes = 1  # the first read is due at once
        self._read_wakes = 0  # wake-ups that a finished (or running) read covers
        self._reading: asyncio.Event | None = None  # set when the read in flight ends; None while none runs
        self._wakeup = asyncio.Event()
        self.streams = 0

    def token(self) -> asyncio.Event:
        """Take before reading, then wait on it: no wake-up can slip in between."""
        return self._wakeup

    def wake(self) -> None:
        self._wakes += 1
        fired, self._wakeup = self._wakeup, asyncio.Event()
        fired.set()

    async def after(self, cursor: int, audience: Audience) -> list[tuple[EventRecord, str | None]]:
        """The events after `cursor` with their frames for `audience`, oldest first."""
        if cursor < self.floor:  # further back than the feed keeps (a resume): this stream reads by itself
            return [(e, render(e, audience)) for e in await self._events.events_after(self.case_id, cursor)]
        await self._catch_up()
        start = bisect.bisect_right(self._ids, cursor)
        return [(entry.event, entry.frame(audience)) for entry in self._entries[start:]]

    async def _catch_up(self) -> None:
        """Return once a read that began after this stream's last wake-up has finished. Every stream that
        finds a read running waits for that read, and all of them are woken together when it ends: one round
        of the event loop for the whole case, not a hand-over from one stream to the next."""
        while (running := self._reading) is not None:  # it may be the read covering this stream's wake-up
            await running.wait()  # then look again: it may have failed, or a wake-up came during it
        if self._read_wakes >= self._wakes:
            return
        self._reading = done = asyncio.Event()
        covered = self._read_wakes
        self._read_wakes = self._wakes  # taken before the read: later wake-ups make another read due
        try:
            while True:
                batch = await self._events.events_after(self.case_id, self.head, limit=FEED_READ_BATCH)
                self._append(batch)
                if len(batch) < FEED_READ_BATCH:
                    return
        except BaseException:
            self._read_wakes = covered  # a stream that waited for this read tries again
            raise
        finally:
            self._reading = None
            done.set()

    def _append(self, batch: list[EventRecord]) -> None:
        for event in batch:
            self._ids.append(event.id)
            self._entries.append(_Entry(event))
        if batch:
            self.head = batch[-1].id
        if len(self._ids) > 2 * FEED_KEEP:  # trimmed in chunks, so appends stay cheap
            self.floor = self._ids[-FEED_KEEP - 1]
            del self._ids[:-FEED_KEEP], self._entries[:-FEED_KEEP]


class EventHub:
    def __init__(self, events: EventRepository, cross_process_interval_s: float = 0.25) -> None:
        self._events = events
        self._interval = cross_process_interval_s
        self._feeds: dict[str, CaseFeed] = {}
        self._latest_seen = 0
        self.closing = False

    @contextlib.contextmanager
    def feed(self, case_id: str, cursor: int) -> Iterator[CaseFeed]:
        """The case's feed for one stream's lifetime; the last stream to leave drops it."""
        feed = self._feeds.get(case_id)
        if feed is None:
            # Never past the newest event seen: a cursor from the future would leave every other stream
            # of the case reading the ledger by itself.
            feed = self._feeds[case_id] = CaseFeed(self._events, case_id, min(cursor, self._latest_seen))
        feed.streams += 1
        try:
            yield feed
        finally:
            feed.streams -= 1
            if feed.streams == 0 and self._feeds.get(case_id) is feed:
                del self._feeds[case_id]

    def open_feed(self, case_id: str) -> CaseFeed | None:
        """The case's feed while a stream holds it, else None. A test seam: tests read how far a feed has moved
        on, and see that the last stream to leave dropped it."""
        return self._feeds.get(case_id)

    def notify(self, events: list[EventRecord]) -> None:
        """Committed in this process: wake the streams of those cases."""
        if not events:
            return
        self._latest_seen = max(self._latest_seen, max(e.id for e in events))
        for case_id in {e.case_id for e in events}:
            if (feed := self._feeds.get(case_id)) is not None:
                feed.wake()

    def _wake_all(self) -> None:
        for feed in list(self._feeds.values()):
            feed.wake()

    async def wait(self, token: asyncio.Event, timeout_s: float) -> bool:
        try:
            async with asyncio.timeout(timeout_s):  # no task per wait (wait_for makes one): 500 streams wake at once
                await token.wait()
            return True
        except TimeoutError:
            return False

    async def watch_other_processes(self) -> None:
        """One loop per process: wake subscribers when another process has committed events. On PostgreSQL
        the database pushes a notification at every commit of any instance, and this poll slows down to a
        safety net; on SQLite (one host) it polls `max(id)` every 0.25 s."""
        loop = asyncio.get_running_loop()
        listener = self._events.commit_listener()
        if listener is not None:
            listener.start(lambda: loop.call_soon_threadsafe(self._wake_all))
        try:
            await self._poll(listener)
        finally:
            if listener is not None:
                await asyncio.to_thread(listener.stop)

    async def _poll(self, listener: CommitListener | None) -> None:
        with contextlib.suppress(Exception):
            self._latest_seen = await self._events.latest_event_id()
        while not self.closing:
            pushed = listener is not None and listener.connected
            await asyncio.sleep(FALLBACK_POLL_S if pushed else self._interval)
            try:
                latest = await self._events.latest_event_id()
            except Exception:
                log.warning("event watcher could not read the ledger; retrying")
                continue
            if latest > self._latest_seen:
                self._latest_seen = latest
                self._wake_all()

    def close(self) -> None:
        self.closing = True
        self._wake_all()


async def event_stream(
    hub: EventHub,
    case_id: str,
    audience: Audience,
    after: int,
    heartbeat_s: float,
    is_disconnected: Callable[[], Awaitable[bool]],
) -> AsyncIterator[str]:
    yield f"retry: {RETRY_MS}\n\n"
    cursor = after
    loop = asyncio.get_running_loop()
    # A deadline, not a per-wait timeout: a quiet stream on a busy server must still get its heartbeat
    # (and its disconnect check) on time.
    next_ping = loop.time() + heartbeat_s
    with hub.feed(case_id, cursor) as feed:
        while not hub.closing:
            token = feed.token()
            batch = await feed.after(cursor, audience)
            frames: list[str] = []
            erased = False
            for event, frame in batch:
                cursor = event.id
                if frame is not None:
                    frames.append(frame)
                if erased := event.type == EventType.CASE_ERASED:
                    break
            if frames:  # one write for the whole batch (a command commits several events at once)
                yield "".join(frames)
                next_ping = loop.time() + heartbeat_s
            if erased:
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
