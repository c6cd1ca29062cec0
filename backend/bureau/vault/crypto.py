"""The vault's primitives, all from `cryptography`: AES-256-GCM for text, AES key wrap (RFC 3394) for keys,
HKDF-SHA256 for what a key derives (a compartment's basis seed), HMAC-SHA256 for keyed pseudonyms.

A sealed text names its item, so whoever holds it can ask for that item's key, and nothing else:
`sealed:v2:<item id>:<base64 of nonce and ciphertext>`. The associated data binds the ciphertext to its case,
its compartment and its item, so a row moved into another compartment or case does not open there.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.keywrap import InvalidUnwrap, aes_key_unwrap, aes_key_wrap

from bureau.vault.items import ITEM_ID, SEALED_PREFIX, item_of

KEY_BYTES = 32
NONCE_BYTES = 12
__all__ = ["ITEM_ID", "SEALED_PREFIX", "item_of"]  # the ids, where the seals are made


class OpenError(ValueError):
    """A ciphertext or wrapped key that this key cannot open (another compartment's, or tampered)."""


def new_key() -> bytes:
    return os.urandom(KEY_BYTES)


def derive(key: bytes, purpose: bytes, length: int = KEY_BYTES) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=b"bureau/" + purpose).derive(key)


def wrap(wrapping_key: bytes, key: bytes) -> bytes:
    return aes_key_wrap(wrapping_key, key)


def unwrap(wrapping_key: bytes, wrapped: bytes) -> bytes:
    try:
        return aes_key_unwrap(wrapping_key, wrapped)
    except (InvalidUnwrap, ValueError) as exc:
        raise OpenError("cannot unwrap") from exc


def associated_data(case_id: str, compartment: str, item_id: str) -> bytes:
    return f"bureau/v2\x1f{case_id}\x1f{compartment}\x1f{item_id}".encode()


def seal(key: bytes, associated: bytes, item_id: str, text: str) -> str:
    nonce = os.urandom(NONCE_BYTES)
    sealed = AESGCM(key).encrypt(nonce, text.encode("utf-8"), associated)
    return f"{SEALED_PREFIX}{item_id}:{base64.b64encode(nonce + sealed).decode('ascii')}"


def open_sealed(key: bytes, associated: bytes, sealed: str) -> str:
    _, _, body = sealed[len(SEALED_PREFIX) :].partition(":")
    try:
        raw = base64.b64decode(body, validate=True)
        return AESGCM(key).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], associated).decode("utf-8")
    except (InvalidTag, ValueError) as exc:
        raise OpenError("cannot open") from exc


def pseudonym(key: bytes, kind: str, value: str) -> str:
    """HMAC-SHA256: equal values give equal pseudonyms under one key; without it nothing tells what they are."""
    return hmac.new(key, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()


def fingerprint(key: bytes) -> str:
    """A key-encryption key's public name: which KEK wrapped a row, without revealing it."""
    return hmac.new(key, b"bureau/kek-id", hashlib.sha256).hexdigest()[:16]
