"""Every key a vault holds, read through the vault's own store and KEKs (tests may use the vault's internals;
product code outside bureau/vault may not), in the forms a leak could take on disk: the raw bytes, hex and
base64. For the scans of docs/erasure.md: no key may be found under a data directory or in a ledger's dump."""

from __future__ import annotations

import base64
from collections.abc import Iterable

from bureau.vault import Vault
from bureau.vault.crypto import unwrap
from bureau.vault.kek import next_path, read_kek


def key_material(vault: Vault, cases: Iterable[str] | None = None) -> dict[str, bytes]:
    """name -> key bytes: the KEKs (current, and the next one during a rotation), every compartment key of
    every case (or of `cases`) unwrapped and as stored (wrapped), every item key unwrapped and wrapped."""
    found: dict[str, bytes] = {"KEK": read_kek(vault.keks.path)}
    if next_path(vault.keks.path).exists():
        found["KEK (next)"] = read_kek(next_path(vault.keks.path))
    for case_id in vault.store.cases() if cases is None else cases:
        for stored in vault.store.compartments(case_id):
            compartment_key = unwrap(vault.keks.key(stored.kek_id), stored.wrapped)
            found[f"{case_id}/{stored.compartment}"] = compartment_key
            found[f"{case_id}/{stored.compartment} (wrapped)"] = stored.wrapped
            for item, wrapped in vault.store.compartment_items(case_id, stored.compartment).items():
                found[f"{case_id}/{stored.compartment}/{item}"] = unwrap(compartment_key, wrapped)
                found[f"{case_id}/{stored.compartment}/{item} (wrapped)"] = wrapped
    return found


def encodings(material: dict[str, bytes]) -> dict[str, bytes]:
    """Each key as raw bytes, hex (both cases) and base64 (standard and URL-safe)."""
    forms: dict[str, bytes] = {}
    for name, key in material.items():
        forms[f"{name} raw"] = key
        forms[f"{name} hex"] = key.hex().encode()
        forms[f"{name} HEX"] = key.hex().upper().encode()
        forms[f"{name} base64"] = base64.b64encode(key)
        forms[f"{name} base64url"] = base64.urlsafe_b64encode(key)
    return forms


def count_kinds(material: dict[str, bytes]) -> dict[str, int]:
    """How many KEKs, compartment keys and item keys (unwrapped), for the report."""
    plain = [name for name in material if not name.endswith("(wrapped)")]
    return {
        "KEKs": sum(name.startswith("KEK") for name in plain),
        "compartment keys": sum(name.count("/") == 1 for name in plain),
        "item keys": sum(name.count("/") == 2 for name in plain),
    }
