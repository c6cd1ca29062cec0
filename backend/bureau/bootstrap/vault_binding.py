"""The vault of a data directory, opened or created once per start, and bound to its ledger.

The rules (docs/operations.md, "The vault"):
- a ledger stamped with a vault id opens only that vault: a missing vault, or another one, refuses to start
  and names both places (the server never creates new keys for old data);
- a ledger not stamped yet is bound now: to the vault found, or to a new one (its KEK made beside it when the
  KEK file is the default one). An earlier version's one-per-case keys move into the vault first, then the
  ledger is stamped, then its `case_keys` table is emptied (idempotent and crash-safe: a crash before the stamp
  moves them again, one after it empties the table on the next start).
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from bureau.config import Settings, UnsafeSettingsError
from bureau.ledger.database import printable_url
from bureau.ledger.repository import VaultBindingRepository
from bureau.vault import KekError, Vault
from bureau.vault.opening import VaultLocation, create_vault, open_vault

log = logging.getLogger("bureau")


class VaultBindingError(UnsafeSettingsError):
    """The data directory and the vault do not belong together (or the vault is gone)."""


def location_of(settings: Settings) -> VaultLocation:
    return VaultLocation(settings.vault_dir, settings.effective_vault_url, settings.effective_kek_file)


async def bind_vault(settings: Settings, binding: VaultBindingRepository) -> Vault:
    try:
        return await _bind(settings, binding)
    except KekError as exc:  # a missing, malformed or foreign KEK: a setting to fix, not a crash
        raise VaultBindingError(f"Refusing to start: the vault of the data in {settings.data_dir}: {exc}.") from None


async def _bind(settings: Settings, binding: VaultBindingRepository) -> Vault:
    location = location_of(settings)
    stamped = await binding.vault_id()
    vault = await asyncio.to_thread(open_vault, location)
    data = f"the data in {settings.data_dir} (ledger {printable_url(settings.effective_database_url)})"
    if vault is None:
        if stamped is not None:
            raise VaultBindingError(
                f"Refusing to start: {data} was sealed with the vault {stamped}, which is missing at "
                f"{location.describe()}. Its keys are gone with it: restore the vault, or start on an empty data "
                "directory to begin anew."
            )
        vault = await asyncio.to_thread(create_vault, location, str(uuid.uuid4()))
        log.info("created the vault at %s", location.describe())
    elif stamped is not None and stamped != vault.vault_id:
        vault.close()
        raise VaultBindingError(
            f"Refusing to start: {data} belongs to the vault {stamped}, but the vault at {location.describe()} is "
            f"{vault.vault_id}. Point BUREAU_VAULT_DIR (or BUREAU_VAULT_DATABASE_URL and BUREAU_VAULT_KEK_FILE) at "
            "the data's own vault."
        )
    try:
        if stamped is None:
            # Keys an earlier version kept in the ledger move first; a crash before the stamp moves them again.
            await asyncio.to_thread(vault.adopt_case_keys, await binding.keys_to_move())
            await binding.bind_vault(vault.vault_id)
        if await binding.has_case_keys():
            await binding.forget_case_keys()
            log.info("moved the ledger's case keys into the vault and emptied case_keys")
    except BaseException:
        vault.close()
        raise
    return vault
