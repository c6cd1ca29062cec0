"""Erasure that reaches the disk: after a case is erased (API and CLI), no plaintext of its memories,
questions or answers can be found in any file under the data directory, the embedded store's data and
redo/log files included (scanned byte-wise, and inside every zstd/zlib stream found there).

A control proves the scan can see the threat: text handed to the store unsealed, then deleted, is still
found in its files. Sealing (docs/erasure.md) is why the game's own text never is.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import string
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx

from bureau.api.deps import Services
from disk_scan import scan
from helpers import NewCase, ask, informant_secret_card, publish
from live_server import vault_beside


def marker() -> str:
    return "zq" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(14))


async def play(client: httpx.AsyncClient, new_case: NewCase, markers: list[str]) -> str:
    """Whispers, questions and answers carrying the markers, a publication and a cross-examination."""
    case = await new_case()
    case_id = case["case"]["id"]
    for role, m in zip(("informant", "suspect", "detective"), markers, strict=False):
        response = await client.post(
            f"/api/cases/{case_id}/whispers", json={"role": role, "text": f"Marker {m} hides in the cellar."}
        )
        assert response.status_code == 201
        answer = await ask(client, case_id, role, f"Where does marker {m} hide?")
        assert m in answer["answer"]  # the answer quotes the whisper: it is private text too
    assert (await publish(client, case_id, "informant", informant_secret_card(case)["id"])).status_code == 201
    joint = await client.post(
        f"/api/cases/{case_id}/cross-examinations",
        json={"roles": ["informant", "suspect"], "question": f"Where does marker {markers[0]} or {markers[1]} hide?"},
    )
    assert joint.status_code == 200 and joint.json()["conclusion"]["sealed"] is True
    return case_id


async def write_unsealed_control(services: Services, text: str) -> None:
    """The threat, shown: text handed to the store as it is (as PowerMem's own add() would), then deleted."""
    gateway = services.gateway

    def blocking() -> None:
        storage = gateway.runner.client().storage
        now = datetime.now(UTC)
        vector = gateway.embedder.embed_query(text)
        row = {"content": text, "embedding": vector, "user_id": "control:unsealed", "agent_id": "control"}
        memory_id = storage.add_memory({**row, "metadata": {}, "filters": {}, "created_at": now, "updated_at": now})
        storage.delete_memory(memory_id, user_id="control:unsealed", agent_id="control")

    await asyncio.get_running_loop().run_in_executor(gateway.runner.executor, blocking)


def cli_erase(data_dir: Path, case_id: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BUREAU_")}
    command = [sys.executable, "-m", "bureau.cli", "erase", "--case", case_id, "--data-dir", str(data_dir)]
    command += ["--vault-dir", str(vault_beside(data_dir))]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=180, check=False)


async def test_no_plaintext_of_an_erased_case_survives_anywhere_under_the_data_dir(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    data_dir = services.settings.data_dir
    by_api, by_cli, kept = [marker() for _ in range(3)], [marker() for _ in range(3)], [marker()]
    erased_via_api = await play(client, new_case, by_api)
    erased_via_cli = await play(client, new_case, by_cli)
    neighbour = (await new_case())["case"]["id"]
    await client.post(
        f"/api/cases/{neighbour}/whispers", json={"role": "suspect", "text": f"Marker {kept[0]} hides in the cellar."}
    )
    control = marker()
    await write_unsealed_control(services, f"Control {control} was written unsealed.")

    before = scan(data_dir, [*by_api, *by_cli, *kept, control, erased_via_api])
    assert control in before, "the scan must see what the store keeps after a delete"
    assert erased_via_api in before  # the case's rows are in the scanned files (its id is not secret)
    assert not set(before) & {*by_api, *by_cli, *kept}  # sealed before the store ever saw them

    assert (await client.delete(f"/api/cases/{erased_via_api}")).status_code == 204
    result = cli_erase(data_dir, erased_via_cli)
    assert result.returncode == 0, result.stderr[-2000:]

    after = scan(data_dir, [*by_api, *by_cli])
    assert after == {}, after
    for case_id in (erased_via_api, erased_via_cli):
        for path in ("", "/stage", "/record", "/subject-access", "/stage/record"):
            response = await client.get(f"/api/cases/{case_id}{path}")
            assert (response.status_code, response.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND"), path
        assert case_id not in services.vault.store.cases()
        assert case_id not in await services.gateway.list_case_ids()
    # The neighbour is untouched and still searchable.
    answer = await ask(client, neighbour, "suspect", f"Where does marker {kept[0]} hide?")
    assert answer["certainty"] == "known" and kept[0] in answer["answer"]
