"""Per-case sealing: what makes erasing a case reach every copy on disk. Pure computation, no I/O.

Each case has one random 256-bit key, kept in the ledger (outside the memory store). From it two secrets are
derived: an AES-256-GCM key that seals card text and the case record before they are written anywhere, and a
secret orthogonal rotation applied to every embedding of the case (cosine similarity between two vectors of the
same case is unchanged, so retrieval works as before). Erasing the case destroys the key: whatever the store's
redo logs, deleted pages or backups still hold is ciphertext and vectors in an unknown basis.
See docs/erasure.md for the threat model and its limits.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import os
from collections.abc import Sequence

import numpy as np
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

KEY_BYTES = 32
SEALED_PREFIX = "sealed:v1:"
_NONCE_BYTES = 12


class SealError(ValueError):
    """Sealed text that this key cannot open (another case's text, or tampered ciphertext)."""


def new_case_key() -> bytes:
    return os.urandom(KEY_BYTES)


def _derive(key: bytes, purpose: bytes, length: int = 32) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=b"bureau/" + purpose).derive(key)


def is_sealed(text: str) -> bool:
    return text.startswith(SEALED_PREFIX)


class CaseCipher:
    """Seals text and rotates vectors for one case. `context` binds a ciphertext to where it belongs
    (the case id), so a sealed card copied into another case does not open there."""

    def __init__(self, case_id: str, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError("a case key is 32 bytes")
        self.case_id = case_id
        self._aead = AESGCM(_derive(key, b"content"))
        self._rotation_seed = int.from_bytes(_derive(key, b"rotation"), "big")
        self._pseudonym_key = _derive(key, b"pseudonym")

    def pseudonym(self, kind: str, value: str) -> str:
        """A keyed pseudonym (HMAC-SHA256): equal values give equal pseudonyms within the case, and nothing
        without the case key can tell what it stands for (the findings ledger's mapping, docs/findings.md)."""
        return hmac.new(self._pseudonym_key, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()

    def seal(self, text: str) -> str:
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, text.encode("utf-8"), self.case_id.encode())
        return SEALED_PREFIX + base64.b64encode(nonce + sealed).decode("ascii")

    def open(self, text: str) -> str:
        if not is_sealed(text):
            raise SealError("not sealed")
        try:
            raw = base64.b64decode(text[len(SEALED_PREFIX) :], validate=True)
            return self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], self.case_id.encode()).decode("utf-8")
        except (InvalidTag, ValueError) as exc:
            raise SealError("cannot open") from exc

    def rotate(self, vector: Sequence[float]) -> list[float]:
        """The vector in this case's secret orthonormal basis: dot products (and so cosines) between two
        rotated vectors equal those between the originals."""
        values = np.asarray(vector, dtype=np.float64)
        return (_rotation(self._rotation_seed, values.shape[0]) @ values).tolist()


@functools.lru_cache(maxsize=16)  # 2 MB each at 512 dims; a miss costs ~25 ms
def _rotation(seed: int, dims: int) -> np.ndarray:
    """A Haar-random orthogonal matrix: QR of a Gaussian matrix, column signs fixed by R's diagonal."""
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((dims, dims)))
    return q * np.sign(np.diag(r))
