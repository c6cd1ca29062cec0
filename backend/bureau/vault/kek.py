"""The key-encryption key (KEK): 32 random bytes in a file, by default `<vault dir>/kek` (mode 0600, in a
directory of mode 0700), named by `BUREAU_VAULT_KEK_FILE` in a shared deployment (a mounted secret). It wraps
every compartment key; it is never written into the data directory or the ledger.

A rotation (`bureau vault rotate-kek`, vault/rotation.py) writes the next KEK beside the current one
(`<kek>.next`) and replaces the current one only once every key is wrapped under the next, so a crash halfway
leaves both, and every key stays openable.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
from pathlib import Path

from bureau.vault.crypto import KEY_BYTES, fingerprint, new_key
from bureau.vault.errors import KekError


def _parse(raw: bytes, path: Path) -> bytes:
    """32 raw bytes, or their base64 text (what `openssl rand -base64 32` writes)."""
    if len(raw) == KEY_BYTES:
        return raw
    try:
        key = base64.b64decode(raw.strip(), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise KekError(f"the KEK file {path} does not hold a 32-byte key (raw, or base64)")
    return key


def read_kek(path: Path) -> bytes:
    try:
        return _parse(path.read_bytes(), path)
    except FileNotFoundError:
        raise KekError(f"the KEK file {path} is missing") from None
    except OSError as exc:
        raise KekError(f"the KEK file {path} cannot be read ({type(exc).__name__})") from None


def write_kek(path: Path) -> bytes:
    """A new KEK, written atomically with mode 0600 (never replacing an existing file)."""
    key = new_key()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(base64.b64encode(key) + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.link(temporary, path)  # fails if another process made one meanwhile: theirs is the KEK
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    _sync_directory(path.parent)
    return key


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def next_path(path: Path) -> Path:
    return path.with_name(path.name + ".next")


class Keks:
    """The KEKs a vault may find its keys wrapped under, by fingerprint: the current one, and the next one
    while a rotation is under way. Read again when a key names a KEK not loaded yet (another process rotated)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._keys: dict[str, bytes] = {}
        self.reload()

    def reload(self) -> None:
        keys = {}
        current = read_kek(self.path)
        keys[fingerprint(current)] = current
        following = next_path(self.path)
        if following.exists():
            upcoming = read_kek(following)
            keys[fingerprint(upcoming)] = upcoming
        self._keys = keys
        self.current_id = fingerprint(current)

    def key(self, kek_id: str) -> bytes:
        if kek_id not in self._keys:
            self.reload()
        try:
            return self._keys[kek_id]
        except KeyError:
            raise KekError(
                f"a key in the vault is wrapped under a KEK that neither {self.path} nor {next_path(self.path)} "
                "holds (a rotation finished elsewhere, or the wrong KEK file)"
            ) from None

    def ids(self) -> set[str]:
        return set(self._keys)

    def begin_rotation(self) -> tuple[str, bytes]:
        """The next KEK (made now unless a rotation that crashed left one)."""
        following = next_path(self.path)
        key = read_kek(following) if following.exists() else write_kek(following)
        self.reload()
        return fingerprint(key), key

    def finish_rotation(self) -> None:
        """The next KEK becomes the current one; the old one is gone."""
        following = next_path(self.path)
        os.replace(following, self.path)
        _sync_directory(self.path.parent)
        self.reload()
