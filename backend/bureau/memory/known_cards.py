"""Which cards of a type a space holds, oldest first, as far as this process has seen: what lets the
retention that keeps a space's newest few session records delete the rest by id, instead of reading every
record of the space on every question (docs/performance.md).

A list starts from a full read of the store; this process's writes and deletes keep it current. Another
process's writes are not seen, so every `FULL_READ_EVERY`-th trim of a list reads the store again. In memory
only; ids, never text.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence

FULL_READ_EVERY = 20  # trims of one list between full reads (and the first trim always reads)

Key = tuple[str, str | None, str]  # (user id, agent id, memory type): one space's cards of one type


class KnownCards:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # a remote store runs calls on a pool of worker threads
        self._ids: dict[Key, list[str]] = {}
        self._trims: Counter[Key] = Counter()

    def needs_full_read(self, key: Key) -> bool:
        """Counts a trim of `key`: does it have to read the store first?"""
        with self._lock:
            self._trims[key] += 1
            return key not in self._ids or self._trims[key] % FULL_READ_EVERY == 0

    def read(self, key: Key, ids_oldest_first: Sequence[str]) -> None:
        with self._lock:
            self._ids[key] = list(dict.fromkeys(ids_oldest_first))

    def beyond_newest(self, key: Key, keep: int) -> list[str]:
        """The ids older than the newest `keep` (all of them when keep is 0)."""
        with self._lock:
            ids = self._ids.get(key, [])
            return ids[:-keep] if keep else list(ids)

    def written(self, user_id: str, agent_id: str | None, cards: Iterable[tuple[str, str]]) -> None:
        """(memory type, id) of cards just stored, newest last; only lists already read are extended."""
        with self._lock:
            for memory_type, card_id in cards:
                ids = self._ids.get((user_id, agent_id, memory_type))
                if ids is not None and card_id not in ids:
                    ids.append(card_id)

    def deleted(self, user_id: str, agent_id: str | None, card_ids: Iterable[str]) -> None:
        """Cards gone from one space, or from every space of the case when `agent_id` is None."""
        gone = set(card_ids)
        with self._lock:
            for (user, agent, _), ids in self._ids.items():
                if user == user_id and agent_id in (None, agent):
                    ids[:] = [card_id for card_id in ids if card_id not in gone]

    def clear(self) -> None:
        with self._lock:
            self._ids.clear()
            self._trims.clear()
