"""`bureau vault rotate-kek` (issue 34.4): every compartment key re-wrapped under a new KEK, the data untouched
(every file under the data directory the same, byte for byte), the old KEK gone afterwards, and a server on the
data opens everything as before. A rotation that crashed halfway (here: its first batch of one key committed,
then an error) leaves both KEKs and every key openable; running the command again finishes it."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from bureau.vault import Vault
from bureau.vault import rotation as rotation_module
from bureau.vault.crypto import fingerprint, unwrap
from bureau.vault.kek import next_path, read_kek
from bureau.vault.opening import KEK_ID
from bureau.vault.rotation import rotate_kek
from bureau.vault.store import VaultStore
from bureau.vault.vault import KEK_NEXT
from disk_scan import scan_bytes
from helpers import QUESTION
from live_server import LiveServer, open_vault_of
from vault_keys import count_kinds, encodings, key_material


class CrashAfterFirstBatch(RuntimeError):
    """What the test's rotation dies of, once its first batch has committed."""


def file_digests(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }


def what_the_operator_sees(http: httpx.Client, case_ids: list[str]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for case_id in case_ids:
        snapshot = http.get(f"/api/cases/{case_id}").json()
        record = http.get(f"/api/cases/{case_id}/record").json()["entries"]
        seen[case_id] = {"spaces": snapshot["spaces"], "answers": snapshot["answers"], "record": record}
    return seen


def every_key_opens(vault: Vault) -> dict[str, int]:
    """Unwrap every compartment key (under whichever KEK its row names) and every item key under it; how many
    of each."""
    counted = count_kinds(key_material(vault))
    del counted["KEKs"]
    return counted


def rotate_cli(data_dir: Path, vault_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BUREAU_")}
    command = [sys.executable, "-m", "bureau.cli", "vault", "rotate-kek", "--data-dir", str(data_dir)]
    return subprocess.run(
        [*command, "--vault-dir", str(vault_dir)], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_rotating_the_kek_rewraps_every_key_leaves_the_data_alone_and_survives_a_crash_halfway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with LiveServer(data) as server, httpx.Client(base_url=server.url, timeout=120) as http:
        made = [http.post("/api/cases", json={"scenario_id": "safe-combination"}) for _ in range(2)]
        case_ids = [response.json()["case"]["id"] for response in made]
        whisper = {"role": "detective", "text": "The gardener saw a blue van at midnight.", "source": "Ada"}
        assert http.post(f"/api/cases/{case_ids[0]}/whispers", json=whisper).status_code == 201
        for case_id in case_ids:
            asked = http.post(f"/api/cases/{case_id}/interrogations", json={"role": "informant", "question": QUESTION})
            assert asked.status_code == 200
        before = what_the_operator_sees(http, case_ids)
        vault_dir = server.vault_dir
    kek_file = vault_dir / "kek"
    old_kek = read_kek(kek_file)
    data_before = file_digests(data)

    # A rotation that dies after its first batch (of one key) committed.
    vault = open_vault_of(vault_dir)
    try:
        total = sum(vault.store.count_under().values())
        assert total >= 2 * 6  # every compartment of two cases: enough for a crash halfway
        rewrap = VaultStore.rewrap

        def first_batch_then_crash(store: VaultStore, rows: Any) -> int:
            done = rewrap(store, rows)  # committed
            raise CrashAfterFirstBatch(f"crashed after re-wrapping {done} key(s)")

        monkeypatch.setattr(rotation_module, "REWRAP_BATCH", 1)
        monkeypatch.setattr(VaultStore, "rewrap", first_batch_then_crash)
        with pytest.raises(CrashAfterFirstBatch):
            rotate_kek(vault)
        monkeypatch.undo()
    finally:
        vault.close()

    # Halfway: both KEKs on disk, keys under each, and every key still opens (a fresh process's view).
    new_kek = read_kek(next_path(kek_file))
    assert read_kek(kek_file) == old_kek and new_kek != old_kek
    vault = open_vault_of(vault_dir)
    try:
        under = vault.store.count_under()
        assert under == {fingerprint(new_kek): 1, fingerprint(old_kek): total - 1}, under
        assert vault.store.meta(KEK_NEXT) == fingerprint(new_kek)
        halfway_opened = every_key_opens(vault)
    finally:
        vault.close()

    # Run again: it finishes. The old KEK is gone; every key is under the new one; the data was not touched.
    done = rotate_cli(data, vault_dir)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{total - 1} key(s) re-wrapped; the old KEK is gone" in done.stdout, done.stdout
    assert read_kek(kek_file) == new_kek and not next_path(kek_file).exists()
    vault = open_vault_of(vault_dir)
    try:
        assert vault.store.count_under() == {fingerprint(new_kek): total}
        assert vault.store.meta(KEK_ID) == fingerprint(new_kek) and vault.store.meta(KEK_NEXT) is None
        assert every_key_opens(vault) == halfway_opened
        for case_id in case_ids:  # each compartment key unwraps under the new KEK, and only under it
            for stored in vault.store.compartments(case_id):
                assert unwrap(new_kek, stored.wrapped)
    finally:
        vault.close()
    old_forms = encodings({"old KEK": old_kek})
    assert scan_bytes(vault_dir, old_forms) == {} and scan_bytes(data, old_forms) == {}
    assert file_digests(data) == data_before

    with LiveServer(data) as server, httpx.Client(base_url=server.url, timeout=120) as http:
        assert what_the_operator_sees(http, case_ids) == before
        asked = http.post(f"/api/cases/{case_ids[0]}/interrogations", json={"role": "informant", "question": QUESTION})
        assert asked.status_code == 200 and asked.json()["certainty"] == "known"
