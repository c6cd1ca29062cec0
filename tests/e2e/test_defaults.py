"""The README's path exactly as a newcomer meets it: `bureau serve` with no settings at all, from an empty working
directory, so the data directory is the relative default `./data` and the vault `./vault` beside it. Every other
test passes an absolute data directory; a relative one once put the store in a temporary directory that vanished
seconds after "ready". Then the data directory refuses to start without its own vault (docs/operations.md,
"The vault")."""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from bureau.bootstrap.runtime import MAINTENANCE_INTERVAL_S
from bureau.vault.crypto import new_key
from bureau.vault.kek import read_kek
from bureau.vault.opening import VaultLocation, create_vault
from disk_scan import scan_bytes
from live_server import START_DEADLINE_S, free_port, open_vault_of, stop_process
from process_tree import is_gone, seekdb_child
from vault_keys import encodings

REPO = Path(__file__).resolve().parents[2]
SMOKE = REPO / "scripts" / "smoke_game.py"
WATCH_S = 2 * MAINTENANCE_INTERVAL_S  # past the store supervisor's next pings


def no_settings() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("BUREAU_")}


def bureau(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bureau.cli", *args],
        cwd=cwd,
        env=no_settings(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_DEADLINE_S
    while time.monotonic() < deadline:
        assert process.poll() is None, f"bureau serve exited:\n{log.read_text()[-3000:]}"
        try:
            if httpx.get(url + "/api/ready", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"not ready in {START_DEADLINE_S} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def cases() -> dict[str, str]:
    """The cases the first test leaves for the second, by name."""
    return {}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty working directory with no `.env`: nothing but the defaults."""
    return tmp_path_factory.mktemp("newcomer")


def test_serve_with_no_settings_keeps_its_store_in_cwd_data(workdir: Path, cases: dict[str, str]) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = workdir.parent / f"{workdir.name}-serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "bureau.cli", "serve", "--port", str(port)],
            cwd=workdir,
            env=no_settings(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_ready(url, process, log)
        seekdb = seekdb_child(process.pid)
        store = workdir / "data" / "seekdb"
        assert store.is_dir(), f"no store at {store}"
        assert (store / "run" / "seekdb.pid").read_text().strip() == str(seekdb)
        assert (workdir / "data" / "bureau.db").is_file()
        vault = workdir / "vault"  # the keys beside the data, never inside it
        assert (vault / "vault.db").is_file() and (vault / "kek").is_file()
        assert stat.S_IMODE(vault.stat().st_mode) == 0o700 and stat.S_IMODE((vault / "kek").stat().st_mode) == 0o600

        # The store must still be up after the supervisor has looked at it a few times.
        watched_until = time.monotonic() + WATCH_S
        while time.monotonic() < watched_until:
            health = httpx.get(url + "/api/health", timeout=5).json()
            assert health["memory"]["status"] == "up", health
            assert not is_gone(seekdb), "the store's seekdb server died"
            time.sleep(0.5)

        played = subprocess.run(
            [sys.executable, str(SMOKE), "--url", url, "--watch-s", "0"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert played.returncode == 0, played.stdout + played.stderr
        assert "every answer as promised" in played.stdout
        [cases["played"]] = [
            line.split()[2] for line in played.stdout.splitlines() if line.split()[:2] == ["new", "case"]
        ]
        cases["spare"] = httpx.post(url + "/api/cases", json={"scenario_id": "mole"}, timeout=60).json()["case"]["id"]
        assert store.is_dir() and httpx.get(url + "/api/health", timeout=5).json()["memory"]["status"] == "up"
        assert not [p for p in Path("/tmp").glob("bureau-powermem-*/data") if p.exists()]
    finally:
        stop_process(process)
    assert is_gone(seekdb), "the seekdb server outlived bureau serve"
    assert "reopening" not in log.read_text(), log.read_text()[-3000:]

    # The vault: ./vault beside ./data, not in it; its KEK nowhere in the data.
    data, vault = workdir / "data", workdir / "vault"
    assert sorted(p.name for p in workdir.iterdir()) == ["data", "vault"]
    assert not vault.resolve().is_relative_to(data.resolve())
    assert scan_bytes(data, encodings({"KEK": read_kek(vault / "kek")})) == {}


def refused(workdir: Path, *args: str) -> str:
    """`bureau serve` from `workdir` with no settings but `args`: it must refuse to start (exit 2) before it
    listens; what it said."""
    done = bureau("serve", "--port", str(free_port()), *args, cwd=workdir)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stderr


def test_the_data_dir_refuses_to_start_without_its_own_vault(workdir: Path, cases: dict[str, str]) -> None:
    """A missing vault, another vault, a missing or wrong KEK, a vault inside the data: each refused, naming the
    data and the vault, and nothing made in their place (the server never makes new keys for old data)."""
    assert len(cases) == 2, "the serve test did not run"
    data, vault, away = workdir / "data", workdir / "vault", workdir.parent / f"{workdir.name}-vault-away"
    kek = vault / "kek"
    vault.rename(away)
    try:
        said = refused(workdir)
        assert str(data) in said and str(vault) in said and "missing" in said, said
        assert not vault.exists(), "a vault was made for data sealed with another"

        other = create_vault(VaultLocation(vault, f"sqlite:///{vault / 'vault.db'}", kek), "another-vault-id")
        other.close()
        said = refused(workdir)
        assert str(data) in said and str(vault) in said and "another-vault-id" in said, said
    finally:
        shutil.rmtree(vault, ignore_errors=True)
        away.rename(vault)

    own_kek = kek.read_bytes()
    kek.unlink()
    try:
        said = refused(workdir)
        assert str(data) in said and str(kek) in said and "missing" in said, said
        kek.write_bytes(base64.b64encode(new_key()) + b"\n")  # a KEK, but not this vault's
        said = refused(workdir)
        assert str(data) in said and str(kek) in said and "not the key" in said, said
    finally:
        kek.unlink(missing_ok=True)
        kek.write_bytes(own_kek)
        kek.chmod(0o600)

    said = refused(workdir, "--vault-dir", "data/vault")
    assert str(data) in said and str(data / "vault") in said and "inside the data directory" in said, said
    assert not (data / "vault").exists()
    assert sorted(p.name for p in workdir.iterdir()) == ["data", "vault"]


def test_the_other_commands_use_the_same_data_dir(workdir: Path, cases: dict[str, str]) -> None:
    """setup, preflight, erase and clear, run with no settings from the same directory, find the store, the
    ledger and the vault that `serve` made there (the first test left two cases in them; the refused starts
    changed nothing)."""
    assert len(cases) == 2, "the serve test did not run"
    setup = bureau("setup", cwd=workdir)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    preflight = bureau("preflight", cwd=workdir)
    assert preflight.returncode == 0, preflight.stdout + preflight.stderr
    assert str(workdir / "data") in preflight.stdout and str(workdir / "vault") in preflight.stdout

    assert "Dry run: 2 case(s) would be erased" in bureau("clear", cwd=workdir).stdout
    erased = bureau("erase", "--case", cases["played"], cwd=workdir)
    assert erased.returncode == 0, erased.stdout + erased.stderr
    again = bureau("erase", "--case", cases["played"], cwd=workdir)
    assert again.returncode == 1 and "nothing erased" in again.stderr, again.stderr
    assert "Dry run: 1 case(s) would be erased" in bureau("clear", cwd=workdir).stdout

    cleared = bureau("clear", "--confirm", cwd=workdir)
    assert cleared.returncode == 0, cleared.stderr
    assert "Erased 1 case(s)." in cleared.stdout
    assert "Dry run: 0 case(s)" in bureau("clear", cwd=workdir).stdout
    assert sorted(p.name for p in workdir.iterdir()) == ["data", "vault"], "a command wrote outside ./data, ./vault"
    vault = open_vault_of(workdir / "vault")  # the one `serve` made: every command found it
    try:
        assert not any(asyncio.run(vault.has_keys(case_id)) for case_id in cases.values())  # erased: no key left
    finally:
        vault.close()
