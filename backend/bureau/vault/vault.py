"""The vault: the one holder of key material. It mints grants from scopes the server has resolved, and it runs
the keys' lifecycle (a new case's keys, destroying a case's). It has no call that hands a key out.

A vault is its own database (vault/store.py) and its KEK (vault/kek.py), by default the directory `./vault`
beside `./data`, never inside it: a backup of the data directory never captures a key, so once a key is
destroyed every copy of what it sealed, backups included, stays unreadable (docs/erasure.md).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import UTC, datetime, timedelta

from bureau.scope.keys import PSEUDONYMS, SPACES, MemoryScope, case_scopes
from bureau.scope.vocabulary import Purpose
from bureau.vault import crypto
from bureau.vault.errors import CaseKeysGoneError, GrantError, LegacyCaseError
from bureau.vault.grants import Grant, GrantShape, ResealGrant
from bureau.vault.kek import Keks
from bureau.vault.keyring import LEGACY, CaseKeys, Keyring, record_compartment
from bureau.vault.legacy import LegacyCase
from bureau.vault.store import VaultStore

KEK_NEXT = "kek_next"  # vault_meta: the KEK a rotation is moving to; new keys are wrapped under it meanwhile


class Vault:
    def __init__(self, store: VaultStore, keks: Keks, vault_id: str, where: str) -> None:
        self.store = store  # the vault's own database; only vault/ and its maintenance reach it
        self.keks = keks
        self.vault_id = vault_id
        self.where = where  # the vault's location, for messages (never a key)
        self.keyring = Keyring(store, keks)

    def close(self) -> None:
        self.store.close()

    # ----- grants ----------------------------------------------------------------------------------------

    async def grant(
        self,
        case_id: str,
        generation: str | None,
        purpose: Purpose,
        *,
        reads: Sequence[MemoryScope] = (),
        writes: Sequence[MemoryScope] = (),
        lists: Sequence[MemoryScope] = (),
        record_reads: bool = False,
        record_writes: bool = False,
        pseudonyms: bool = False,
        request: str | None = None,
    ) -> Grant:
        """A grant for exactly the compartments named, in one generation of the case (None: a lifecycle grant,
        which works on ids across generations). CaseKeysGoneError when the vault holds no key of the case (it
        was erased: the case is gone), LegacyCaseError when it must be re-sealed first."""
        scopes = (*reads, *writes, *lists)
        if any(scope.case_id != case_id or scope.generation != generation for scope in scopes):
            raise GrantError("a grant covers one generation of one case")
        if purpose == Purpose.LIFECYCLE and (reads or record_reads):
            raise GrantError("a lifecycle grant reads no text")
        keys = await self._case_keys(case_id)
        if not keys.compartmentalised:
            raise LegacyCaseError(case_id)
        shape = GrantShape(
            purpose,
            request or secrets.token_hex(6),
            tuple(dict.fromkeys(s.space for s in reads)),
            tuple(dict.fromkeys(s.space for s in writes)),
            record_reads or record_writes,
            pseudonyms,
        )
        return Grant(
            keys,
            self.keyring,
            self.store,
            generation=generation,
            shape=shape,
            reads=reads,
            writes=writes,
            record_reads=record_reads,
            record_writes=record_writes,
            lists=lists,
        )

    async def _case_keys(self, case_id: str) -> CaseKeys:
        """A cache hit on the event loop (every request of a live case); a miss reads the vault on a thread."""
        cached = self.keyring.cached(case_id)
        return cached if cached is not None else await asyncio.to_thread(self.keyring.case, case_id)

    # ----- the keys' lifecycle ---------------------------------------------------------------------------

    async def create_case(self, case_id: str, generation: str) -> None:
        """A random 256-bit key for each compartment of a new case (its spaces, its first generation's
        record) and its pseudonym key: independent, none derived from another. Idempotent: a case that has
        keys keeps them."""
        names = (*SPACES, record_compartment(generation), PSEUDONYMS)
        await asyncio.to_thread(self._add_keys, case_id, {name: crypto.new_key() for name in names})

    async def open_generation(self, case_id: str, generation: str) -> None:
        """A reset is about to commit `generation`: its record gets a key of its own."""
        await asyncio.to_thread(self._add_keys, case_id, {record_compartment(generation): crypto.new_key()})

    async def retire_generation(self, case_id: str, generation: str) -> None:
        """One generation's record key and every item it wrapped: the record a reset replaced (with what
        commands that lost to it sealed) stops opening, in every copy. Only ever a generation known to be over:
        the one a committed reset replaced, or the one a reset that lost had opened."""
        await asyncio.to_thread(self._retire, case_id, [record_compartment(generation)])

    async def retire_stale_generations(self, case_id: str, current: str, older_than: timedelta) -> None:
        """Record keys of generations other than `current` made longer ago than `older_than`: what a reset
        that died between its steps left. A younger one may be a reset's still in flight, and is kept."""
        await asyncio.to_thread(self._retire_stale, case_id, record_compartment(current), older_than)

    def _retire_stale(self, case_id: str, current: str, older_than: timedelta) -> None:
        cutoff = datetime.now(UTC) - older_than
        ages = self.store.compartment_ages(case_id)
        self._retire(
            case_id, [name for name, made in ages.items() if _is_record(name) and name != current and made < cutoff]
        )

    def _retire(self, case_id: str, names: Sequence[str]) -> None:
        if not names:
            return
        for name in names:
            self.store.drop_compartment(case_id, name)
            self.store.drop_compartment_items(case_id, name)
        self.keyring.forget(case_id)
        self.store.checkpoint()

    def _add_keys(self, case_id: str, keys: dict[str, bytes]) -> None:
        kek_id = self.store.meta(KEK_NEXT) or self.keks.current_id  # during a rotation: under the next KEK
        self.store.add_compartments(case_id, self.keyring.wrapped(keys, kek_id))
        self.keyring.forget(case_id)  # read back as stored: another process may have made them first

    async def destroy_case(self, case_id: str) -> None:
        """Every key of the case, compartments and items: whatever they sealed, wherever a copy of it is,
        stays unreadable from now on."""
        self.keyring.forget(case_id, destroyed=True)
        await asyncio.to_thread(self.store.drop_case, case_id)
        self.keyring.forget(case_id, destroyed=True)  # a grant minted meanwhile may have read them back

    async def has_keys(self, case_id: str) -> bool:
        try:
            await self._case_keys(case_id)
        except CaseKeysGoneError:
            return False
        return True

    async def destroy_items(self, case_id: str, item_ids: Iterable[str]) -> int:
        """Keys of items that are gone (a cleanup task's): whatever compartment they were in."""
        gone = [i for i in item_ids if crypto.ITEM_ID.match(i)]
        return await asyncio.to_thread(self.store.drop_items, case_id, gone)

    async def items_older_than(self, case_id: str, age: timedelta, page: int) -> AsyncIterator[list[str]]:
        """The case's item ids made before now - `age`, a page at a time (the orphan sweep's scan)."""
        after = ""
        while True:
            found = await asyncio.to_thread(self.store.items_older_than, case_id, age, after, page)
            if not found:
                return
            yield [item for item, _ in found]
            after = found[-1][0]

    async def case_ids(self, older_than: timedelta) -> list[str]:
        """Every case the vault holds keys of, whose keys are older than `older_than`."""
        return await asyncio.to_thread(self.store.cases, older_than)

    # ----- an earlier version's case keys (vault/reseal.py) ---------------------------------------------

    def adopt_case_keys(self, case_keys: Sequence[tuple[str, bytes]]) -> None:
        """Move one-per-case keys of an earlier version in, as each case's legacy key (idempotent)."""
        kek_id = self.store.meta(KEK_NEXT) or self.keks.current_id
        for case_id, key in case_keys:
            self.store.add_compartments(case_id, self.keyring.wrapped({LEGACY: key}, kek_id))
            self.keyring.forget(case_id)

    def legacy_cases(self) -> list[str]:
        """Cases that still hold a legacy key: not re-sealed into compartments yet (or not finished)."""
        return [case for case in self.store.cases() if self._is_legacy(case)]

    def legacy_cases_among(self, case_ids: Iterable[str]) -> list[str]:
        return [case for case in case_ids if self._is_legacy(case)]

    def _is_legacy(self, case_id: str) -> bool:
        try:
            return LEGACY in self.keyring.case(case_id).keys
        except CaseKeysGoneError:
            return False

    def legacy(self, case_id: str) -> LegacyCase:
        """The case's legacy key, as the re-seal needs it: it opens `sealed:v1:` texts and undoes the old
        rotation. Only vault/reseal.py asks for it."""
        keys = self.keyring.case(case_id)
        if LEGACY not in keys.keys:
            raise CaseKeysGoneError(case_id)
        return LegacyCase(case_id, keys.keys[LEGACY])

    def compartmentalise(self, case_id: str, generation: str) -> None:
        """Give a legacy case its compartment keys (its pseudonym key derived from the legacy key, so the
        pseudonyms in the ledger stay valid). Idempotent: keys it has are kept."""
        legacy = self.legacy(case_id)
        keys: dict[str, bytes] = {name: crypto.new_key() for name in (*SPACES, record_compartment(generation))}
        keys[PSEUDONYMS] = legacy.pseudonym_key
        self._add_keys(case_id, keys)

    async def reseal_grant(self, case_id: str, generation: str) -> ResealGrant:
        """The migration's grant of a legacy case (after `compartmentalise`): every space of the generation and
        the record to read and write, the pseudonym key, and the legacy key to open what it sealed."""
        keys = await self._case_keys(case_id)
        if LEGACY not in keys.keys:
            raise CaseKeysGoneError(case_id)
        scopes = case_scopes(case_id, generation)
        spaces = tuple(scope.space for scope in scopes)
        shape = GrantShape(Purpose.MIGRATION, secrets.token_hex(6), spaces, spaces, True, True)
        return ResealGrant(
            LegacyCase(case_id, keys.keys[LEGACY]),
            keys,
            self.keyring,
            self.store,
            generation=generation,
            shape=shape,
            reads=scopes,
            writes=scopes,
            record_reads=True,
            record_writes=True,
        )

    def retire_legacy(self, case_id: str) -> None:
        """The case is re-sealed: its legacy key goes."""
        self.store.drop_compartment(case_id, LEGACY)
        self.keyring.forget(case_id)
        self.store.checkpoint()


def _is_record(name: str) -> bool:
    return name == "record" or name.startswith("record.")
