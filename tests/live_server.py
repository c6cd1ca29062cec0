"""Run `bureau serve` as a real OS process for tests: start, wait for health with a deadline, stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

from bureau.answering.local_model import free_port  # one definition, shared with the local model server
from bureau.vault import Vault

REPO = Path(__file__).resolve().parents[1]
START_DEADLINE_S = 90.0
# The passcodes of every passcode-mode server the tests start (`passcode_mode`).
OPERATOR_PASSCODE = "operator-pass-5150"
STAGE_PASSCODE = "stage-pass-6262"


def vault_beside(data_dir: Path) -> Path:
    """A data directory's vault in the tests: its sibling `<name>-vault`."""
    return data_dir.with_name(f"{data_dir.name}-vault")


def open_vault_of(vault_dir: Path) -> Vault:
    """A live server's vault, opened beside it (as a second process on the same files would)."""
    from bureau.vault.opening import VaultLocation, open_vault

    vault = open_vault(VaultLocation(vault_dir, f"sqlite:///{vault_dir / 'vault.db'}", vault_dir / "kek"))
    assert vault is not None, f"no vault at {vault_dir}"
    return vault


def stop_process(process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
    """Signal, wait up to 30 s, then kill."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


class LiveServer:
    """`bureau serve --port P --data-dir D *args` with `env` on top of a `BUREAU_`-free environment."""

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        cwd: Path | None = None,
        args: tuple[str, ...] = (),
        vault_dir: Path | None = None,
        **env: str,
    ) -> None:
        self.data_dir = data_dir
        # The vault beside the data directory, never in it (where the default `./vault` of a server started in
        # its data directory would be): docs/operations.md, "The vault".
        self.vault_dir = vault_dir or vault_beside(data_dir)
        self.cwd = cwd or data_dir
        self.port = port or free_port()
        self.args = args
        self.env = {"BUREAU_HEARTBEAT_S": "1", "BUREAU_PUBLICATION_LEASE_S": "2", **env}
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "bureau.cli",
            "serve",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
            *(() if "BUREAU_VAULT_DIR" in self.env else ("--vault-dir", str(self.vault_dir))),
            *self.args,
        ]

    def environment(self) -> dict[str, str]:
        """The developer's own `BUREAU_*` variables must not steer the server; only `self.env` does."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("BUREAU_")}
        env.update(self.env)
        return env

    def start(self) -> LiveServer:
        with self.log_path.open("ab") as log:  # the child keeps its own copy of the descriptor
            self.process = subprocess.Popen(
                self.command(), cwd=self.cwd, env=self.environment(), stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + START_DEADLINE_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"bureau serve exited early:\n{self.log_path.read_text()[-3000:]}")
            try:
                if httpx.get(self.url + "/api/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"bureau serve did not become healthy:\n{self.log_path.read_text()[-3000:]}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is not None:
            stop_process(self.process, sig)
        self.process = None

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def passcode_mode(data_dir: Path, **env: str) -> LiveServer:
    """A server with both passcodes set (`OPERATOR_PASSCODE`, `STAGE_PASSCODE`); `with` starts and stops it."""
    return LiveServer(data_dir, BUREAU_OPERATOR_PASSCODE=OPERATOR_PASSCODE, BUREAU_STAGE_PASSCODE=STAGE_PASSCODE, **env)
