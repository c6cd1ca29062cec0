"""Start-up phases and where a starting process is. Pure and light: the CLI imports it before anything heavy."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from enum import StrEnum


class Phase(StrEnum):
    """Start-up phases in order. Those before `LISTENING` happen before the port answers (console only)."""

    SETTINGS = "settings"
    CODE = "code"
    WEB = "web"
    LISTENING = "listening"
    LEDGER = "ledger"
    VAULT = "vault"
    WORKER_ID = "worker_id"
    MEMORY = "memory"
    RESPONDER = "responder"
    SCENARIOS = "scenarios"
    READY = "ready"
    FAILED = "failed"


PHASE_LABELS: dict[Phase, str] = {
    Phase.SETTINGS: "reading the settings",
    Phase.CODE: "loading the code",
    Phase.WEB: "building the app (API routes, web app)",
    Phase.LISTENING: "port open; GET /api/ready reports the phase",
    Phase.LEDGER: "opening the ledger and applying migrations",
    Phase.VAULT: "opening the vault of keys (bound to this ledger)",
    Phase.WORKER_ID: "leasing a worker id",
    Phase.MEMORY: "opening the memory store (takes a few seconds)",
    Phase.RESPONDER: "preparing the responder",
    Phase.SCENARIOS: "loading the scenarios",
    Phase.READY: "ready",
    Phase.FAILED: "start-up failed",
}
STEPS = [p for p in Phase if p not in (Phase.READY, Phase.FAILED)]

PhaseListener = Callable[[Phase, float], None]


class Startup:
    """Where start-up is: the current phase, how long it has run, and how it ended."""

    def __init__(self, listener: PhaseListener | None = None) -> None:
        self._listener = listener
        self._began = time.perf_counter()
        self.phase = Phase.SETTINGS
        self.error: BaseException | None = None
        self.failed_in: Phase | None = None
        self._done = asyncio.Event()
        self._listening = asyncio.Event()

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self._began

    @property
    def ready(self) -> bool:
        return self.phase is Phase.READY

    def enter(self, phase: Phase) -> None:
        self.phase = phase
        if phase is Phase.LISTENING:
            self._listening.set()
        if phase in (Phase.READY, Phase.FAILED):
            self._done.set()
        if self._listener is not None:
            self._listener(phase, self.elapsed_s)

    def fail(self, exc: BaseException) -> None:
        self.error, self.failed_in = exc, self.phase
        self.enter(Phase.FAILED)

    async def listening(self) -> None:
        await self._listening.wait()

    async def finished(self) -> bool:
        """Wait until start-up ended; True if the service is ready."""
        await self._done.wait()
        return self.ready
