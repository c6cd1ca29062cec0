"""The raw rows of some cases in a stopped server's store, read in a process of its own (embedded seekdb opens
one store per process, and the test process may hold another): how each row's text and named source are sealed
and which item each names. Nothing is opened: no vault, no key.

    python tests/store_probe.py <data dir> <case id>... -> JSON {case id: [{id, space, text, told_by, item,
    memory_type}]}
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def sealing(text: str) -> str:
    """`sealed:v2`, `sealed:v1`, `plain` (the text as it was given) or `` (none)."""
    if not text:
        return ""
    return ":".join(text.split(":", 2)[:2]) if text.startswith("sealed:") else "plain"


async def _rows(data_dir: Path, case_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    from bureau.config import Settings
    from bureau.memory import owner_rows
    from bureau.memory.embedders import build_embedder
    from bureau.memory.gateway import MemoryGateway

    settings = Settings(_env_file=None, data_dir=data_dir, vault_dir=data_dir.parent / "probe-never-made")
    gateway = MemoryGateway(settings, build_embedder(settings))
    await gateway.start()
    try:
        runner = gateway.runner
        nearest = runner.statements() if settings.memory_backend == "seekdb" else None

        def read() -> dict[str, list[dict[str, Any]]]:
            found: dict[str, list[dict[str, Any]]] = {}
            for case_id in case_ids:
                rows = owner_rows.raw_rows(runner.client(), nearest, f"case:{case_id}")
                found[case_id] = [
                    {
                        "id": str(row["id"]),
                        "space": str(row.get("agent_id")),
                        "text": sealing(str(row.get("memory") or "")),
                        "told_by": sealing(str((row.get("metadata") or {}).get("told_by") or "")),
                        "item": (row.get("metadata") or {}).get("item"),
                        "memory_type": (row.get("metadata") or {}).get("card_memory_type"),
                    }
                    for row in rows
                ]
            return found

        return await asyncio.get_running_loop().run_in_executor(runner.executor, read)
    finally:
        await gateway.close()


def stored_rows(data_dir: Path, case_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The probe, run in its own process, with no `BUREAU_*` setting of the developer's."""
    result = subprocess.run(
        [sys.executable, __file__, str(data_dir), *case_ids],
        env={k: v for k, v in os.environ.items() if not k.startswith("BUREAU_")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found: dict[str, list[dict[str, Any]]] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_rows(Path(sys.argv[1]), sys.argv[2:]))))
