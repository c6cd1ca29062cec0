"""The memory gateway's view of per-case sealing keys: loaded from the ledger once per case and process,
held in memory only, forgotten when the case is erased. See bureau/sealing.py and docs/erasure.md."""

from __future__ import annotations

import asyncio
from typing import Protocol

from bureau.sealing import CaseCipher


class CaseKeySource(Protocol):
    async def case_key(self, case_id: str, *, create: bool = False) -> bytes | None: ...


class CaseCiphers:
    def __init__(self, source: CaseKeySource) -> None:
        self._source = source
        self._ciphers: dict[str, CaseCipher] = {}  # small objects; rotations are cached in bureau.sealing
        self._loading: dict[str, asyncio.Lock] = {}

    async def load(self, case_id: str, *, create: bool = False) -> CaseCipher | None:
        """Before a store call of `case_id` (on the event loop, so the worker thread never waits on the
        ledger). None when the case has no key: its sealed cards cannot be read, nothing can be written."""
        cipher = self._ciphers.get(case_id)
        if cipher is not None:
            return cipher
        # Concurrent first calls for one case share one ledger lookup (hundreds of writes gathered at once
        # would otherwise each open a write transaction to create the same key).
        lock = self._loading.setdefault(case_id, asyncio.Lock())
        async with lock:
            cipher = self._ciphers.get(case_id)
            if cipher is None:
                key = await self._source.case_key(case_id, create=create)
                if key is None:
                    return None
                cipher = self._ciphers[case_id] = CaseCipher(case_id, key)
        self._loading.pop(case_id, None)
        return cipher

    def get(self, case_id: str) -> CaseCipher | None:
        return self._ciphers.get(case_id)

    def forget(self, case_id: str) -> None:
        self._ciphers.pop(case_id, None)
