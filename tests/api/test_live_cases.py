"""A room of live cases (issue 36): what a server keeps per live case is built once and kept while the case is
live, so asking a case again costs no rebuild, however many other cases are live beside it. Not timed: it
counts the expensive per-case builds (a vault read of a case's keys, a compartment's basis, the encoder's
vectors of a text)."""

from __future__ import annotations

import httpx
import pytest

from bureau.api.deps import Services
from bureau.vault import keyring as keyring_module
from helpers import NewCase

LIVE_CASES = 100
QUESTION = {"role": "detective", "question": "What is the safe combination?"}


def builds(services: Services) -> tuple[int, int, int]:
    keyring = services.vault.keyring
    return keyring.loads, keyring.basis_builds, services.gateway.texts_embedded


async def ask_each(client: httpx.AsyncClient, cases: list[str]) -> None:
    for case_id in cases:
        response = await client.post(f"/api/cases/{case_id}/interrogations", json=QUESTION)
        assert response.status_code == 200, response.text


async def test_asking_a_hundred_live_cases_again_builds_nothing_per_case(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [(await new_case())["case"]["id"] for _ in range(LIVE_CASES)]
    before_first = builds(services)
    await ask_each(client, cases)
    first = [after - before for after, before in zip(builds(services), before_first, strict=True)]
    # The first question of a case builds at most its board's basis (creating it built the roles') and embeds
    # the question once; never a vault read: creating the case cached its keys.
    assert first[0] == 0 and first[1] <= LIVE_CASES and 0 < first[2] <= LIVE_CASES * 4

    settled = builds(services)
    await ask_each(client, cases)
    assert builds(services) == settled  # a hundred cases asked again: nothing rebuilt, nothing re-read

    # The count is not vacuous: a keyring with room for the bases of only 50 spaces (the cliff of issue 36: a
    # cache smaller than the room) rebuilds on every question, round after round.
    monkeypatch.setattr(keyring_module, "BASIS_CAPACITY", 50)
    services.vault.keyring.clear()
    await ask_each(client, cases)
    thrashing = builds(services)
    await ask_each(client, cases)
    assert builds(services)[1] - thrashing[1] >= LIVE_CASES
