"""Small, full and immutable files and filesystems for the disk fault tests (root only: `mount`, `chattr`; elsewhere
the test skips)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `path` (created) for the duration; only what is written costs memory."""
    path.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "--lazy", str(path)], check=True)


@contextlib.contextmanager
def immutable(*paths: Path) -> Iterator[None]:
    """Writes to these files fail even through descriptors opened before (as on a filesystem that went
    read-only); root cannot write them either. Needs `chattr` and a filesystem with the attribute (ext4)."""
    done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot make files immutable here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, paths)], check=True)


def used_kb(path: Path) -> int:
    stat = os.statvfs(path)
    return (stat.f_blocks - stat.f_bfree) * stat.f_frsize // 1024


def fill(directory: Path) -> Path:
    """Take every free byte of the filesystem, down to the last partial block."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as handle:
        for chunk in (bytes(1 << 20), bytes(4096), bytes(1)):
            with contextlib.suppress(OSError):
                while True:
                    handle.write(chunk)
    assert os.statvfs(directory).f_bavail == 0
    return filler
