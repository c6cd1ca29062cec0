"""The one-key-per-case sealing of earlier versions, kept only to re-seal their cases into compartments once
(vault/migration.py): `sealed:v1:` text under a key derived from the case key, with the case id as associated
data, and vectors in one Haar-random rotation per case. Nothing new is ever sealed this way.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from bureau.vault.crypto import NONCE_BYTES, OpenError, derive

V1_PREFIX = "sealed:v1:"


def is_v1(text: str) -> bool:
    return text.startswith(V1_PREFIX)


class LegacyCase:
    """A case key of the earlier sealing: opens its `sealed:v1:` texts and undoes its rotation."""

    def __init__(self, case_id: str, key: bytes) -> None:
        self.case_id = case_id
        self._aead = AESGCM(derive(key, b"content"))
        self._rotation_seed = int.from_bytes(derive(key, b"rotation"), "big")
        # The findings mapping's keyed pseudonyms were made with this derived key: it becomes the case's
        # pseudonym key, so the pseudonyms already in the ledger stay valid.
        self.pseudonym_key = derive(key, b"pseudonym")
        self._rotation: np.ndarray | None = None

    def open(self, text: str) -> str:
        if not is_v1(text):
            raise OpenError("not sealed:v1")
        try:
            raw = base64.b64decode(text[len(V1_PREFIX) :], validate=True)
            return self._aead.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], self.case_id.encode()).decode("utf-8")
        except (InvalidTag, ValueError) as exc:
            raise OpenError("cannot open") from exc

    def unrotate(self, vector: Sequence[float]) -> np.ndarray:
        """The vector as the encoder gave it (the rotation's transpose undoes it)."""
        values = np.asarray(vector, dtype=np.float64)
        if self._rotation is None or self._rotation.shape[0] != values.shape[0]:
            q, r = np.linalg.qr(np.random.default_rng(self._rotation_seed).standard_normal((values.shape[0],) * 2))
            self._rotation = q * np.sign(np.diag(r))
        return self._rotation.T @ values
