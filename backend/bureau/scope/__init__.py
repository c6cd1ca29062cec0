"""Pure scope logic: roles, spaces, composite keys and audiences. No I/O lives here."""

from bureau.scope.audience import Audience, Principal, Readers, Visibility, narrowest
from bureau.scope.keys import BOARD, ROLES, SPACES, MemoryScope, Role, Space, composite_key, readable_scopes

__all__ = [
    "BOARD",
    "ROLES",
    "SPACES",
    "Audience",
    "MemoryScope",
    "Principal",
    "Readers",
    "Role",
    "Space",
    "Visibility",
    "composite_key",
    "narrowest",
    "readable_scopes",
]
