"""`bureau vault rotate-kek`: every compartment key re-wrapped under a new KEK, without touching the data.

Crash-safe: the next KEK is written beside the current one (`<kek>.next`) and named in the vault's meta before
the first key moves, so new keys are wrapped under it meanwhile; keys move in batches, each batch in one
transaction; the old KEK is replaced only once no key is wrapped under it. A rotation that crashed is finished
by running the command again. Item keys are wrapped by their compartment keys, not the KEK: they stay as they are.
"""

from __future__ import annotations

from collections.abc import Callable

from bureau.vault.crypto import unwrap, wrap
from bureau.vault.opening import KEK_ID
from bureau.vault.vault import KEK_NEXT, Vault

REWRAP_BATCH = 200


def rotate_kek(vault: Vault, progress: Callable[[int, int], None] = lambda done, total: None) -> int:
    """Returns how many keys were re-wrapped. `progress(done, total)` after each batch."""
    keks = vault.keks
    pending_next = vault.store.meta(KEK_NEXT)
    new_id, new_key = keks.begin_rotation()
    if pending_next not in (None, new_id):
        raise RuntimeError("a rotation to another KEK was begun here: its KEK file is missing")
    vault.store.set_meta(KEK_NEXT, new_id)  # from now on, new keys are wrapped under the next KEK
    under = vault.store.count_under()
    total = sum(n for kek, n in under.items() if kek != new_id)
    done = 0
    for kek_id in [k for k in under if k != new_id]:
        old_key = keks.key(kek_id)
        while batch := vault.store.wrapped_under(kek_id, REWRAP_BATCH):
            rows = [
                (case_id, key.compartment, kek_id, wrap(new_key, unwrap(old_key, key.wrapped)), new_id)
                for case_id, key in batch
            ]
            done += vault.store.rewrap(rows)
            progress(done, total)
    if vault.store.count_under().keys() - {new_id}:
        raise RuntimeError("keys are still wrapped under the old KEK: run the rotation again")
    vault.store.set_meta(KEK_ID, new_id)
    vault.store.set_meta(KEK_NEXT, None)
    keks.finish_rotation()  # the old KEK is gone: nothing is wrapped under it any more
    vault.keyring.clear()
    return done
