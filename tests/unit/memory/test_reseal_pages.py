"""Re-sealing a case an earlier version wrote goes a page of rows per store call, so a case of any size is
re-sealed without one call running past the store's deadline (30 s; about 6 ms a row on a quiet machine)."""

from __future__ import annotations

import os
import secrets
from typing import Any

import numpy as np
import pytest

from bureau.api.deps import Services
from bureau.memory import gateway as gateway_module
from bureau.scope.keys import role_scope
from helpers import grant_of, write_row_past_the_gateway

ROWS = 7


def plant_unsealed_rows(services: Services, case_id: str) -> list[str]:
    """Rows as a version before sealing wrote them: plaintext, and a vector of the store's dimension."""
    scope = role_scope(case_id, "informant", "")
    texts = [f"Old note {n}: the ferry left at {n} o'clock." for n in range(ROWS)]
    vectors = np.random.default_rng(7).standard_normal((ROWS, services.gateway.dims))
    metadata = {"scope_key": scope.key, "case_id": case_id, "space": "informant", "generation": ""}
    metadata |= {"card_memory_type": "long_term_knowledge", "created_by": "operator", "topic": "ferry", "kind": "fact"}
    for text, vector in zip(texts, vectors, strict=True):
        write_row_past_the_gateway(services.gateway, scope.user_id, "informant", text, vector, metadata)
    return texts


async def test_a_case_is_resealed_a_page_per_store_call(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    case_id = secrets.token_hex(12)
    texts = plant_unsealed_rows(services, case_id)
    vault = services.vault
    vault.adopt_case_keys([(case_id, os.urandom(32))])  # the case key an earlier version kept
    vault.compartmentalise(case_id, "")
    calls: list[str] = []
    run = services.gateway.runner.run

    async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(getattr(fn, "__name__", ""))
        return await run(fn, *args, **kwargs)

    monkeypatch.setattr(gateway_module, "RESEAL_PAGE", 3)
    monkeypatch.setattr(services.gateway.runner, "run", counted)
    grant = await vault.reseal_grant(case_id, "")
    try:
        assert await services.gateway.reseal(grant) == ROWS
    finally:
        grant.close()
    vault.retire_legacy(case_id)
    assert calls.count("reseal") == 3  # 3 + 3 + 1 rows
    monkeypatch.undo()
    reading = await grant_of(services, case_id, reads=["informant"])
    try:
        assert sorted(card.content for card in await services.gateway.list(reading)) == sorted(texts)
    finally:
        reading.close()
