"""Limits on model calls in this process: a total request budget, a concurrency cap with a short wait, and
the recent outcomes that mark the role voice as degraded."""

from __future__ import annotations

import asyncio
import threading
from collections import deque

from bureau.config import Settings


class CallBudget:
    def __init__(self, settings: Settings, *, slot_wait_s: float, degraded_after: int) -> None:
        self.settings = settings
        self.slot_wait_s = slot_wait_s
        self._slots: asyncio.Semaphore | None = None
        self._slots_loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self.requests_used = 0
        self._outcomes: deque[bool] = deque(maxlen=max(1, degraded_after))

    @property
    def exhausted(self) -> bool:
        return self.requests_used >= self.settings.llm_request_budget

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

    def take(self) -> bool:
        """Spend one request of the budget; False when it is spent."""
        with self._lock:
            if self.requests_used >= self.settings.llm_request_budget:
                return False
            self.requests_used += 1
            return True
