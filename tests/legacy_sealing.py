"""The one-key-per-case sealing of earlier versions (`sealed:v1:`), written again here only to make rows as they
were, for the migration tests: AES-256-GCM under a key derived with HKDF-SHA256 from the case key, the case id as
associated data (what bureau/vault/legacy.py opens). The product never seals this way any more."""

from __future__ import annotations

import base64
import os

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


def seal_v1(case_key: bytes, case_id: str, text: str) -> str:
    content = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"bureau/content").derive(case_key)
    nonce = os.urandom(12)
    sealed = AESGCM(content).encrypt(nonce, text.encode("utf-8"), case_id.encode())
    return "sealed:v1:" + base64.b64encode(nonce + sealed).decode("ascii")
