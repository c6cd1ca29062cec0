"""Real database servers on loopback for tests (CI has no Docker): the `seekdb` server binary shipped in the
pylibseekdb wheel (TCP mode) and a throwaway Debian PostgreSQL cluster (initdb + pg_ctl)."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pylibseekdb
import pymysql
import pytest

from live_server import free_port, stop_process

START_DEADLINE_S = 60.0


def pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _as_postgres(command: list[str]) -> list[str]:
    """The server refuses to run as root; CI runs as root."""
    return ["su", "postgres", "-c", " ".join(command)] if os.geteuid() == 0 else command


class PostgresCluster:
    """initdb + pg_ctl on a free loopback port, trust auth, a database `bureau` (the ledger) and a database
    `vault` (a shared deployment's vault: its keys never in the ledger's database)."""

    def __init__(self) -> None:
        self.initdb, self.pg_ctl = pg_bin("initdb"), pg_bin("pg_ctl")
        self.base: Path | None = None
        self.port = 0

    @property
    def available(self) -> bool:
        return bool(self.initdb and self.pg_ctl)

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/bureau"

    @property
    def vault_url(self) -> str:
        return f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/vault"

    def start(self) -> PostgresCluster:
        assert self.initdb and self.pg_ctl
        # Not under pytest's temp tree: that is private to root, and the server runs as `postgres`.
        self.base = Path(tempfile.mkdtemp(prefix="bureau-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.base, "postgres")
        data, self.port = self.base / "data", free_port()
        initdb = [self.initdb, "-D", str(data), "-A", "trust", "-U", "postgres"]
        subprocess.run(_as_postgres(initdb), check=True, capture_output=True)
        options = f"'-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 -c max_connections=200'"
        start = [self.pg_ctl, "-D", str(data), "-o", options, "-l", str(self.base / "log"), "-w", "start"]
        subprocess.run(_as_postgres(start), check=True, capture_output=True)
        self.psql("CREATE DATABASE bureau", database="postgres")
        self.psql("CREATE DATABASE vault", database="postgres")
        return self

    def psql(self, sql: str, database: str = "bureau") -> str:
        command = ["psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database, "-Atc", sql]
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()

    def dump(self, database: str, into: Path) -> None:
        """`pg_dump` of one database into a file: what a backup of a PostgreSQL ledger holds."""
        command = [pg_bin("pg_dump") or "pg_dump", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres"]
        subprocess.run([*command, "-d", database, "-f", str(into)], check=True, capture_output=True)

    def stop(self) -> None:
        if self.base is None:
            return
        stop = [str(self.pg_ctl), "-D", str(self.base / "data"), "-m", "fast", "stop"]
        subprocess.run(_as_postgres(stop), capture_output=True)
        shutil.rmtree(self.base, ignore_errors=True)
        self.base = None


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresCluster]:
    """A started throwaway cluster, stopped afterwards; the test is skipped where the server is not installed."""
    cluster = PostgresCluster()
    if not cluster.available:
        pytest.skip("PostgreSQL server binaries not installed (.ci/run installs Debian's postgresql)")
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


class SeekdbServer:
    """`seekdb --base-dir --port --nodaemon --log-level=WARN`. It listens on every interface with a
    passwordless root; `bureau setup` sets `password` (and creates the database) as in a deployment."""

    def __init__(self, base: Path, password: str = "") -> None:
        self.base = base
        self.password = password
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> SeekdbServer:
        self.port = free_port()
        self._launch()
        self._wait_for_root("").close()  # fresh: passwordless root until `bureau setup` sets self.password
        return self

    def restart(self) -> SeekdbServer:
        """Start again on the same base directory and port (after `stop` or a kill), as a supervisor would;
        root has the password `bureau setup` gave it by now."""
        assert self.port and (self.process is None or self.process.poll() is not None)
        self._launch()
        self._wait_for_root(self.password).close()
        return self

    def _launch(self) -> None:
        binary = Path(pylibseekdb.__file__).with_name("seekdb")
        env = {**os.environ, "TELEMETRY_ENABLED": "false", "LD_LIBRARY_PATH": str(binary.parent)}
        command = [str(binary), f"--base-dir={self.base}", f"--port={self.port}", "--nodaemon", "--log-level=WARN"]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def _wait_for_root(self, password: str) -> pymysql.Connection:
        assert self.process is not None
        deadline = time.monotonic() + START_DEADLINE_S
        while True:
            # A busy port makes seekdb exit while something else answers: check the process is alive too.
            assert self.process.poll() is None, "seekdb server exited"
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return pymysql.connect(host="127.0.0.1", port=self.port, user="root", password=password)
            except (OSError, pymysql.err.OperationalError):
                assert time.monotonic() < deadline, "seekdb server did not start"
                time.sleep(0.2)

    def connect(self, database: str | None = None) -> pymysql.Connection:
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", password=self.password, database=database)

    def query(self, sql: str, *params: object, database: str = "bureau") -> list[tuple]:
        connection = self.connect(database)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, params or None)
                return list(cursor.fetchall())
        finally:
            connection.close()

    def env(self, database: str = "bureau") -> dict[str, str]:
        """`BUREAU_*` settings for an instance using this server as its memory store."""
        return {
            "BUREAU_SEEKDB_HOST": "127.0.0.1",
            "BUREAU_SEEKDB_PORT": str(self.port),
            "BUREAU_SEEKDB_USER": "root",
            "BUREAU_SEEKDB_PASSWORD": self.password,
            "BUREAU_SEEKDB_DATABASE": database,
        }

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
        self.process = None
