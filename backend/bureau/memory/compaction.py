"""Compaction: seekdb asked to clear away deleted rows once this process has deleted enough of them.

seekdb keeps a deleted row as a delete marker until a major compaction rewrites the data, and a read of a
space steps over every marker left in it. Each question writes a session record into the role's space and the
retention deletes the oldest (game/interrogation.py), so a role's space gathers one marker per question: after
2 000 questions the statement listing that space took 2.42 ms instead of 0.45, and 0.70 after a major
compaction of 15 s (`bench/delete_markers.py`, docs/performance.md "Case growth").

seekdb compacts on its own once a day; a case that runs all day should not wait for the night. After
`BUREAU_STORE_COMPACT_AFTER_DELETES` deletes (0: never) the maintenance loop asks for one, unless one is
running. The compaction runs in seekdb's background threads; reads and writes go on meanwhile.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

log = logging.getLogger("bureau.memory")


class CompactingStore(Protocol):
    """What compaction needs of the store (memory/seekdb_search.py's statements)."""

    def compacting(self) -> bool: ...

    def start_major_compaction(self) -> None: ...


class Compaction:
    """Counts this process's deletes (on the memory worker) and asks for a major compaction when due."""

    def __init__(self, after_deletes: int) -> None:
        self.after_deletes = after_deletes
        self._deleted = 0
        self._lock = threading.Lock()  # the worker counts, the event loop reads

    def deleted(self, rows: int) -> None:
        with self._lock:
            self._deleted += rows

    @property
    def due(self) -> bool:
        with self._lock:
            return self.after_deletes > 0 and self._deleted >= self.after_deletes

    def request(self, store: CompactingStore) -> bool:
        """On the memory worker: start a major compaction unless one is running. True when one was started.
        A store that refuses (a server user without the privilege) is asked again after as many deletes."""
        if not self.due:
            return False
        try:
            if store.compacting():
                return False  # asked again at the next maintenance round
            with self._lock:
                deleted, self._deleted = self._deleted, 0
            store.start_major_compaction()
        except Exception as exc:
            with self._lock:
                self._deleted = 0
            log.warning("the store refused a compaction: %s", type(exc).__name__)
            return False
        log.info("store compaction started after %d deleted rows", deleted)
        return True
