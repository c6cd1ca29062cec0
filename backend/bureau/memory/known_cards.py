"""Which cards of a type a space holds, oldest first, as far as this process has seen: what lets the
retention that keeps a space's newest few session records delete the rest by id, instead of reading every
record of the space on every question (docs/performance.md).

A list starts from a full read of the store. This process's writes and deletes keep it current, and so do
its searches: a session record another process wrote is noted as soon as a search here returns it, which is
exactly when it would take a search slot. Every `FULL_READ_EVERY`-th trim of a list reads the store again,
for the ones no search returned. In memory only; ids and times, never text.
"""

from __future__ import annotations

import bisect
import threading
from collections import Counter
from collections.abc import Iterable
from datetime import datetime

FULL_READ_EVERY = 20  # trims of one list between full reads (and the first trim always reads)

Key = tuple[str, str | None, str]  # (user id, agent id, memory type): one space's cards of one type
Known = tuple[datetime, int, str]  # (created at, numeric id, id): the retention's order, oldest first


class KnownCards:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # a remote store runs calls on a pool of worker threads
        self._cards: dict[Key, list[Known]] = {}
        self._trims: Counter[Key] = Counter()

    def needs_full_read(self, key: Key) -> bool:
        """Counts a trim of `key`: does it have to read the store first?"""
        with self._lock:
            self._trims[key] += 1
            return key not in self._cards or self._trims[key] % FULL_READ_EVERY == 0

    def read(self, key: Key, cards: Iterable[tuple[datetime, str]]) -> None:
        """Everything the store holds under `key`, as (created at, id)."""
        with self._lock:
            self._cards[key] = sorted({(created, int(card_id), card_id) for created, card_id in cards})

    def beyond_newest(self, key: Key, keep: int) -> list[str]:
        """The ids older than the newest `keep` (all of them when keep is 0)."""
        with self._lock:
            cards = self._cards.get(key, [])
            return [card_id for _, _, card_id in (cards[:-keep] if keep else cards)]

    def noted(self, user_id: str, agent_id: str | None, cards: Iterable[tuple[str, datetime, str]]) -> None:
        """(memory type, created at, id) of cards known to be in the store (written or found here); only lists
        already read are extended."""
        with self._lock:
            for memory_type, created, card_id in cards:
                known = self._cards.get((user_id, agent_id, memory_type))
                entry = (created, int(card_id), card_id)
                at = bisect.bisect_left(known, entry) if known is not None else 0
                if known is not None and (at == len(known) or known[at] != entry):
                    known.insert(at, entry)

    def deleted(self, user_id: str, agent_id: str | None, card_ids: Iterable[str]) -> None:
        """Cards gone from one space, or from every space of the case when `agent_id` is None."""
        gone = set(card_ids)
        with self._lock:
            for (user, agent, _), known in self._cards.items():
                if user == user_id and agent_id in (None, agent):
                    known[:] = [entry for entry in known if entry[2] not in gone]

    def clear(self) -> None:
        with self._lock:
            self._cards.clear()
            self._trims.clear()
