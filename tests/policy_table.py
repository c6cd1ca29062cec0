"""The memory policy as the issue states it, spelled out by hand (not derived from the code's table), shared
by the pure policy tests and the gateway tests over the real store."""

from __future__ import annotations

import itertools

from bureau.scope.memory_policy import WritePath
from bureau.scope.vocabulary import CreatedBy, MemoryType

T, C, P = MemoryType, CreatedBy, WritePath
TRUSTED = (C.SYSTEM, C.SCENARIO, C.OPERATOR)
# The rule as the issue states it, spelled out by hand (not derived from the code's table).
ALLOWED: set[tuple[MemoryType, CreatedBy, WritePath]] = {
    (T.SESSION, C.SYSTEM, P.SYSTEM),
    (T.TASK_STATE, C.SYSTEM, P.SYSTEM),
    *((t, c, P.ORDINARY) for t in (T.USER_PREFERENCE, T.LONG_TERM_KNOWLEDGE, T.OPERATIONAL_MEMORY) for c in TRUSTED),
}
COMBINATIONS = list(itertools.product(MemoryType, CreatedBy, WritePath))
CLEAN = "The courier arrives on Thursday."


def key_for(memory_type: MemoryType) -> str | None:
    return "dietary_preference" if memory_type is T.USER_PREFERENCE else None
