"""No silent limits: listing, counting, reset and erase work at any size of a space (real seekdb), and the
record's pages and exports reach every entry.

The store is filled in bulk through the gateway (one batch embedding per distinct text), so 10 000 cards
take seconds, not minutes.
"""

from __future__ import annotations

import json

import httpx

from bureau.api.deps import Services
from bureau.ledger.record import RecordDraft
from bureau.memory.types import CardDraft
from bureau.vault import Grant
from helpers import NewCase, ask, grant_of, snapshot, stored_rows

FILLER = [f"Routine note {i}: the night shift logged nothing unusual at gate {i}." for i in range(50)]
PAST_THE_OLD_LIMIT = "The warehouse alarm code is 5581."
ALARM_QUESTION = "What is the warehouse alarm code?"
BIG_SPACE = 10_000
RECORD_ENTRIES = 260


async def fill(services: Services, scope: Grant, count: int) -> None:
    drafts = [CardDraft(content=FILLER[i % len(FILLER)], topic="filler", kind="note") for i in range(count)]
    for start in range(0, count, 1000):
        await services.gateway.write_many(scope, drafts[start : start + 1000])


async def test_a_space_of_ten_thousand_cards_is_listed_counted_and_reset_in_full(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    scenario_cards = {space: sorted(c["content"] for c in cards) for space, cards in case["spaces"].items()}
    detective = await grant_of(services, case_id, reads=["detective"], writes=["detective"])
    await fill(services, detective, BIG_SPACE)
    # The last card written lies far past any page size: it must be listed, counted and answered from.
    await services.gateway.write(detective, CardDraft(content=PAST_THE_OLD_LIMIT, topic="alarm", kind="secret"))
    expected = BIG_SPACE + 1 + len(scenario_cards["detective"])

    listed = (await snapshot(client, case_id))["spaces"]["detective"]
    assert len(listed) == expected
    assert len({c["id"] for c in listed}) == expected  # paging neither skips nor repeats a card
    stage = (await client.get(f"/api/cases/{case_id}/stage")).json()
    assert stage["counts"]["detective"] == expected

    asked = await client.post(
        f"/api/cases/{case_id}/interrogations", json={"role": "detective", "question": ALARM_QUESTION}
    )
    assert asked.json()["certainty"] == "known"

    reset = await client.post(f"/api/cases/{case_id}/reset")
    assert reset.status_code == 200
    after = {space: sorted(c["content"] for c in cards) for space, cards in reset.json()["spaces"].items()}
    assert after == scenario_cards
    assert len((await stored_rows(services, case_id))["detective"]) == len(scenario_cards["detective"])
    asked_again = await client.post(
        f"/api/cases/{case_id}/interrogations", json={"role": "detective", "question": ALARM_QUESTION}
    )
    assert asked_again.json()["certainty"] == "unknown"


async def test_erase_removes_a_case_of_any_size(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    await fill(services, await grant_of(services, case_id, writes=["suspect"]), 2_500)
    assert (await client.delete(f"/api/cases/{case_id}")).status_code == 204
    assert case_id not in await services.gateway.list_case_ids()
    assert (await stored_rows(services, case_id))["suspect"] == []
    assert case_id not in services.vault.store.cases()


async def test_session_retention_keeps_the_newest_sessions_in_a_big_space(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    detective = await grant_of(services, case_id, reads=["detective"], writes=["detective"])
    await fill(services, detective, 1_200)
    for i in range(7):
        await client.post(
            f"/api/cases/{case_id}/interrogations", json={"role": "detective", "question": f"Question number {i}?"}
        )
    sessions = [c for c in await services.gateway.list(detective) if c.memory_type == "session"]
    assert sorted(c.content for c in sessions) == sorted(f"I was asked: Question number {i}?" for i in range(2, 7))
    facts = [c for c in await services.gateway.list(detective) if c.memory_type != "session"]
    assert len(facts) == 1_200 + len(case["spaces"]["detective"])


async def test_a_bulk_write_that_fails_half_way_leaves_nothing(services: Services, monkeypatch) -> None:
    gateway = services.gateway
    scope = await grant_of(services, "bulk" + "0" * 8, reads=["informant"], writes=["informant"])
    storage = gateway.runner.client().storage
    real_add = storage.add_memory
    calls = {"n": 0}

    def add_then_fail(data):
        calls["n"] += 1
        if calls["n"] == 30:
            raise RuntimeError("disk full")
        return real_add(data)

    monkeypatch.setattr(storage, "add_memory", add_then_fail)
    drafts = [CardDraft(content=FILLER[i % len(FILLER)], topic="filler", kind="note") for i in range(50)]
    try:
        await gateway.write_many(scope, drafts)
    except Exception as exc:
        assert type(exc).__name__ == "MemoryUnavailableError"
    else:
        raise AssertionError("the failed bulk write was reported as written")
    monkeypatch.undo()
    assert calls["n"] == 30
    assert await gateway.list(scope) == []
    assert services.vault.store.compartment_items("bulk" + "0" * 8, "informant") == {}  # nor a key it sealed


async def test_a_record_longer_than_any_page_is_reached_whole_by_paging_and_by_the_exports(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    """260 entries: more than the largest page (200) and five default pages (50). Following `next` reaches
    every one once, newest first; both exports and the subject-access view stream all of them, oldest first."""
    case_id = (await new_case())["case"]["id"]
    await ask(client, case_id, "informant", ALARM_QUESTION)
    operator = await grant_of(services, case_id, record=True)
    [asked] = await services.ledger.record.interrogations(case_id, operator)
    draft = RecordDraft(asked.kind, asked.roles, asked.audience, asked.summary, asked.body)
    for _ in range(RECORD_ENTRIES - 1):
        await services.ledger.cases.change_case(case_id, [], record=draft, grant=operator)
    for limit in (None, 200):
        seen: list[int] = []
        params: dict[str, int] = {"limit": limit} if limit else {}
        while True:
            page = (await client.get(f"/api/cases/{case_id}/record", params=params)).json()
            seen += [entry["id"] for entry in page["entries"]]
            if page["next"] is None:
                break
            params = {**params, "after": page["next"]}
        assert len(seen) == len(set(seen)) == RECORD_ENTRIES and seen == sorted(seen, reverse=True)
    exported = await client.get(f"/api/cases/{case_id}/record/export", params={"format": "json"})
    assert [entry["id"] for entry in json.loads(exported.text)["entries"]] == seen[::-1]
    report = (await client.get(f"/api/cases/{case_id}/record/export", params={"format": "markdown"})).text
    assert f"{RECORD_ENTRIES} entries." in report
    assert report.count("\n## ") == RECORD_ENTRIES and f"## {RECORD_ENTRIES}. Interrogation" in report
    access = json.loads((await client.get(f"/api/cases/{case_id}/subject-access")).text)  # streamed too
    assert [item["record_id"] for item in access["derived"] if "record_id" in item] == seen[::-1]
