"""Start-up of a real `bureau serve` process: a progress line per phase, `/api/ready` naming the phase while
starting, the URL printed only once the server answers, and a failed phase ending the process."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from bureau.bootstrap.phases import PHASE_LABELS, STEPS, Phase
from bureau.ledger.database import create_ledger_engine, migrate
from bureau.ledger.repository import Ledger
from contract import OpenApiContract
from live_server import START_DEADLINE_S, LiveServer, free_port, stop_process

# What /api/ready can report: the phases after the port opened, before the service is ready.
SERVING_PHASES = STEPS[STEPS.index(Phase.LISTENING) :]


class Output:
    """A process's stdout (and stderr) lines, read as they come by a thread."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def snapshot(self) -> list[str]:
        with self._changed:
            return list(self.lines)

    def wait_for(self, wanted: Callable[[str], bool], timeout_s: float) -> str:
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                found = next((line for line in self.lines if wanted(line)), None)
                if found is not None:
                    return found
                remaining = deadline - time.monotonic()
                assert remaining > 0, "line not printed in time:\n" + "\n".join(self.lines[-40:])
                self._changed.wait(remaining)


def serve(data_dir: Path, port: int, **env: str) -> subprocess.Popen[str]:
    server = LiveServer(data_dir, port=port, **env)
    return subprocess.Popen(
        server.command(),
        cwd=data_dir,
        env=server.environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_each_phase_is_shown_and_the_url_comes_only_once_the_server_answers(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = serve(tmp_path, port)
    output = Output(process)
    is_url_line = lambda line: line.startswith(f"AI Intelligence Bureau on {url}")  # noqa: E731
    reported: list[str] = []
    contract: OpenApiContract | None = None
    try:
        deadline = time.monotonic() + START_DEADLINE_S
        with httpx.Client(timeout=5) as http:
            while True:
                assert time.monotonic() < deadline, "not ready in time:\n" + "\n".join(output.snapshot()[-40:])
                assert process.poll() is None, "\n".join(output.snapshot()[-40:])
                printed_before = output.snapshot()
                try:
                    answer = http.get(url + "/api/ready")
                except httpx.TransportError:
                    answer = None  # the port is not open yet
                if answer is not None and answer.status_code == 200:
                    break
                # Not ready (no answer, or 503): the URL must not have been printed before we asked.
                assert not any(is_url_line(line) for line in printed_before)
                if answer is not None:
                    # The document is served while starting (it is not under /api): answers match it.
                    contract = contract or OpenApiContract(http.get(url + "/openapi.json").json())
                    contract.check(answer)
                    assert answer.status_code == 503
                    detail = answer.json()["detail"]
                    assert detail["code"] == "STARTING"
                    assert detail["phase"] in SERVING_PHASES
                    assert PHASE_LABELS[Phase(detail["phase"])] in detail["message"]
                    assert answer.headers["Retry-After"] == "1"
                    health = http.get(url + "/api/health")  # every API route waits for start-up alike
                    contract.check(health)
                    assert health.status_code == 503 and health.json()["detail"]["code"] == "STARTING"
                    reported.append(detail["phase"])
                time.sleep(0.05)
        url_line = output.wait_for(is_url_line, timeout_s=60)
        assert "ready in" in url_line
    finally:
        stop_process(process)

    # The slow phase (opening the store takes seconds) was seen, and phases only ever moved forward.
    assert Phase.MEMORY in reported
    order = [STEPS.index(Phase(p)) for p in reported]
    assert order == sorted(order)
    lines = output.snapshot()
    progress = [i for step in STEPS for i, line in enumerate(lines) if PHASE_LABELS[step] in line]
    assert len(progress) == len(STEPS) and progress == sorted(progress), "\n".join(lines)
    assert progress[-1] < lines.index(url_line)
    assert not any("Uvicorn running on" in line for line in lines)  # its own URL line would come too early


def test_a_phase_that_fails_after_the_port_opened_ends_the_process_with_the_reason(tmp_path: Path) -> None:
    engine = create_ledger_engine(f"sqlite:///{tmp_path / 'bureau.db'}")
    migrate(engine)
    try:
        asyncio.run(Ledger(engine).slots.claim_slot("another-live-instance", wanted=5))
    finally:
        engine.dispose()
    process = serve(tmp_path, free_port(), BUREAU_WORKER_ID="5")
    output = Output(process)
    try:
        returncode = process.wait(timeout=START_DEADLINE_S)
    finally:
        stop_process(process)
    lines = output.snapshot()
    text = "\n".join(lines)
    assert returncode == 2, text
    assert "BUREAU_WORKER_ID=5 is held by another live instance" in text
    assert any(PHASE_LABELS[Phase.WORKER_ID] in line for line in lines)
    assert any("start-up failed" in line for line in lines)
    assert not any(PHASE_LABELS[Phase.MEMORY] in line for line in lines)  # it stopped at the failed phase
    assert not any(line.startswith("AI Intelligence Bureau on") for line in lines)
