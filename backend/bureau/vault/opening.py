"""Where a vault is (its database and its KEK), and opening or creating one there. The directory is made with
mode 0700, the KEK file with mode 0600; a vault whose database is there but whose KEK is missing or is not the
one its keys were wrapped under refuses to open, naming the places, never a key."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from bureau.vault.errors import KekError
from bureau.vault.kek import Keks, write_kek
from bureau.vault.store import VaultStore
from bureau.vault.vault import Vault

VAULT_ID = "vault_id"
KEK_ID = "kek"  # vault_meta: the fingerprint of the KEK its keys are wrapped under


@dataclass(frozen=True, slots=True)
class VaultLocation:
    directory: Path
    url: str
    kek_file: Path

    def describe(self) -> str:
        if self.url.startswith("sqlite"):
            return f"{self.directory} (KEK {self.kek_file})"
        from sqlalchemy import make_url  # the vault's own database access (docs/architecture.md)

        return f"{make_url(self.url).render_as_string(hide_password=True)} (KEK {self.kek_file})"


def _store(location: VaultLocation) -> VaultStore:
    if location.url.startswith("sqlite"):
        location.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(location.directory, 0o700)
    return VaultStore(location.url)


def open_vault(location: VaultLocation) -> Vault | None:
    """The vault at `location`, or None when there is none (no database there, or one never stamped)."""
    if location.url.startswith("sqlite") and not (location.directory / "vault.db").exists():
        sqlite_file = Path(location.url.split("///", 1)[-1].split("?", 1)[0])
        if not sqlite_file.exists():
            return None
    store = _store(location)
    try:
        vault_id = store.meta(VAULT_ID) if store.has_schema() else None
        if vault_id is None:
            store.close()
            return None
        return _opened(store, location, vault_id)
    except BaseException:
        store.close()
        raise


def create_vault(location: VaultLocation, vault_id: str) -> Vault:
    """A new vault (or the one another process created at the same moment): its schema, its id, its KEK."""
    store = _store(location)
    try:
        try:
            store.create_schema()
        except Exception:
            store.create_schema()  # a second process raced the first to the same tables: they are there now
        if not location.kek_file.exists():
            if location.kek_file != location.directory / "kek":
                raise KekError(
                    f"the KEK file {location.kek_file} is missing: a KEK named by BUREAU_VAULT_KEK_FILE is yours "
                    "to provide (e.g. a mounted secret: `openssl rand -base64 32`)"
                )
            with contextlib.suppress(FileExistsError):  # another process made it first: it is the KEK
                write_kek(location.kek_file)
        claimed = store.claim_meta(VAULT_ID, vault_id)
        store.claim_meta(KEK_ID, Keks(location.kek_file).current_id)
        return _opened(store, location, claimed)
    except BaseException:
        store.close()
        raise


def _opened(store: VaultStore, location: VaultLocation, vault_id: str) -> Vault:
    keks = Keks(location.kek_file)
    expected = store.meta(KEK_ID)
    if expected is not None and expected not in keks.ids() and not _rotated(store, keks):
        raise KekError(
            f"the KEK file {location.kek_file} is not the key the vault at {location.describe()} was sealed with"
        )
    return Vault(store, keks, vault_id, location.describe())


def _rotated(store: VaultStore, keks: Keks) -> bool:
    """Every key wrapped under one of the KEKs at hand (a rotation that finished since the stamp)."""
    under = store.count_under()
    return bool(under) and set(under) <= keks.ids()
