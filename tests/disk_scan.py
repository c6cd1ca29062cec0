"""Byte-wise search of every file under a data directory, raw and decompressed (zstd frames, zlib streams),
run in its own process: for text (`scan`), and for binary needles such as keys (`scan_bytes`).

Why a process of its own: opening and closing a SQLite database file from the process that has it open
drops that process's POSIX locks on it (they belong to the process, not the descriptor). Another process
closing the ledger then sees no readers, checkpoints and removes the WAL and shared-memory files, and every
later statement of the first process fails with "disk I/O error".
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import zstandard

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZLIB_HEADERS = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda")
_CHUNK = 8 << 20


def _streams(blob: bytes) -> Iterator[bytes]:
    """Every zstd frame and zlib stream that decompresses, wherever it starts in the file."""
    start = blob.find(_ZSTD_MAGIC)
    while start != -1:
        with contextlib.suppress(zstandard.ZstdError):
            yield zstandard.ZstdDecompressor().decompressobj().decompress(blob[start : start + (4 << 20)])
        start = blob.find(_ZSTD_MAGIC, start + 1)
    for header in _ZLIB_HEADERS:
        start = blob.find(header)
        while start != -1:
            with contextlib.suppress(zlib.error):
                yield zlib.decompressobj().decompress(blob[start : start + (1 << 20)], 4 << 20)
            start = blob.find(header, start + 1)


def _files(root: Path) -> Iterator[tuple[Path, bytes]]:
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        try:
            with path.open("rb") as handle:
                yield path, handle.read()
        except OSError:
            continue  # a socket or a file that vanished while we walked


def _scan_here(data_dir: Path, needles: list[str]) -> dict[str, list[str]]:
    """Which files under `data_dir` contain which needle (UTF-8), raw or decompressed."""
    pattern = re.compile(b"|".join(re.escape(n.encode()) for n in needles))
    found: dict[str, list[str]] = {}
    for path, blob in _files(data_dir):
        hits = {m.group().decode() for m in pattern.finditer(blob)}
        for stream in _streams(blob):
            hits |= {m.group().decode() for m in pattern.finditer(stream)}
        for hit in hits:
            found.setdefault(hit, []).append(str(path.relative_to(data_dir)))
    return found


_PREFIX = 8  # bytes of a needle looked up at every offset; every needle is at least this long


class _ByteNeedles:
    """Many binary needles (keys: random bytes, so a regex alternation of them is hopeless on 100s of MB):
    the 8 bytes at every offset of a blob, looked up among the needles' first 8 bytes with numpy, and each
    candidate compared in full."""

    def __init__(self, needles: dict[str, bytes]) -> None:
        assert all(len(n) >= _PREFIX for n in needles.values()), "a needle shorter than the prefix"
        self.by_prefix: dict[int, list[tuple[str, bytes]]] = {}
        for name, needle in needles.items():
            self.by_prefix.setdefault(int.from_bytes(needle[:_PREFIX], "little"), []).append((name, needle))
        self.prefixes = np.array(sorted(self.by_prefix), dtype=np.uint64)
        self.longest = max((len(n) for n in needles.values()), default=_PREFIX)

    def find(self, blob: bytes) -> set[str]:
        found: set[str] = set()
        if not len(self.prefixes) or len(blob) < _PREFIX:
            return found
        every = np.frombuffer(blob, dtype=np.uint8)
        for start in range(0, len(every), _CHUNK):
            part = every[start : start + _CHUNK + self.longest]
            offsets = len(part) - _PREFIX + 1
            if offsets <= 0 or not part.any():
                continue  # preallocated log files are mostly zeros
            words = np.zeros(offsets, dtype=np.uint64)
            for shift in range(_PREFIX):
                words |= part[shift : shift + offsets].astype(np.uint64) << np.uint64(8 * shift)
            index = np.minimum(np.searchsorted(self.prefixes, words), len(self.prefixes) - 1)
            for offset in np.nonzero(self.prefixes[index] == words)[0]:
                at = start + int(offset)
                for name, needle in self.by_prefix[int(words[offset])]:
                    if blob[at : at + len(needle)] == needle:
                        found.add(name)
        return found


def _scan_bytes_here(root: Path, needles: dict[str, bytes]) -> dict[str, list[str]]:
    """Which files under `root` contain which named needle, raw or decompressed."""
    search = _ByteNeedles(needles)
    found: dict[str, list[str]] = {}
    for path, blob in _files(root):
        hits = search.find(blob)
        for stream in _streams(blob):
            hits |= search.find(stream)
        for hit in hits:
            found.setdefault(hit, []).append(str(path.relative_to(root)))
    return found


def _in_a_process(root: Path, mode: str, payload: object) -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, __file__, mode, str(root)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    found: dict[str, list[str]] = json.loads(result.stdout)
    return found


def scan(data_dir: Path, needles: list[str]) -> dict[str, list[str]]:
    """Which files under `data_dir` contain which needle (UTF-8), raw or decompressed."""
    return _in_a_process(data_dir, "text", needles)


def scan_bytes(root: Path, needles: dict[str, bytes]) -> dict[str, list[str]]:
    """Which files under `root` contain which named binary needle (each at least 8 bytes), raw or decompressed:
    needle name -> files."""
    return _in_a_process(root, "bytes", {name: needle.hex() for name, needle in needles.items()})


if __name__ == "__main__":
    mode, where, given = sys.argv[1], Path(sys.argv[2]), json.loads(sys.stdin.read())
    if mode == "text":
        print(json.dumps(_scan_here(where, given)))
    else:
        print(json.dumps(_scan_bytes_here(where, {name: bytes.fromhex(hexed) for name, hexed in given.items()})))
