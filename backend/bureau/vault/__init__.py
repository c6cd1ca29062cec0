"""The vault: key material lives here and nowhere else (docs/erasure.md, docs/architecture.md).

The rest of the server holds grants (vault/grants.py), never keys: the game mints them from resolved scopes,
the memory layer and the ledger open and seal rows only through the grant passed to each call.
"""

from bureau.vault.errors import (
    CaseKeysGoneError,
    GenerationRetiredError,
    GrantClosedError,
    GrantError,
    KekError,
    LegacyCaseError,
    VaultUnavailableError,
)
from bureau.vault.grants import Grant, GrantShape
from bureau.vault.vault import Vault

__all__ = [
    "CaseKeysGoneError",
    "GenerationRetiredError",
    "Grant",
    "GrantClosedError",
    "GrantError",
    "GrantShape",
    "KekError",
    "LegacyCaseError",
    "Vault",
    "VaultUnavailableError",
]
