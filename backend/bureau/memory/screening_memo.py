"""The screening in force, each text screened once per process.

The read policy screens every candidate of every search again, so that a pattern added after a card was
written excludes it from then on; the same cards come back question after question, and phone-number
matching alone costs a fraction of a millisecond per card. Verdicts are remembered for the policy they were
computed under (a new policy starts afresh) and keyed by a keyed hash of the text under a random key of this
process: no text, and no digest that a guessed text could be checked against, is kept. In memory only,
bounded (least recently used out; a miss is screened again, never skipped).
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict

from bureau.scope.content_policy import ContentPolicy

VERDICT_CACHE_SIZE = 50_000  # ~100 bytes each


class RememberedScreening:
    def __init__(self, policy: ContentPolicy) -> None:
        self.policy = policy
        self._key = os.urandom(32)
        self._verdicts: OrderedDict[bytes, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()  # screened on the event loop (writes) and on the memory worker (reads)

    def screen(self, text: str) -> list[str]:
        digest = hashlib.blake2b(text.encode(), key=self._key, digest_size=16).digest()
        with self._lock:
            known = self._verdicts.get(digest)
            if known is not None:
                self._verdicts.move_to_end(digest)
                return list(known)
        reasons = self.policy.screen(text)
        with self._lock:
            self._verdicts[digest] = tuple(reasons)
            while len(self._verdicts) > VERDICT_CACHE_SIZE:
                self._verdicts.popitem(last=False)
        return reasons
