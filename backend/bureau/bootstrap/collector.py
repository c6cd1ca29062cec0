"""The cyclic garbage collector of a serving process, settled once the service is ready.

A full collection walks every tracked object while holding the interpreter lock, so the event loop stands
still for it: with 500 live streams that is 310 000–390 000 objects and 160–190 ms on a quiet machine, and
the collection lands in the middle of a fan-out, where the allocations that trigger it are made (measured
in docs/performance.md with `bench/sse_fanout.py --probe`). Everything alive at the end of start-up (modules,
the sentence encoder, the store client) lives as long as the process: frozen, no collection walks it again.
A larger first threshold lets short-lived objects die before a collection sees them, so fewer are promoted
and a full collection is rarely due. Memory is still freed by reference counting at once; only garbage in
reference cycles waits a little longer.
"""

from __future__ import annotations

import gc

THRESHOLDS = (20_000, 20, 50)  # CPython's defaults are (700, 10, 10)


def settle_after_start() -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


def settle_after_reopen() -> None:
    """The store client a reopen replaced was frozen with start-up's objects: a frozen cycle is never
    collected, so each reopen would keep the old client for good. Thaw, collect, freeze again (one full
    collection, while readiness is red anyway); a process that never settled is left as it is."""
    if gc.get_freeze_count():
        gc.unfreeze()
        settle_after_start()
