"""A question racing the erase of its case (docs/api.md, "Route-specific errors"); a whisper and a publish too.

Each interleaving is provoked in a fixed order: the whole erase (`DELETE /api/cases/{id}`, over HTTP) runs at
one named point inside the interrogation, hooked around the real gateway's and ledger's own steps, over the
real store and the real SQLite ledger. Whichever step the erase lands before, the question answers
`404 CASE_NOT_FOUND`, as every route does for an erased case (never `503 MEMORY_UNAVAILABLE`: the store is
fine, the case is gone), and nothing of the case is written: no card in the store, no ledger row but the
erase's tombstone, no sealing key, nothing cached in the process.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from bureau.api.deps import Services
from helpers import QUESTION, NewCase, informant_secret_card, publish

Step = Callable[[], Awaitable[None]]


def before_call(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, step: Step) -> None:
    """Run `step` once, just before the first call of one real method: where the erase moves."""
    real = getattr(owner, name)
    ran: list[bool] = []

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not ran:
            ran.append(True)
            await step()
        return await real(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)


def after_key_loaded_for_a_write(monkeypatch: pytest.MonkeyPatch, services: Services, step: Step) -> None:
    """Run `step` once, right after the write's sealing key is loaded and before the store write uses it."""
    ciphers = services.gateway._ciphers
    real = ciphers.load
    ran: list[bool] = []

    async def wrapped(case_id: str, *, create: bool = False) -> Any:
        cipher = await real(case_id, create=create)
        if create and not ran:
            ran.append(True)
            await step()
        return cipher

    monkeypatch.setattr(ciphers, "load", wrapped)


INTERLEAVINGS = [
    "after the question is checked, before the search",
    "after the search, before the session record is written",
    "after the session record's key is loaded, before the store write",
    "after the session record is written, before the commit",
]


@pytest.mark.parametrize("erased", INTERLEAVINGS)
async def test_a_question_racing_the_erase_of_its_case_is_not_found_and_writes_nothing(
    erased: str,
    client: httpx.AsyncClient,
    new_case: NewCase,
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    erase_answers: list[int] = []

    async def erase() -> None:
        response = await client.delete(f"/api/cases/{case_id}")
        erase_answers.append(response.status_code)

    gateway, ledger = services.gateway, services.ledger
    if erased == INTERLEAVINGS[0]:
        before_call(monkeypatch, gateway, "retrieve", erase)
    elif erased == INTERLEAVINGS[1]:
        before_call(monkeypatch, gateway, "write", erase)
    elif erased == INTERLEAVINGS[2]:
        after_key_loaded_for_a_write(monkeypatch, services, erase)
    else:
        before_call(monkeypatch, ledger, "change_case", erase)

    asked = await client.post(f"/api/cases/{case_id}/interrogations", json={"role": "informant", "question": QUESTION})
    monkeypatch.undo()

    assert erase_answers == [204]  # the erase ran, at the chosen point, and succeeded
    assert (asked.status_code, asked.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND"), asked.text
    # Nothing written: not in the store, not in the ledger (only the erase's own tombstone), no key, no cache.
    assert case_id not in await gateway.list_case_ids()
    assert await ledger.get_case(case_id) is None
    assert [event.type for event in await ledger.events_after(case_id, 0)] == ["case.erased"]
    assert await ledger.case_key(case_id) is None
    assert await ledger.case_record(case_id) == []
    assert await ledger.policy_decisions(case_id, 0, 100) == []
    assert gateway._ciphers.get(case_id) is None
    assert case_id not in gateway.relevance_vector_cases()
    assert case_id not in gateway.retention_cases()
    # And the case stays gone for every route.
    again = await client.post(f"/api/cases/{case_id}/interrogations", json={"role": "informant", "question": QUESTION})
    assert (again.status_code, again.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND")


async def test_a_whisper_racing_the_erase_of_its_case_is_not_found_too(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same narrowest interleaving for a whisper: the store write finds the key forgotten."""
    case = await new_case()
    case_id = case["case"]["id"]
    erase_answers: list[int] = []

    async def erase() -> None:
        erase_answers.append((await client.delete(f"/api/cases/{case_id}")).status_code)

    after_key_loaded_for_a_write(monkeypatch, services, erase)
    whispered = await client.post(
        f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": "The gardener saw a blue van."}
    )
    monkeypatch.undo()
    assert erase_answers == [204]
    assert (whispered.status_code, whispered.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND"), whispered.text
    assert case_id not in await services.gateway.list_case_ids()
    assert [event.type for event in await services.ledger.events_after(case_id, 0)] == ["case.erased"]
    assert await services.ledger.case_key(case_id) is None


async def test_a_publish_racing_the_erase_of_its_case_is_not_found_too(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """And for a publish: the erase lands after the reservation, when the board copy's write has loaded the key."""
    case = await new_case()
    case_id = case["case"]["id"]
    erase_answers: list[int] = []

    async def erase() -> None:
        erase_answers.append((await client.delete(f"/api/cases/{case_id}")).status_code)

    after_key_loaded_for_a_write(monkeypatch, services, erase)
    published = await publish(client, case_id, "informant", informant_secret_card(case)["id"])
    monkeypatch.undo()
    assert erase_answers == [204]
    assert (published.status_code, published.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND"), published.text
    assert case_id not in await services.gateway.list_case_ids()
    assert [event.type for event in await services.ledger.events_after(case_id, 0)] == ["case.erased"]
    assert await services.ledger.publications(case_id) == []
    assert await services.ledger.case_key(case_id) is None
