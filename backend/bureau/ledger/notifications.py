"""Cross-instance wake-ups on PostgreSQL: LISTEN on the events channel, one connection per process.

The event log stays the source of truth: a notification only says "read your cursor again". A lost
connection is reconnected, and every (re)connect reports one wake-up, so events committed while nobody
listened are read too; the event hub's slow fallback poll covers the rest.
"""

from __future__ import annotations

import logging
import select
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine

log = logging.getLogger("bureau.ledger")
_POLL_S = 1.0  # how often the listening thread checks whether it should stop
_RECONNECT_S = 1.0


class CommitListener:
    """A daemon thread blocked in `select()` on a dedicated LISTEN connection."""

    def __init__(self, engine: Engine, channel: str) -> None:
        self._engine = engine
        self._channel = channel
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected = False

    def start(self, on_commit: Callable[[], object]) -> None:
        """`on_commit` is called from the listening thread (hand it over to the event loop yourself)."""
        self._thread = threading.Thread(target=self._run, args=(on_commit,), name="bureau-listen", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=_POLL_S * 3)

    def _run(self, on_commit: Callable[[], object]) -> None:
        while not self._stopping.is_set():
            try:
                connection = self._listen()
            except Exception as exc:
                log.warning("event notifications unavailable (%s); retrying", type(exc).__name__)
                self._stopping.wait(_RECONNECT_S)
                continue
            try:
                self.connected = True
                on_commit()  # anything committed while we were not listening
                self._receive(connection, on_commit)
            except Exception as exc:
                log.warning("event notification connection lost (%s); reconnecting", type(exc).__name__)
            finally:
                self.connected = False
                connection.close()

    def _listen(self) -> Any:
        pooled = self._engine.raw_connection()
        connection: Any = pooled.dbapi_connection  # psycopg2's, whose cursor is a context manager
        pooled.detach()  # ours for the life of the thread, never handed back to the pool
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f'LISTEN "{self._channel}"')
        return connection

    def _receive(self, connection: Any, on_commit: Callable[[], object]) -> None:
        while not self._stopping.is_set():
            if not select.select([connection], [], [], _POLL_S)[0]:
                continue
            connection.poll()
            if connection.notifies:
                connection.notifies.clear()
                on_commit()  # one wake-up per batch: every stream re-reads its own cursor
