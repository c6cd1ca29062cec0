"""The other two memory backends play the same game: PowerMem's sqlite store, and remote seekdb over TCP
(the `seekdb` server shipped in the pylibseekdb wheel, on loopback)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pylibseekdb
import pymysql
import pytest

from bureau.config import Settings
from bureau.memory.compaction import Compaction
from bureau.memory.embedders import build_embedder
from bureau.memory.gateway import MemoryGateway
from bureau.vault.opening import VaultLocation, create_vault
from helpers import play_four_acts
from live_server import LiveServer, free_port
from search_parity import assert_search_matches_powermem, case_with_cards


def test_sqlite_backend(tmp_path_factory: pytest.TempPathFactory) -> None:
    server = LiveServer(tmp_path_factory.mktemp("sqlite-data"), BUREAU_MEMORY_BACKEND="sqlite").start()
    try:
        play_four_acts(server, "sqlite")
    finally:
        server.stop()


@pytest.fixture(scope="module")
def seekdb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    binary = Path(pylibseekdb.__file__).with_name("seekdb")
    base = tmp_path_factory.mktemp("seekdb-server")
    port = free_port()
    env = {**os.environ, "TELEMETRY_ENABLED": "false", "LD_LIBRARY_PATH": str(binary.parent)}
    command = [str(binary), f"--base-dir={base}", f"--port={port}", "--nodaemon", "--log-level=WARN"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        # A busy port makes seekdb exit while something else answers: check the process is alive too.
        assert process.poll() is None, "seekdb server exited"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                connection = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
            break
        except (OSError, pymysql.err.OperationalError):
            assert time.monotonic() < deadline, "seekdb server did not start"
            time.sleep(0.2)
    with connection.cursor() as cursor:
        cursor.execute("CREATE DATABASE IF NOT EXISTS bureau")  # remote mode needs an existing database
    connection.close()
    yield port
    process.terminate()
    process.wait(timeout=30)


def test_remote_seekdb_backend(tmp_path_factory: pytest.TempPathFactory, seekdb_server: int) -> None:
    data_dir = tmp_path_factory.mktemp("remote-data")
    remote = {
        "BUREAU_SEEKDB_HOST": "127.0.0.1",
        "BUREAU_SEEKDB_PORT": str(seekdb_server),
        "BUREAU_SEEKDB_DATABASE": "bureau",
        "BUREAU_WORKER_ID": "1",  # its SQLite ledger is local: a shared store needs an explicit worker id
    }
    server = LiveServer(data_dir, **remote)
    # An instance never creates the collection (two at once can crash the server): it says what to run.
    with pytest.raises(RuntimeError, match="run `bureau setup` once"):
        server.start()
    setup = subprocess.run(
        [*server.command()[:3], "setup", "--data-dir", str(data_dir), "--vault-dir", str(server.vault_dir)],
        env=server.environment(),
        capture_output=True,
    )
    assert setup.returncode == 0, setup.stderr.decode()[-2000:]
    server.start()
    try:
        play_four_acts(server, "seekdb-remote")
        assert not (server.data_dir / "seekdb").exists()  # nothing embedded was started
    finally:
        server.stop()


async def test_the_seekdb_server_answers_the_gateway_s_search_as_powermem_s(
    tmp_path_factory: pytest.TempPathFactory, seekdb_server: int
) -> None:
    """Over TCP (pymysql: JSON comes back as text, parameters are %-formatted by the driver) the gateway's
    own statement returns what PowerMem's search returns, card by card; `prepare` is `bureau setup`'s path,
    which also makes the owner index."""
    settings = Settings(
        _env_file=None,
        env="test",
        data_dir=tmp_path_factory.mktemp("remote-parity"),
        seekdb_host="127.0.0.1",
        seekdb_port=seekdb_server,
        seekdb_database="bureau",
        worker_id=2,
    )
    gateway = MemoryGateway(settings, build_embedder(settings), worker_slot=2, prepare=True)
    where = tmp_path_factory.mktemp("remote-parity-vault")
    vault = create_vault(VaultLocation(where, f"sqlite:///{where / 'vault.db'}", where / "kek"), "parity")
    await gateway.start()
    gateway.runner.compaction = Compaction(after_deletes=300)
    try:
        assert gateway.backend_name == "seekdb-remote"
        case = await case_with_cards(gateway, vault, filler=300)
        await assert_search_matches_powermem(gateway, vault, case)
        assert await gateway.runner.run(gateway.runner.statements().has_owner_index)
        await gateway.erase_case(case)
        assert await gateway.compact_if_due(), "the server refused the compaction its deletes called for"
    finally:
        await gateway.close()
        vault.close()
