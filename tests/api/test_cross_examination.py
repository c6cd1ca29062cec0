"""Cross-examination, sealed conclusions, card erasure and the subject-access view, over the real store.

A conclusion derived from two roles' private cards is sealed: stored and shown to the operator with its
provenance, announced on the stage without content, never found by any role's search, never publishable.
"""

from __future__ import annotations

import json
import secrets
import string
from typing import Any

import httpx

from bureau.api.delivery import project_event
from bureau.api.deps import Services
from bureau.scope.audience import Audience
from helpers import QUESTION, NewCase, ask, grant_of, informant_secret_card, publish, snapshot


def marker() -> str:
    return "zq" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(12))


async def whisper(client: httpx.AsyncClient, case_id: str, role: str, text: str) -> dict[str, Any]:
    response = await client.post(f"/api/cases/{case_id}/whispers", json={"role": role, "text": text})
    assert response.status_code == 201, response.text
    return response.json()["card"]


async def cross_examine(client: httpx.AsyncClient, case_id: str, roles: list[str], question: str) -> dict[str, Any]:
    response = await client.post(
        f"/api/cases/{case_id}/cross-examinations", json={"roles": roles, "question": question}
    )
    assert response.status_code == 200, response.text
    return response.json()


async def stage_texts(client: httpx.AsyncClient, services: Services, case_id: str) -> str:
    """Everything the stage can receive about the case: snapshot, record projection, every event frame."""
    parts = [(await client.get(f"/api/cases/{case_id}/stage")).text]
    parts.append((await client.get(f"/api/cases/{case_id}/stage/record")).text)
    for event in await services.ledger.events.events_after(case_id, 0):
        projected = project_event(Audience.STAGE, event.type, event.payload)
        parts.append(json.dumps(projected, ensure_ascii=False))
    return "\n".join(parts)


