"""The case record: every interrogation kept in order with its trace, answer, audience and provenance, read a
page at a time newest first; its streamed exports; its public projection; and that its text is sealed in the
ledger and goes with a reset or an erase."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import httpx

from bureau.api.deps import Services
from helpers import SECRET, NewCase, ask, informant_secret_card, publish

QUESTIONS = [
    ("detective", "What is the safe combination?"),
    ("informant", "What is the safe combination?"),
    ("suspect", "Where were you last night?"),
]


async def play(client: httpx.AsyncClient, new_case: NewCase) -> tuple[str, list[tuple[str, str, dict[str, Any]]]]:
    case = await new_case()
    case_id = case["case"]["id"]
    asked = [(role, question, await ask(client, case_id, role, question)) for role, question in QUESTIONS]
    assert (await publish(client, case_id, "informant", informant_secret_card(case)["id"])).status_code == 201
    asked.append(("detective", QUESTIONS[0][1], await ask(client, case_id, "detective", QUESTIONS[0][1])))
    return case_id, asked


async def test_the_record_lists_every_interrogation_in_order_with_scopes_hits_and_audience(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case_id, asked = await play(client, new_case)
    response = await client.get(f"/api/cases/{case_id}/record")
    assert response.status_code == 200 and response.json()["next"] is None
    newest_first = response.json()["entries"]
    assert [e["id"] for e in newest_first] == sorted((e["id"] for e in newest_first), reverse=True)
    entries = newest_first[::-1]
    assert [(e["roles"], e["question"]) for e in entries] == [([role], q) for role, q, _ in asked]
    for entry, (role, _, result) in zip(entries, asked, strict=True):
        assert entry["kind"] == "interrogation" and entry["answer"] == result["answer"]
        assert entry["trace"] == result["trace"]
        assert entry["trace"]["searched_scopes"] == [role, "bulletin_board"]
        assert entry["certainty"] == result["certainty"]
        assert entry["audience"] == role and entry["sealed"] is False  # an answer is its role's alone
        # Every hit, and the card an uncertain answer quotes ("I might know — the closest memory is …").
        quoted = [m for m in result["trace"]["misses"] if m["card_id"] in result["evidence"]]
        expected = [{"card_id": m["card_id"], "space": m["space"]} for m in result["trace"]["hits"] + quoted]
        assert entry["provenance"] == expected
    # The second move: before publishing the detective did not know; after it, from the board.
    assert entries[0]["certainty"] == "unknown" and entries[3]["certainty"] == "known"
    assert {h["space"] for h in entries[3]["trace"]["hits"]} == {"bulletin_board"}
    # The console's X-ray on reload is the newest interrogation.
    snap = (await client.get(f"/api/cases/{case_id}")).json()
    assert snap["last_trace"] == asked[-1][2]["trace"]


async def every_page(client: httpx.AsyncClient, path: str, limit: int) -> list[dict[str, Any]]:
    """Follow `next` from the newest page to the last one."""
    entries: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": limit}
    while True:
        response = await client.get(path, params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        assert len(page["entries"]) <= limit
        entries += page["entries"]
        if page["next"] is None:
            return entries
        assert page["next"] == page["entries"][-1]["id"]
        params = {"limit": limit, "after": page["next"]}


async def test_the_record_is_paged_newest_first_and_every_entry_is_reached_once(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    case_id, asked = await play(client, new_case)
    first = (await client.get(f"/api/cases/{case_id}/record", params={"limit": 200})).json()
    whole = first["entries"]
    assert first["total"] == len(asked) and first["next"] is None
    small = (await client.get(f"/api/cases/{case_id}/record", params={"limit": 1})).json()
    assert small["total"] == len(asked) and small["next"] == whole[0]["id"]  # the count is the record's, not the page's
    for path in (f"/api/cases/{case_id}/record", f"/api/cases/{case_id}/stage/record"):
        paged = await every_page(client, path, limit=3)  # 4 entries: a page of 3, then a page of 1
        assert [e["id"] for e in paged] == [e["id"] for e in whole]
        assert len(paged) == len(asked) == len({e["id"] for e in paged})
        last = await client.get(path, params={"limit": 3, "after": paged[2]["id"]})
        assert [e["id"] for e in last.json()["entries"]] == [paged[3]["id"]] and last.json()["next"] is None
    # Bad paging: a 422 with a code that names the parameter, never its value, and nothing else.
    for params in ({"after": "x9zq"}, {"after": 0}, {"after": -5}, {"limit": 0}, {"limit": 201}, {"limit": "many"}):
        response = await client.get(f"/api/cases/{case_id}/record", params=params)
        assert response.status_code == 422, params
        assert response.json()["detail"]["code"] == "VALIDATION_ERROR"
        assert "x9zq" not in response.text and "many" not in response.text
        stage = await client.get(f"/api/cases/{case_id}/stage/record", params=params)
        assert (stage.status_code, stage.json()["detail"]["code"]) == (422, "VALIDATION_ERROR")


async def test_exports_are_downloads_of_the_same_record(client: httpx.AsyncClient, new_case: NewCase) -> None:
    case_id, asked = await play(client, new_case)
    paged = await every_page(client, f"/api/cases/{case_id}/record", limit=2)
    as_json = await client.get(f"/api/cases/{case_id}/record/export", params={"format": "json"})
    assert as_json.status_code == 200
    assert as_json.headers["content-disposition"] == f'attachment; filename="case-{case_id}-record.json"'
    # The same document as before the export streamed: the whole record, oldest first, indented by 2.
    expected = {"case_id": case_id, "entries": paged[::-1]}
    assert json.loads(as_json.text) == expected
    assert as_json.text == json.dumps(expected, ensure_ascii=False, indent=2)
    report = await client.get(f"/api/cases/{case_id}/record/export", params={"format": "markdown"})
    assert report.headers["content-type"].startswith("text/markdown")
    text = report.text
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == [f"## {n}. Interrogation of the {role}" for n, (role, _, _) in enumerate(asked, start=1)]
    last_hit = asked[-1][2]["trace"]["hits"][0]
    assert f"`{last_hit['card_id']}` | bulletin_board |" in text
    assert "searched: detective + bulletin_board" in text
    bad = await client.get(f"/api/cases/{case_id}/record/export", params={"format": "pdf"})
    assert bad.status_code == 422


async def test_the_stage_record_is_the_public_projection(client: httpx.AsyncClient, new_case: NewCase) -> None:
    case_id, asked = await play(client, new_case)
    snap = (await client.get(f"/api/cases/{case_id}")).json()
    private_ids = {c["id"] for role in ("detective", "informant", "suspect") for c in snap["spaces"][role]}
    stage = (await client.get(f"/api/cases/{case_id}/stage/record")).json()["entries"][::-1]  # oldest first
    assert [e["role"] for e in stage] == [role for role, _, _ in asked]
    dumped = json.dumps(stage, ensure_ascii=False)
    for _, question, result in asked:
        assert question not in dumped and result["answer"] not in dumped
    assert SECRET not in dumped
    assert not any(card_id in dumped for card_id in private_ids)
    assert stage[1]["private_hit_count"] >= 1 and stage[1]["public_hits"] == []
    assert [h["card_id"] for h in stage[3]["public_hits"]] == [h["card_id"] for h in asked[3][2]["trace"]["hits"]]


async def test_record_text_is_sealed_in_the_ledger_and_goes_with_reset_and_erase(
    client: httpx.AsyncClient, new_case: NewCase, services: Services
) -> None:
    case_id, asked = await play(client, new_case)
    database = services.settings.data_dir / "bureau.db"
    with sqlite3.connect(database) as raw:
        bodies = [row[0] for row in raw.execute("SELECT body FROM case_record WHERE case_id = ?", (case_id,))]
    assert len(bodies) == len(asked)
    assert all(body.startswith("sealed:v2:") for body in bodies)  # each under a key of its own, in the vault
    assert not any(asked[0][1] in body or SECRET in body for body in bodies)

    reset = await client.post(f"/api/cases/{case_id}/reset")
    assert reset.status_code == 200 and reset.json()["last_trace"] is None
    assert (await client.get(f"/api/cases/{case_id}/record")).json()["entries"] == []
    await ask(client, case_id, "informant")
    again = (await client.get(f"/api/cases/{case_id}/record")).json()
    assert len(again["entries"]) == 1 and again["total"] == 1  # recording again, counted from nothing

    assert (await client.delete(f"/api/cases/{case_id}")).status_code == 204
    for path in ("/record", "/record/export", "/stage/record"):
        response = await client.get(f"/api/cases/{case_id}{path}")
        assert (response.status_code, response.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND")
    assert await services.ledger.record.case_record(case_id, None) == []
    assert case_id not in services.vault.store.cases()
