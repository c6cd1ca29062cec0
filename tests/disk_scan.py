"""Byte-wise search of every file under a data directory, raw and decompressed (zstd frames, zlib streams),
run in its own process.

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


def _scan_here(data_dir: Path, needles: list[str]) -> dict[str, list[str]]:
    """Which files under `data_dir` contain which needle (UTF-8), raw or decompressed."""
    pattern = re.compile(b"|".join(re.escape(n.encode()) for n in needles))
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file() and not p.is_symlink()):
        try:
            with path.open("rb") as handle:
                blob = handle.read()
        except OSError:
            continue  # a socket or a file that vanished while we walked
        hits = {m.group().decode() for m in pattern.finditer(blob)}
        for stream in _streams(blob):
            hits |= {m.group().decode() for m in pattern.finditer(stream)}
        for hit in hits:
            found.setdefault(hit, []).append(str(path.relative_to(data_dir)))
    return found


def scan(data_dir: Path, needles: list[str]) -> dict[str, list[str]]:
    """Which files under `data_dir` contain which needle (UTF-8), raw or decompressed."""
    result = subprocess.run(
        [sys.executable, __file__, str(data_dir)],
        input=json.dumps(needles),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    found: dict[str, list[str]] = json.loads(result.stdout)
    return found


if __name__ == "__main__":
    print(json.dumps(_scan_here(Path(sys.argv[1]), json.loads(sys.stdin.read()))))
