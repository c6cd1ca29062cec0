"""The embedded seekdb server process: whether it ships here, whether this process's one still runs, room
for a new store, and letting a dead one go."""

from __future__ import annotations

import builtins
import contextlib
import importlib.util
import os
import shutil
from pathlib import Path

from bureau.memory.types import StoreDiskTooSmallError

# pylibseekdb starts embedded seekdb with log_disk_size=2G: a new store fails to bootstrap on a smaller filesystem
# (measured: 2000 MiB fails, 2048 MiB starts), and PowerMem then opens it a second time, which never returns.
_NEW_STORE_MIN_FS_BYTES = 2 << 30


def embedded_seekdb_available() -> bool:
    """The embedded server ships in the pylibseekdb wheel, which exists only for some platforms."""
    return importlib.util.find_spec("pylibseekdb") is not None


def embedded_server_pid(store_dir: Path) -> int | None:
    """The running embedded seekdb server of a store directory (its pid file, checked in /proc), or None."""
    try:
        pid = int((store_dir / "run" / "seekdb.pid").read_text().strip())
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    alive = raw[raw.index("(") + 1 : raw.rindex(")")] == "seekdb" and raw[raw.rindex(")") + 2] != "Z"
    return pid if alive else None


def check_room_for_a_new_store(store_dir: Path) -> None:
    """Refuse, saying why, to create an embedded store where seekdb cannot bootstrap (see
    _NEW_STORE_MIN_FS_BYTES); an existing store keeps the log size it was created with and starts anywhere."""
    if store_dir.is_dir() and any(store_dir.iterdir()):
        return
    existing = next(path for path in (store_dir, *store_dir.parents) if path.exists())
    total = shutil.disk_usage(existing).total
    if total < _NEW_STORE_MIN_FS_BYTES:
        raise StoreDiskTooSmallError(
            f"{store_dir} is on a filesystem of {total >> 20} MiB; a new embedded seekdb store needs one of at "
            f"least {_NEW_STORE_MIN_FS_BYTES >> 20} MiB (seekdb reserves 2 GiB for its redo log). Put "
            "BUREAU_DATA_DIR on a larger filesystem, or use a seekdb server (BUREAU_SEEKDB_HOST)."
        )


def release_embedded_server() -> None:
    """Forget this process's embedded seekdb server, so the next client starts a new one, and reap the dead
    one: pylibseekdb keeps it open (pointing at a dead socket) and never waits for its child."""
    import pylibseekdb

    with contextlib.suppress(Exception):
        pylibseekdb.close()
    for pid in _dead_children("seekdb"):
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _dead_children(comm: str) -> builtins.list[int]:
    """Zombie children of this process with that command name (from /proc; empty where there is none)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            raw = stat.read_text()
            name = raw[raw.index("(") + 1 : raw.rindex(")")]
            state, ppid = raw[raw.rindex(")") + 2 :].split()[:2]
            if name == comm and state == "Z" and int(ppid) == os.getpid():
                found.append(int(stat.parent.name))
    return found