async def test_mixing_two_roles_private_cards_seals_the_conclusion(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case_id = (await new_case())["case"]["id"]
    m = marker()
    cellar = await whisper(client, case_id, "informant", f"Marker {m} hides in the cellar.")
    attic = await whisper(client, case_id, "suspect", f"Marker {m} hides in the attic.")
    question = f"Where does marker {m} hide?"
    result = await cross_examine(client, case_id, ["informant", "suspect"], question)

    by_role = {r["role"]: r for r in result["results"]}
    assert by_role["informant"]["certainty"] == "known" and "cellar" in by_role["informant"]["answer"]
    assert by_role["suspect"]["certainty"] == "known" and "attic" in by_role["suspect"]["answer"]
    # Each role was searched in its own scopes only.
    assert by_role["informant"]["trace"]["searched_scopes"] == ["informant", "bulletin_board"]
    assert {h["space"] for h in by_role["suspect"]["trace"]["hits"]} <= {"suspect", "bulletin_board"}
    conclusion = result["conclusion"]
    assert conclusion["sealed"] is True and conclusion["audience"] == "sealed"
    assert {"card_id": cellar["id"], "space": "informant"} in conclusion["provenance"]
    assert {"card_id": attic["id"], "space": "suspect"} in conclusion["provenance"]
    assert "cellar" in conclusion["text"] and "attic" in conclusion["text"]

    # Stored, and shown to the operator as sealed with its provenance.
    [entry] = (await client.get(f"/api/cases/{case_id}/record")).json()["entries"]
    assert entry["kind"] == "cross_examination" and entry["sealed"] is True
    assert entry["conclusion"]["text"] == conclusion["text"]
    assert entry["provenance"] == conclusion["provenance"]
    report = (await client.get(f"/api/cases/{case_id}/record/export", params={"format": "markdown"})).text
    assert "**Sealed**" in report and conclusion["text"] not in report  # a handout names it, never quotes it

    # On the stage: only that a sealed conclusion was reached.
    [public] = (await client.get(f"/api/cases/{case_id}/stage/record")).json()["entries"]
    assert set(public) == {"id", "kind", "created_at", "sealed"} and public["sealed"] is True
    assert (await client.get(f"/api/cases/{case_id}/stage")).json()["last_conclusion"] == public
    seen = await stage_texts(client, services, case_id)
    assert m not in seen and cellar["id"] not in seen and attic["id"] not in seen

    # Never retrievable by any role: no card anywhere holds it, and no role's search returns it.
    snap = await snapshot(client, case_id)
    assert all(conclusion["text"] != c["content"] for cards in snap["spaces"].values() for c in cards)
    for role in ("detective", "informant", "suspect"):
        asked = await ask(client, case_id, role, conclusion["text"][:400])
        found = asked["trace"]["hits"] + asked["trace"]["misses"]
        assert {c["space"] for c in found} <= {role, "bulletin_board"}
        assert m not in json.dumps([c for c in found if c["space"] != role])
    # Never publishable: a record entry is not a card of any role.
    for role in ("informant", "suspect"):
        assert (await publish(client, case_id, role, str(entry["id"]))).status_code == 404


async def test_one_roles_private_card_with_the_board_stays_that_roles(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    secret = informant_secret_card(case)
    copy = (await publish(client, case_id, "informant", secret["id"])).json()["public_card"]

    mixed = await cross_examine(client, case_id, ["detective", "informant"], QUESTION)
    assert mixed["conclusion"]["audience"] == "informant" and mixed["conclusion"]["sealed"] is False
    detective = next(r for r in mixed["results"] if r["role"] == "detective")
    assert [h["card_id"] for h in detective["trace"]["hits"]] == [copy["id"]]  # the board copy, not the original

    board_only = await cross_examine(client, case_id, ["detective", "suspect"], QUESTION)
    assert board_only["conclusion"]["audience"] == "detective+suspect"
    entries = (await client.get(f"/api/cases/{case_id}/stage/record")).json()["entries"][::-1]  # oldest first
    assert [e["sealed"] for e in entries] == [False, False]
    assert entries[0]["roles"] == ["detective", "informant"]
    assert entries[0]["retrievals"][1]["private_hit_count"] >= 1
    assert all(h["card_id"] == copy["id"] for e in entries for r in e["retrievals"] for h in r["public_hits"])
    assert secret["id"] not in await stage_texts(client, services, case_id)


async def test_bad_cross_examinations_are_refused_and_write_nothing(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    url = f"/api/cases/{case_id}/cross-examinations"
    for body in (
        {"roles": ["detective"], "question": QUESTION},
        {"roles": ["detective", "detective"], "question": QUESTION},
        {"roles": ["detective", "bulletin_board"], "question": QUESTION},
        {"roles": ["detective", "suspect"], "question": QUESTION, "scope": "informant"},
    ):
        response = await client.post(url, json=body)
        assert (response.status_code, response.json()["detail"]["code"]) == (422, "VALIDATION_ERROR"), body
    blank = await client.post(url, json={"roles": ["detective", "suspect"], "question": "   "})
    assert (blank.status_code, blank.json()["detail"]["code"]) == (422, "VALIDATION_ERROR")  # said in the schema
    missing = await client.post(
        "/api/cases/nosuchcase1/cross-examinations", json={"roles": ["detective", "suspect"], "question": QUESTION}
    )
    assert missing.status_code == 404
    after = await snapshot(client, case_id)
    assert after["case"]["version"] == case["case"]["version"]
    assert (await client.get(f"/api/cases/{case_id}/record")).json()["entries"] == []


async def test_erasing_a_private_card_takes_its_board_copies_and_marks_what_was_derived(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    secret = informant_secret_card(case)
    copy = (await publish(client, case_id, "informant", secret["id"])).json()["public_card"]
    asked = await ask(client, case_id, "detective")
    assert [h["card_id"] for h in asked["trace"]["hits"]] == [copy["id"]]

    access = (await client.get(f"/api/cases/{case_id}/subject-access")).json()
    assert access["board_copies"] == [
        {"card_id": copy["id"], "source": {"role": "informant", "card_id": secret["id"]}, "source_present": True}
    ]
    assert {c["card_id"]: c["audience"] for c in access["spaces"]["informant"]}[secret["id"]] == "informant"
    [derived] = [d for d in access["derived"] if d["kind"] == "interrogation"]
    assert derived["audience"] == "detective"
    assert derived["ingredients"] == [{"card_id": copy["id"], "space": "bulletin_board", "present": True}]
    assert any(d["kind"] == "session_record" and d["space"] == "detective" for d in access["derived"])

    # Other cases' cards and board copies cannot be erased through this route; nothing changes.
    other = (await new_case())["case"]["id"]
    for case_of, card_id in ((other, secret["id"]), (case_id, copy["id"]), (case_id, "12345"), (case_id, "x")):
        response = await client.delete(f"/api/cases/{case_of}/cards/{card_id}")
        assert (response.status_code, response.json()["detail"]["code"]) == (404, "CARD_NOT_FOUND"), card_id

    assert (await client.delete(f"/api/cases/{case_id}/cards/{secret['id']}")).status_code == 204
    after = await snapshot(client, case_id)
    assert secret["id"] not in {c["id"] for c in after["spaces"]["informant"]}
    assert after["spaces"]["bulletin_board"] == []
    [entry] = (await client.get(f"/api/cases/{case_id}/record")).json()["entries"]
    assert entry["erased_ingredients"] == [copy["id"]] and entry["answer"] is None and entry["question"] is None
    access = (await client.get(f"/api/cases/{case_id}/subject-access")).json()
    [derived] = [d for d in access["derived"] if d["kind"] == "interrogation"]
    assert derived["ingredients"][0]["present"] is False and derived["erased_ingredients"] == [copy["id"]]
    # The second move: asking again finds nothing; publishing the erased card, or erasing it again, is a 404.
    assert (await ask(client, case_id, "detective"))["certainty"] == "unknown"
    assert (await publish(client, case_id, "informant", secret["id"])).status_code == 404
    assert (await client.delete(f"/api/cases/{case_id}/cards/{secret['id']}")).status_code == 404
    stage = await stage_texts(client, services, case_id)
    assert secret["id"] not in stage


async def test_publishing_rechecks_the_source_at_the_moment_of_publishing(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    secret = informant_secret_card(case)
    gateway, publisher = services.gateway, services.bureau.publisher
    informant = await grant_of(services, case_id, writes=["informant"], purpose="lifecycle")

    def erase_source_first(step: str) -> None:
        if step == "before_mark_ready":  # the source disappears after the copy was written, before it counts
            assert gateway.runner.executor.submit(gateway.calls.delete, informant, secret["id"]).result(timeout=30)

    publisher.fault = erase_source_first
    try:
        response = await publish(client, case_id, "informant", secret["id"])
    finally:
        publisher.fault = lambda step: None
    assert (response.status_code, response.json()["detail"]["code"]) == (404, "CARD_NOT_FOUND")
    assert (await snapshot(client, case_id))["spaces"]["bulletin_board"] == []  # the copy was undone
    assert await services.ledger.publications.publications(case_id) == []
