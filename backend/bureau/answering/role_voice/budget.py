"""Limits on model calls: a total request budget (shared by every instance when a store for it is given),
a concurrency cap per process with a short wait, and the recent outcomes that mark the role voice as degraded."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from typing import Protocol

from bureau.config import Settings

BUDGET_COUNTER = "llm_requests"


class SharedBudget(Protocol):
    """A deployment-wide counter (the ledger): N instances spend one budget, not N."""

    async def take_from_budget(self, name: str, limit: int) -> bool: ...


class CallBudget:
    def __init__(
        self, settings: Settings, *, slot_wait_s: float, degraded_after: int, shared: SharedBudget | None = None
    ) -> None:
        self.settings = settings
        self.shared = shared
        self._shared_spent = False  # the shared budget said no: every instance has spent it
        self.slot_wait_s = slot_wait_s
        self._slots: asyncio.Semaphore | None = None
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self.requests_used = 0
        self._outcomes: deque[bool] = deque(maxlen=max(1, degraded_after))

    @property
    def exhausted(self) -> bool:
        return self._shared_spent or self.requests_used >= self.settings.llm_request_budget

    @property
    def degraded(self) -> bool:
        """True when the budget is spent or the last N provider calls all failed."""
        recent = list(self._outcomes)
        failing = len(recent) == self._outcomes.maxlen and not any(recent)
        return failing or self.exhausted

    def record(self, succeeded: bool) -> None:
        self._outcomes.append(succeeded)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._slots_loop is not loop:
            self._slots = asyncio.Semaphore(self.settings.llm_max_concurrency)
            self._slots_loop = loop
        return self._slots

    async def acquire_slot(self) -> asyncio.Semaphore | None:
        """A held concurrency slot (release it when done), or None when none freed up within the wait."""
        slots = self._semaphore()
        try:
            await asyncio.wait_for(slots.acquire(), timeout=self.slot_wait_s)
        except TimeoutError:
            return None
        return slots

    async def take(self) -> bool:
        """Spend one request of the budget; False when it is spent (by this process, or by all of them)."""
        with self._lock:
            if self.requests_used >= self.settings.llm_request_budget:
                return False
            self.requests_used += 1
        if self.shared is not None and not await self.shared.take_from_budget(
            BUDGET_COUNTER, self.settings.llm_request_budget
        ):
            self._shared_spent = True
            return False
        return True
