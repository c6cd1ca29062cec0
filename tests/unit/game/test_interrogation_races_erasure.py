"""A question racing the erase of its case (docs/api.md, "Route-specific errors"); a whisper and a publish too.

Each interleaving is provoked in a fixed order: the whole erase (`DELETE /api/cases/{id}`, over HTTP) runs at
one named point inside the interrogation, hooked around the real gateway's and ledger's own steps, over the
real store, the real vault and the real SQLite ledger. Whichever step the erase lands before, the question
answers `404 CASE_NOT_FOUND`, as every route does for an erased case (never `503 MEMORY_UNAVAILABLE`: the store
is fine, the case is gone), and nothing of the case is written: no card in the store, no ledger row but the
erase's tombstone, no key in the vault, nothing cached in the process.
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


def after_grant_minted(monkeypatch: pytest.MonkeyPatch, services: Services, step: Step) -> None:
    """Run `step` once, right after the command's grant is minted (it holds the case's keys from then on)."""
    vault = services.vault
    real = vault.grant
    ran: list[bool] = []

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        grant = await real(*args, **kwargs)
        if not ran:
            ran.append(True)
            await step()
        return grant

    monkeypatch.setattr(vault, "grant", wrapped)


async def nothing_of_the_case_is_left(services: Services, case_id: str) -> None:
    """Not in the store, not in the ledger (only the erase's tombstone), no key in the vault, nothing cached."""
    gateway, ledger, vault = services.gateway, services.ledger, services.vault
    assert case_id not in await gateway.list_case_ids()
    assert await ledger.cases.get_case(case_id) is None
    assert [event.type for event in await ledger.events.events_after(case_id, 0)] == ["case.erased"]
    assert case_id not in vault.store.cases()  # no compartment key, no item key (an undone write's included)
    assert await ledger.record.case_record(case_id, None) == []
    assert await ledger.policy_audit.policy_decisions(case_id, 0, 100) == []
    assert case_id not in vault.keyring.cached_cases()
    assert case_id not in gateway.relevance_vector_cases()
    assert case_id not in gateway.retention_cases()


INTERLEAVINGS = [
    "after the question is checked, before its grant",
    "after its grant, before the search",
    "after the search, before the session record is written",
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
        before_call(monkeypatch, services.vault, "grant", erase)
    elif erased == INTERLEAVINGS[1]:
        after_grant_minted(monkeypatch, services, erase)
    elif erased == INTERLEAVINGS[2]:
        before_call(monkeypatch, gateway, "write", erase)
    else:
        before_call(monkeypatch, ledger.cases, "change_case", erase)

    asked = await client.post(f"/api/cases/{case_id}/interrogations", json={"role": "informant", "question": QUESTION})
    monkeypatch.undo()

    assert erase_answers == [204]  # the erase ran, at the chosen point, and succeeded
    assert (asked.status_code, asked.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND"), asked.text
    await nothing_of_the_case_is_left(services, case_id)
    # And the case stays gone for every route.
    again = await client.post(f"/api/cases/{case_id}/interrogations", json={"role": "informant", "question": QUESTION})
    assert (again.status_code, again.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND")


async def test_a_whisper_racing_the_erase_of_its_case_is_not_found_too(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same narrowest interleaving for a whisper: its grant holds the keys the erase destroys."""
    case = await new_case()
    case_id = case["case"]["id"]
    erase_answers: list[int] = []

    async def erase() -> None:
        erase_answers.append((await client.delete(f"/api/cases/{case_id}")).status_code)

    after_grant_minted(monkeypatch, services, erase)
    whispered = await client.post(
        f"/api/cases/{case_id}/whispers", json={"role": "detective", "text": "The gardener saw a blue van."}
    )
    monkeypatch.undo()
    assert erase_answers == [204]
    assert (whispered.status_code, whispered.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND"), whispered.text
    await nothing_of_the_case_is_left(services, case_id)


async def test_a_publish_racing_the_erase_of_its_case_is_not_found_too(
    client: httpx.AsyncClient, new_case: NewCase, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """And for a publish: the erase lands right after its grant is minted, before the reservation."""
    case = await new_case()
    case_id = case["case"]["id"]
    erase_answers: list[int] = []

    async def erase() -> None:
        erase_answers.append((await client.delete(f"/api/cases/{case_id}")).status_code)

    after_grant_minted(monkeypatch, services, erase)
    published = await publish(client, case_id, "informant", informant_secret_card(case)["id"])
    monkeypatch.undo()
    assert erase_answers == [204]
    assert (published.status_code, published.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND"), published.text
    assert await services.ledger.publications.publications(case_id) == []
    await nothing_of_the_case_is_left(services, case_id)
