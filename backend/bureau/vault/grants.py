"""A grant: the capability one request holds, minted by the vault from a scope the server has already resolved.

It names its case, its generation, its purpose, its request and its compartments: the spaces it may read, the
spaces it may write, the case record's compartment, the findings pseudonym key. It opens a row only of a
compartment it reads, and only with that item's own key, looked up under that compartment: a row of another
compartment handed to it (a store statement that forgot its filter, a row moved by hand) does not open, and
its vector, in another basis, scores like noise. It never hands a key out, and it expires with its request.

Blocking calls (`store_new_keys`, `load`, `destroy`) reach the vault's database: the memory layer calls them on
its worker, the ledger on its own threads, never on the event loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bureau.scope.keys import PSEUDONYMS, RECORD, MemoryScope
from bureau.scope.vocabulary import Purpose
from bureau.vault import crypto
from bureau.vault.errors import GenerationRetiredError, GrantClosedError, GrantError
from bureau.vault.keyring import CaseKeys, Keyring, record_compartment
from bureau.vault.legacy import LegacyCase, is_v1
from bureau.vault.store import VaultStore

GRANT_LIFETIME_S = 300.0  # a safety net: a grant is closed when its request ends, long before this


@dataclass(frozen=True, slots=True)
class GrantShape:
    """What a grant covers, without its keys: what the X-ray and the log may name."""

    purpose: Purpose
    request: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    record: bool
    pseudonyms: bool

    @property
    def compartments(self) -> tuple[str, ...]:
        """Every compartment whose key the request held, in the order the X-ray lists them."""
        held = dict.fromkeys((*self.reads, *self.writes, *((RECORD,) if self.record else ())))
        return tuple(held)


class _Items:
    """The item keys a grant has loaded or made, shared by its narrowed grants (one request)."""

    def __init__(self) -> None:
        self.keys: dict[str, tuple[str, bytes]] = {}  # item id -> (compartment, data key)
        # (compartment, item id) asked and not found there: never asked again. By pair, not by item: a filter
        # bug can hand the same row to two parts of one search, and its own part must still open it.
        self.missing: set[tuple[str, str]] = set()
        self.new: list[tuple[str, str, bytes]] = []  # (item id, compartment, wrapped) not yet in the vault
        self.lock = threading.Lock()


class Grant:
    def __init__(
        self,
        case_keys: CaseKeys,
        keyring: Keyring,
        store: VaultStore,
        *,
        generation: str | None,
        shape: GrantShape,
        reads: Sequence[MemoryScope],
        writes: Sequence[MemoryScope],
        record_reads: bool,
        record_writes: bool,
        lists: Sequence[MemoryScope] = (),
        deadline: float | None = None,
        items: _Items | None = None,
    ) -> None:
        self._case_keys = case_keys
        self._keyring = keyring
        self._store = store
        self.case_id = case_keys.case_id
        self.generation = generation
        self.shape = shape
        self._reads = tuple(reads)
        self._writes = tuple(writes)
        self._lists = tuple(lists)
        self._record_reads, self._record_writes = record_reads, record_writes
        self._deadline = deadline if deadline is not None else time.monotonic() + GRANT_LIFETIME_S
        self._items = items or _Items()
        self._closed = False

    # ----- what it covers --------------------------------------------------------------------------------

    @property
    def purpose(self) -> Purpose:
        return self.shape.purpose

    @property
    def read_scopes(self) -> tuple[MemoryScope, ...]:
        return self._reads

    @property
    def write_scopes(self) -> tuple[MemoryScope, ...]:
        return self._writes

    @property
    def listed_scopes(self) -> tuple[MemoryScope, ...]:
        """The spaces whose ids and metadata it may list (no key needed): the ones it names to list, read or
        write. A count for the stage, a delete's lookup, the retention's scan."""
        seen: dict[str, MemoryScope] = {}
        for scope in (*self._lists, *self._reads, *self._writes):
            seen.setdefault(scope.space, scope)
        return tuple(seen.values())

    def write_scope(self, space: str | None = None) -> MemoryScope:
        """The space this grant writes (the one named, or its only one)."""
        found = [s for s in self._writes if space is None or s.space == space]
        if len(found) != 1:
            raise GrantError("the grant does not write that space" if found == [] else "name the space to write")
        return found[0]

    def reads_space(self, space: str) -> bool:
        return any(s.space == space for s in self._reads)

    def narrowed(
        self,
        reads: Iterable[str] | None = None,
        writes: Iterable[str] | None = None,
        record: bool | None = None,
    ) -> Grant:
        """The same request with fewer compartments (never more): one role's part of a findings grant. It lists
        what it reads or writes, nothing else."""
        self._check()
        reads = None if reads is None else set(reads)
        writes = None if writes is None else set(writes)
        keep_reads = tuple(s for s in self._reads if reads is None or s.space in reads)
        keep_writes = tuple(s for s in self._writes if writes is None or s.space in writes)
        if reads is not None and len(keep_reads) != len(reads):
            raise GrantError("a narrowed grant cannot read what its grant does not")
        if writes is not None and len(keep_writes) != len(writes):
            raise GrantError("a narrowed grant cannot write what its grant does not")
        record_reads = self._record_reads and record is not False
        record_writes = self._record_writes and record is not False
        shape = GrantShape(
            self.shape.purpose,
            self.shape.request,
            tuple(s.space for s in keep_reads),
            tuple(s.space for s in keep_writes),
            record_reads or record_writes,
            self.shape.pseudonyms,
        )
        return Grant(
            self._case_keys,
            self._keyring,
            self._store,
            generation=self.generation,
            shape=shape,
            reads=keep_reads,
            writes=keep_writes,
            record_reads=record_reads,
            record_writes=record_writes,
            deadline=self._deadline,
            items=self._items,
        )

    def close(self) -> None:
        """The request is over: nothing opens under this grant any more, and the item keys it loaded go."""
        self._closed = True
        with self._items.lock:
            self._items.keys.clear()

    # ----- checks ----------------------------------------------------------------------------------------

    def _check(self) -> None:
        if self._closed or time.monotonic() > self._deadline:
            raise GrantClosedError("grant expired")

    def _readable(self, compartment: str) -> bool:
        return (compartment == RECORD and self._record_reads) or any(s.space == compartment for s in self._reads)

    def _writable(self, compartment: str) -> bool:
        return (compartment == RECORD and self._record_writes) or any(s.space == compartment for s in self._writes)

    def _stored(self, compartment: str) -> str:
        """The vault's name of a compartment: the record's is its generation's (a reset replaces its key)."""
        if compartment != RECORD:
            return self._keyring.key_name(compartment)
        if self.generation is None:
            raise GrantError("the record is one generation's")
        return record_compartment(self.generation)

    def _key(self, compartment: str) -> bytes:
        name = self._stored(compartment)
        key = self._case_keys.keys.get(name)
        if key is None:
            key = self._keyring.reloaded(self.case_id).keys.get(name)  # made by another process since cached
        if key is None and compartment == RECORD:
            raise GenerationRetiredError(self.case_id)  # a reset since the command began retired it
        if key is None:
            raise GrantError("the case has no key for that compartment")
        return key

    def _aad(self, compartment: str, item_id: str) -> bytes:
        return crypto.associated_data(self.case_id, self._stored(compartment), item_id)

    # ----- vectors ---------------------------------------------------------------------------------------

    def rotate(self, space: str, vectors: np.ndarray) -> np.ndarray:
        """Vectors in the space's secret basis: to write them there, or to search it."""
        self._check()
        if not (self._readable(space) or self._writable(space)) or space == RECORD:
            raise GrantError("the grant holds no basis of that space")
        values = np.asarray(vectors, dtype=np.float64)
        return self._keyring.basis(self._case_keys, space, values.shape[-1]).apply(values)

    # ----- text ------------------------------------------------------------------------------------------

    def seal(self, compartment: str, item_id: str, text: str) -> str:
        """`text` sealed under a new key of its own for `item_id`, wrapped under the compartment's key. The
        wrapped key waits in the grant until `store_new_keys`, which must run before the sealed text is stored."""
        self._check()
        if not self._writable(compartment):
            raise GrantError("the grant does not write that compartment")
        if not crypto.ITEM_ID.match(item_id):
            raise GrantError("not an item id")
        data_key = crypto.new_key()
        wrapped = crypto.wrap(self._key(compartment), data_key)
        sealed = crypto.seal(data_key, self._aad(compartment, item_id), item_id, text)
        with self._items.lock:
            self._items.keys[item_id] = (compartment, data_key)
            self._items.new.append((item_id, self._stored(compartment), wrapped))
        return sealed

    def store_new_keys(self) -> None:
        """The keys `seal` made, into the vault in one statement (blocking)."""
        self._check()
        with self._items.lock:
            pending, self._items.new = self._items.new, []
        self._store.add_items(self.case_id, pending)

    def forget_new_keys(self) -> None:
        """Keys sealed for items that will never be stored (a write that failed before storing them)."""
        with self._items.lock:
            self._items.new = []

    def load(self, wanted: Mapping[str, Iterable[str]]) -> None:
        """Fetch the keys of items to open, by compartment, in one vault statement (blocking): a search asks
        once for every candidate, after the store has answered. Compartments the grant does not read are
        skipped: their rows stay locked. A key filed under another compartment than the one asked is refused."""
        self._check()
        asked: dict[str, set[str]] = {}  # item id -> the compartments it is asked under
        with self._items.lock:
            for compartment, item_ids in wanted.items():
                if not self._readable(compartment):
                    continue
                for item_id in item_ids:
                    if item_id not in self._items.keys and (compartment, item_id) not in self._items.missing:
                        asked.setdefault(item_id, set()).add(compartment)
        if not asked:
            return
        found = self._store.items(self.case_id, asked)
        with self._items.lock:
            for item_id, compartments in asked.items():
                row = found.get(item_id)
                for compartment in sorted(compartments):
                    if row is None or row.compartment != self._stored(compartment):
                        self._items.missing.add((compartment, item_id))
                        continue
                    try:
                        key = crypto.unwrap(self._key(compartment), row.wrapped)
                    except crypto.OpenError:
                        self._items.missing.add((compartment, item_id))
                        continue
                    self._items.keys[item_id] = (compartment, key)

    def open(self, compartment: str, sealed: str) -> str | None:
        """The text, if it is an item of `compartment` sealed under its own key and the grant reads that
        compartment; None otherwise (a row of another compartment, a destroyed key, an unsealed legacy row)."""
        self._check()
        if not self._readable(compartment):
            return None
        item_id = crypto.item_of(sealed)
        if item_id is None:
            return None
        with self._items.lock:
            known = self._items.keys.get(item_id)
        if known is None:
            self.load({compartment: [item_id]})
            with self._items.lock:
                known = self._items.keys.get(item_id)
        if known is None or known[0] != compartment:
            return None
        try:
            return crypto.open_sealed(known[1], self._aad(compartment, item_id), sealed)
        except crypto.OpenError:
            return None

    def pseudonym(self, kind: str, value: str) -> str:
        """A keyed pseudonym under the case's findings key (the mapping of docs/findings.md)."""
        self._check()
        if not self.shape.pseudonyms:
            raise GrantError("the grant holds no pseudonym key")
        return crypto.pseudonym(self._key(PSEUDONYMS), kind, value)

    # ----- the keys' lifecycle ---------------------------------------------------------------------------

    def destroy(self, compartment: str, item_ids: Iterable[str]) -> int:
        """Destroy items' keys (blocking): every copy of their ciphertext, wherever it is, stops opening. Still
        allowed once the request is over (a late write's undo runs after its 503): it only ever takes away."""
        if not self._writable(compartment):
            raise GrantError("the grant does not write that compartment")
        gone = [i for i in item_ids if crypto.ITEM_ID.match(i)]
        with self._items.lock:
            for item_id in gone:
                self._items.keys.pop(item_id, None)
        return self._store.drop_items(self.case_id, gone, self._stored(compartment))


class ResealGrant(Grant):
    """The one grant that may open an earlier version's one-key-per-case texts: a migration's, which re-seals
    each of them into its compartment under a key of its own (game/reseal.py), then lets the old key go."""

    def __init__(self, legacy: LegacyCase, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._legacy = legacy

    def open_legacy(self, text: str) -> str | None:
        """An earlier version's text as written: `sealed:v1:` opened with the case key, or plaintext from
        before sealing as it is. None for a text this grant's seals made, or one that does not open."""
        self._check()
        if is_v1(text):
            try:
                return self._legacy.open(text)
            except crypto.OpenError:
                return None
        return None if text.startswith("sealed:") else text

    def plain_vector(self, text: str, vector: Sequence[float]) -> np.ndarray:
        """A stored vector as the encoder gave it: an earlier sealed row's rotation undone, or as it is."""
        self._check()
        return self._legacy.unrotate(vector) if is_v1(text) else np.asarray(vector, dtype=np.float64)
