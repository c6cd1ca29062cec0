"""The bugs the wall tests plant: the leak other memory systems shipped (a store statement that forgets the space
filter), and the checks of a row's space marker after the read switched off (the gateway's scope re-check, the
game's audience check). With them planted, only the compartments' keys and bases stand between a role and the
other spaces' rows (docs/erasure.md)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from bureau.game import interrogation
from bureau.memory.card_rows import CardRows
from bureau.memory.gateway import MemoryGateway


def drop_the_space_filter(gateway: MemoryGateway, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store statement keeps the case (`user_id`) and forgets the space (`agent_id`)."""
    nearest = gateway.runner.nearest
    if nearest is not None:  # seekdb: the gateway's own statement (memory/seekdb_search.py)
        real_nearest = nearest.search

        def buggy_nearest(queries: Any, limit: int) -> Any:
            return real_nearest([replace(q, agent_id=None) for q in queries], limit)

        monkeypatch.setattr(nearest, "search", buggy_nearest)
        return
    storage = gateway.runner.client().storage
    real_search = storage.search_memories

    def buggy_search(**kwargs: Any) -> Any:  # as PowerMem does without agent_id
        kwargs["agent_id"] = None
        return real_search(**kwargs)

    monkeypatch.setattr(storage, "search_memories", buggy_search)


def skip_the_recheck(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row read back passes the scope re-check, whatever its markers say."""
    monkeypatch.setattr(CardRows, "matches", lambda self, scope, row: True)


def skip_the_audience_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The game's second look at the same marker (`admitted_for`: a card reaches a role only if its space's
    readers admit the role) lets every card the search opened through."""
    monkeypatch.setattr(interrogation, "admitted_for", lambda role, candidates: list(candidates))
