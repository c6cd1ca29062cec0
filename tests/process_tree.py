"""Finding a server's processes from outside, as an operator would: its embedded seekdb child."""

from __future__ import annotations

import time
from pathlib import Path


def _stat(pid: int) -> tuple[str, str, int] | None:
    """(comm, state, ppid) of a process, or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm = raw[raw.index("(") + 1 : raw.rindex(")")]
    state, ppid = raw[raw.rindex(")") + 2 :].split()[:2]
    return comm, state, int(ppid)


def live_children(pid: int, comm: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[0] == comm and stat[2] == pid and stat[1] != "Z":
                found.append(int(entry.name))
    return found


def seekdb_child(server_pid: int, timeout_s: float = 30.0) -> int:
    """The embedded seekdb server the `bureau serve` process started (one per data directory)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        children = live_children(server_pid, "seekdb")
        if children:
            [child] = children
            return child
        time.sleep(0.1)
    raise AssertionError(f"no seekdb child of {server_pid}")


def is_stopped(pid: int) -> bool:
    """Stopped by a signal (SIGSTOP): alive, but it runs nothing until SIGCONT."""
    stat = _stat(pid)
    return stat is not None and stat[1] in ("T", "t")


def is_gone(pid: int) -> bool:
    """Dead: no such process, or a zombie nobody has reaped yet."""
    stat = _stat(pid)
    return stat is None or stat[1] == "Z"
