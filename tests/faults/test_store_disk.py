"""The disk under the embedded store: too small for seekdb to create its store, and full under a running
server. We are root in CI (mount); elsewhere these tests skip, saying why."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from live_server import LiveServer

EXIT_DEADLINE_S = 120.0
CALL_TIMEOUT_S = 4.0  # BUREAU_MEMORY_CALL_TIMEOUT_S in the full-disk test
RECOVERY_DEADLINE_S = 90.0
SLACK_KB = 8 * 1024  # room left above what seekdb uses when the filesystem is shrunk, then filled


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "--lazy", str(path)], check=True)


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


def test_a_new_store_on_a_filesystem_too_small_for_seekdb_is_refused_at_start(tmp_path: Path) -> None:
    """seekdb reserves 2 GiB for its redo log and cannot bootstrap on less; PowerMem then opens it again and
    that open never returns, so the start would hang for good. It is refused instead, before seekdb starts."""
    with tmpfs(tmp_path / "seekdb", "400m") as store:
        server = LiveServer(tmp_path)
        with server.log_path.open("ab") as log:
            process = subprocess.Popen(
                server.command(), cwd=tmp_path, env=server.environment(), stdout=log, stderr=subprocess.STDOUT
            )
        try:
            assert process.wait(timeout=EXIT_DEADLINE_S) == 1
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        output = server.log_text()
        assert "Start-up failed (memory): StoreDiskTooSmallError" in output, output[-2000:]
        assert "a new embedded seekdb store needs one of at least 2048 MiB" in output
        assert "400 MiB" in output
        assert list(store.iterdir()) == []  # seekdb never started: nothing was written there
