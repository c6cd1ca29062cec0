"""Which cards of a type a space holds, oldest first, as far as this process has seen: what lets the
retention that keeps a space's newest few session records delete the rest by id, instead of reading every
record of the space on every question (docs/performance.md).

A list starts from a full read of the store. This process's writes and deletes keep it current, and so do
its searches: a session record another process wrote is noted as soon as a search here returns it, which is
exactly when it would take a search slot. Every `FULL_READ_EVERY`-th trim of a list reads the store again,
for the ones no search returned. In memory only; ids (the card's, and its item's, whose key a trim destroys)
and times, never text.
"""

from __future__ import annotations

import bisect
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable
from datetime import datetime

FULL_READ_EVERY = 20  # trims of one list between full reads (and the first trim always reads)
CASE_CAPACITY = 4096  # cases whose lists are kept; a case dropped for a newer one just reads the store again

Key = tuple[str, str | None, str]  # (user id, agent id, memory type): one space's cards of one type
Known = tuple[datetime, int, str, str]  # (created at, numeric id, id, item): the retention's order, oldest first


class KnownCards:
    def __init__(self) -> None:
        self._lock = threading.Lock()  # a remote store runs calls on a pool of worker threads
        # Per case (its store user id), per (space's agent id, memory type): the cards, and trims so far.
        self._cards: OrderedDict[str, dict[tuple[str | None, str], list[Known]]] = OrderedDict()
        self._trims: OrderedDict[str, Counter[tuple[str | None, str]]] = OrderedDict()

    def needs_full_read(self, key: Key) -> bool:
        """Counts a trim of `key`: does it have to read the store first?"""
        user_id, agent_id, memory_type = key
        space = (agent_id, memory_type)
        with self._lock:
            trims = self._trims.setdefault(user_id, Counter())
            self._trims.move_to_end(user_id)
            trims[space] += 1
            self._bound()
            return space not in self._cards.get(user_id, {}) or trims[space] % FULL_READ_EVERY == 0

    def _bound(self) -> None:
        """At most CASE_CAPACITY cases, the least recently trimmed dropped first: a few ids each, so the bound
        is about a server that lives for months, not about a room; the one dropped reads the store again."""
        while len(self._trims) > CASE_CAPACITY:
            user_id, _ = self._trims.popitem(last=False)
            self._cards.pop(user_id, None)

    def read(self, key: Key, cards: Iterable[tuple[datetime, str, str]]) -> None:
        """Everything the store holds under `key`, as (created at, id, item)."""
        user_id, agent_id, memory_type = key
        with self._lock:
            known = sorted({(created, int(card_id), card_id, item) for created, card_id, item in cards})
            self._cards.setdefault(user_id, {})[agent_id, memory_type] = known

    def beyond_newest(self, key: Key, keep: int) -> list[tuple[str, str]]:
        """(id, item) of the cards older than the newest `keep` (all of them when keep is 0)."""
        user_id, agent_id, memory_type = key
        with self._lock:
            cards = self._cards.get(user_id, {}).get((agent_id, memory_type), [])
            return [(card_id, item) for _, _, card_id, item in (cards[:-keep] if keep else cards)]

    def noted(self, user_id: str, agent_id: str | None, cards: Iterable[tuple[str, datetime, str, str]]) -> None:
        """(memory type, created at, id, item) of cards known to be in the store (written or found here); only
        lists already read are extended."""
        with self._lock:
            lists = self._cards.get(user_id, {})
            for memory_type, created, card_id, item in cards:
                known = lists.get((agent_id, memory_type))
                if known is None:
                    continue
                entry = (created, int(card_id), card_id, item)
                at = bisect.bisect_left(known, entry)
                if at == len(known) or known[at] != entry:
                    known.insert(at, entry)

    def deleted(self, user_id: str, agent_id: str | None, card_ids: Iterable[str]) -> None:
        """Cards gone from one space, or from every space of the case when `agent_id` is None."""
        gone = set(card_ids)
        with self._lock:
            for (agent, _), known in self._cards.get(user_id, {}).items():
                if agent_id in (None, agent):
                    known[:] = [entry for entry in known if entry[2] not in gone]

    def forget(self, user_id: str) -> None:
        """The case was erased: nothing of it is kept, not even its id."""
        with self._lock:
            self._cards.pop(user_id, None)
            self._trims.pop(user_id, None)

    def user_ids(self) -> set[str]:
        with self._lock:
            return set(self._cards) | set(self._trims)

    def clear(self) -> None:
        with self._lock:
            self._cards.clear()
            self._trims.clear()
