"""The unwrapped compartment keys of the cases a process is serving, and the bases they derive: the only place
outside a grant where a key is held in the clear, and never handed out (grants hold references to it).

Bounded, least recently used out, and cheap to refill: a case's keys cost one vault read and an unwrap per
compartment, a basis a few tens of microseconds, so there is no cliff when a room of cases outgrows the cache
(docs/performance.md, "What a live case costs").
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from bureau.vault.bases import Basis
from bureau.vault.crypto import derive, unwrap, wrap
from bureau.vault.errors import CaseKeysGoneError
from bureau.vault.kek import Keks
from bureau.vault.store import VaultStore, WrappedKey

CASE_CAPACITY = 4096  # cases whose compartment keys stay unwrapped (about 200 bytes each)
BASIS_CAPACITY = 1024  # (case, space) bases kept (18 KB each at 512 dimensions)


@dataclass(slots=True)
class CaseKeys:
    """One case's compartment keys, by compartment; `legacy` is an earlier version's one case key, held only
    until the case is re-sealed into compartments."""

    case_id: str
    keys: dict[str, bytes] = field(default_factory=dict)

    @property
    def compartmentalised(self) -> bool:
        """Re-sealed into compartments: its legacy key, kept until the last row is re-sealed, is gone."""
        return LEGACY not in self.keys


LEGACY = "legacy"


def record_compartment(generation: str) -> str:
    """The record's compartment in one generation of a case: a reset gives the new generation its own key and
    destroys the old one's, so every text of the old record stops opening at once."""
    return f"record.{generation}" if generation else "record"


class Keyring:
    def __init__(self, store: VaultStore, keks: Keks) -> None:
        self._store = store
        self._keks = keks
        self._cases: OrderedDict[str, CaseKeys] = OrderedDict()
        self._bases: OrderedDict[tuple[str, str, int], Basis] = OrderedDict()
        # Cases whose keys were destroyed here: a grant minted before still works to its end, but nothing of
        # theirs is cached again (bounded: their ids are random, and only grants in flight can name them).
        self._destroyed: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0  # vault reads made to fill the cache (tests count them: no per-request reload)
        self.basis_builds = 0

    def cached(self, case_id: str) -> CaseKeys | None:
        """The case's keys if they are cached (no vault read: safe on the event loop), else None."""
        with self._lock:
            found = self._cases.get(case_id)
            if found is not None:
                self._cases.move_to_end(case_id)
            return found

    def case(self, case_id: str) -> CaseKeys:
        """The case's keys, from the cache or the vault. CaseKeysGoneError when the vault has none."""
        if (found := self.cached(case_id)) is not None:
            return found
        rows = self._store.compartments(case_id)
        if not rows:
            raise CaseKeysGoneError(case_id)
        keys = CaseKeys(case_id, {row.compartment: unwrap(self._keks.key(row.kek_id), row.wrapped) for row in rows})
        with self._lock:
            self.loads += 1
            if case_id in self._destroyed:  # destroyed while this read ran
                raise CaseKeysGoneError(case_id)
            self._cases[case_id] = keys
            self._cases.move_to_end(case_id)
            while len(self._cases) > CASE_CAPACITY:
                self._cases.popitem(last=False)
        return keys

    def reloaded(self, case_id: str) -> CaseKeys:
        """The case's keys read again (a key another process made since they were cached)."""
        with self._lock:
            self._cases.pop(case_id, None)
        return self.case(case_id)

    def key_name(self, compartment: str) -> str:
        """The key that seals a space's compartment and derives its basis: the space's own. A test seam and
        nothing else: tests/api/test_planted_filter_bug.py replaces it to put every space of a case back under
        one key and one basis, as before compartments, and shows that the planted filter bug then leaks."""
        return compartment

    def basis(self, keys: CaseKeys, space: str, dims: int) -> Basis:
        """A space's basis, derived from the keys a grant holds (never read again from the vault: a grant
        minted before an erase keeps working until its request fails at its commit)."""
        case_id = keys.case_id
        with self._lock:
            found = self._bases.get((case_id, space, dims))
            if found is not None:
                self._bases.move_to_end((case_id, space, dims))
                return found
        basis = Basis(derive(keys.keys[self.key_name(space)], b"basis"), dims)
        with self._lock:
            self.basis_builds += 1
            if case_id in self._destroyed:
                return basis
            self._bases[case_id, space, dims] = basis
            while len(self._bases) > BASIS_CAPACITY:
                self._bases.popitem(last=False)
        return basis

    def wrapped(self, keys: dict[str, bytes], kek_id: str) -> list[WrappedKey]:
        kek = self._keks.key(kek_id)
        return [WrappedKey(name, wrap(kek, key), kek_id) for name, key in keys.items()]

    def forget(self, case_id: str, *, destroyed: bool = False) -> None:
        """Drop what is cached of a case (`destroyed`: its keys are gone, never cache it again)."""
        with self._lock:
            self._cases.pop(case_id, None)
            for key in [k for k in self._bases if k[0] == case_id]:
                del self._bases[key]
            if destroyed:
                self._destroyed[case_id] = None
                while len(self._destroyed) > CASE_CAPACITY:
                    self._destroyed.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._cases.clear()
            self._bases.clear()

    def cached_cases(self) -> set[str]:
        """Cases whose keys or bases this process holds (in memory only): for erasure checks."""
        with self._lock:
            return set(self._cases) | {case for case, _, _ in self._bases}

    def bytes_held(self, case_id: str) -> int:
        """What one case's keys and bases take in this process's memory."""
        with self._lock:
            keys = self._cases.get(case_id)
            held = sum(len(k) for k in keys.keys.values()) if keys else 0
            return held + sum(b.nbytes for (case, _, _), b in self._bases.items() if case == case_id)
