"""What embedded seekdb does when the disk under it is full (docs/faults.md). Needs root (it mounts a tmpfs).

Embedded seekdb sizes its redo log at 2 GB (`log_disk_size=2G`, fixed in pylibseekdb) and refuses to
bootstrap on a smaller filesystem. So the store's directory is a tmpfs of `--size` (only what is written costs
memory), the service starts on it, then the tmpfs is shrunk to what seekdb uses plus `--slack-mb` and the rest
is filled to the last byte. Then cards are written in batches through the real gateway (in-process app, real
PowerMem) until a write fails or `--max-cards` were written; the failure's class and driver code are printed.
Then the filler is removed and one whisper is tried again. Prints progress on stderr, a summary on stdout.

    sudo .venv/bin/python scripts/store_disk_full.py --max-cards 30000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

BATCH = 500


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def free_kb(path: Path) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize // 1024


def used_kb(path: Path) -> int:
    stat = os.statvfs(path)
    return (stat.f_blocks - stat.f_bfree) * stat.f_frsize // 1024


def fill(path: Path) -> Path:
    """A file that takes every byte left (big writes, then single bytes for the last partial block)."""
    filler = path / "filler"
    with filler.open("wb", buffering=0) as out:
        for chunk in (bytes(1 << 20), bytes(4096), bytes(1)):
            with contextlib.suppress(OSError):
                while True:
                    out.write(chunk)
    return filler


def driver_code(exc: BaseException) -> str:
    """The store driver's own error code along the cause chain (never the message)."""
    seen: BaseException | None = exc
    while seen is not None:
        args = getattr(seen, "orig", seen).args
        if args and isinstance(args[0], int):
            return f"{type(getattr(seen, 'orig', seen)).__name__} {args[0]}"
        seen = seen.__cause__ or seen.__context__
    return "no code"


async def measure(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    for name in [n for n in os.environ if n.startswith("BUREAU_")]:
        del os.environ[name]
    from bureau.api.app import create_app
    from bureau.config import Settings
    from bureau.memory.types import CardDraft
    from bureau.scope.keys import role_scope
    from bureau.scope.vocabulary import Purpose

    store = data_dir / "seekdb"
    vault_dir = data_dir.with_name(f"{data_dir.name}-vault")  # beside the data directory, never inside it
    settings = Settings(_env_file=None, data_dir=data_dir, vault_dir=vault_dir, memory_call_timeout_s=args.call_timeout)
    app = create_app(settings)
    result: dict[str, Any] = {}
    async with app.router.lifespan_context(app):
        services = app.state.services
        gateway = services.gateway
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=300) as http:
            case_id = (await http.post("/api/cases", json={"scenario_id": "safe-combination"})).json()["case"]["id"]
            whispers = f"/api/cases/{case_id}/whispers"
            result["store used MB at start"] = round(used_kb(store) / 1024, 1)
            shrunk = f"remount,size={used_kb(store) + args.slack_mb * 1024}k"
            subprocess.run(["mount", "-o", shrunk, str(store)], check=True)
            filler = fill(store)
            result["free bytes after filling"] = free_kb(store) * 1024
            progress(f"store uses {result['store used MB at start']} MB; filesystem full ({free_kb(store)} KB free)")
            first = await http.post(whispers, json={"role": "detective", "text": "The van was blue."})
            result["first whisper on the full disk"] = first.status_code
            written, started, failure = 0, time.monotonic(), None
            generation = (await services.ledger.cases.get_case(case_id)).generation
            scope = role_scope(case_id, "detective", generation)
            while written < args.max_cards:
                drafts = [
                    CardDraft(content=f"Routine note {written + i}: gate {i} logged nothing.", topic="f", kind="note")
                    for i in range(BATCH)
                ]
                batch_started = time.monotonic()
                grant = await services.vault.grant(case_id, generation, Purpose.WHISPER, reads=[scope], writes=[scope])
                try:
                    await gateway.write_many(grant, drafts)
                except Exception as exc:
                    failure = exc
                    break
                finally:
                    grant.close()
                written += BATCH
                spent = time.monotonic() - batch_started
                progress(f"  {written:,} cards written on the full disk ({spent:.1f} s for the last {BATCH})")
            result["cards written on the full disk"] = written
            result["seconds writing"] = round(time.monotonic() - started, 1)
            if failure is not None:
                result["failure"] = f"{type(failure).__name__}: {failure} ({driver_code(failure)})"
                refused = await http.post(whispers, json={"role": "detective", "text": "A note on a full disk."})
                result["whisper after the failure"] = f"{refused.status_code} {refused.json()['detail']['code']}"
                result["ready after the failure"] = (await http.get("/api/ready")).status_code
            filler.unlink()
            progress(f"filler removed: {free_kb(store)} KB free")
            deadline = time.monotonic() + 120
            while True:  # the service may need its supervisor first
                again = await http.post(whispers, json={"role": "detective", "text": "A note on a full disk."})
                if again.status_code == 201 or time.monotonic() > deadline:
                    break
                await asyncio.sleep(1)
            result["same whisper after freeing"] = again.status_code
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="3G", help="tmpfs size while seekdb bootstraps")
    parser.add_argument("--slack-mb", type=int, default=8, help="room left above what seekdb uses before filling")
    parser.add_argument("--max-cards", type=int, default=20000)
    parser.add_argument("--call-timeout", type=float, default=30.0)
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root: it mounts a tmpfs")
    data_dir = Path(tempfile.mkdtemp(prefix="bureau-diskfull-"))
    store = data_dir / "seekdb"
    store.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.size}", "tmpfs", str(store)], check=True)
    load = os.getloadavg()
    try:
        result = asyncio.run(measure(args, data_dir))
    finally:
        subprocess.run(["umount", "--lazy", str(store)], check=False)  # seekdb may take a moment to leave
    print(f"| what | value |\n|---|---|\n| load average before | {load[0]:.1f} |")
    for key, value in result.items():
        print(f"| {key} | {value} |")


if __name__ == "__main__":
    main()
