"""Where an interrogation's time goes, step by step: wall-clock spans of the steps
`QuestionService.interrogate` awaits, and of every SQL statement the embedded seekdb driver runs. Used by
`bench/interrogation.py --steps`; it wraps the functions in this process only (nothing of it is in the product).

A step's span includes its own waits (a store call waits for the memory worker, a ledger call for its
thread), so the spans of one question do not add up to more than its total; what they leave out is the
graph, HTTP and the response.
"""

from __future__ import annotations

import functools
import inspect
import re
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from harness import markdown_table, percentile

_VECTOR = re.compile(r"'\[[^']*\]'")


class Steps:
    def __init__(self) -> None:
        self.spans: dict[str, list[float]] = defaultdict(list)
        self.recording = False

    def _record(self, name: str, started: float) -> None:
        if self.recording:
            self.spans[name].append((time.perf_counter() - started) * 1000)

    def wrap(self, owner: Any, attribute: str, name: str) -> None:
        original: Callable[..., Any] = getattr(owner, attribute)
        if inspect.iscoroutinefunction(original):

            @functools.wraps(original)
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    self._record(name, started)

            setattr(owner, attribute, timed_async)
        else:

            @functools.wraps(original)
            def timed(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    self._record(name, started)

            setattr(owner, attribute, timed)

    def install(self) -> None:
        """The steps of one interrogation, and the embedded driver's statements (when it is in use)."""
        from bureau.game import interrogation
        from bureau.game.commits import Commits
        from bureau.game.services import questions
        from bureau.ledger.cases import CaseRepository
        from bureau.memory.gateway import MemoryGateway

        self.wrap(questions.QuestionService, "interrogate", "whole command (QuestionService.interrogate)")
        self.wrap(questions, "checked_text", "question checked (screening)")
        self.wrap(Commits, "check_version", "case read (ledger)")
        self.wrap(MemoryGateway, "retrieve", "retrieve (encoder, the search, signals)")
        self.wrap(interrogation, "respond", "respond (evidence answer)")
        self.wrap(MemoryGateway, "write", "session record written")
        self.wrap(CaseRepository, "change_case", "commit (ledger)")
        self.wrap(MemoryGateway, "trim", "retention trim")
        self._time_statements()

    def _time_statements(self) -> None:
        from pyobvector.client import seekdb_engine

        cursor = seekdb_engine._SeekdbCursor
        original = cursor.execute
        steps = self

        def execute(self: Any, operation: str, parameters: Any = None) -> None:
            started = time.perf_counter()
            try:
                return original(self, operation, parameters)
            finally:
                shape = _VECTOR.sub("'[…]'", " ".join(operation.split()))[:48]
                steps._record(f"SQL {shape}… ({'rows' if self._rows else 'empty'})", started)

        cursor.execute = execute

    def table(self) -> str:
        rows = [
            [name, str(len(values)), f"{percentile(values, 0.5):.2f}", f"{percentile(values, 0.9):.2f}"]
            for name, values in self.spans.items()
        ]
        return markdown_table(["step", "calls", "p50 ms", "p90 ms"], rows)
