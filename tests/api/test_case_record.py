"""The case record: every interrogation kept in order with its trace, answer, audience and provenance; its
exports; its public projection; and that its text is sealed in the ledger and goes with a reset or an erase."""

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
    assert response.status_code == 200
    entries = response.json()["entries"]
    assert [(e["roles"], e["question"]) for e in entries] == [([role], q) for role, q, _ in asked]
    assert [e["id"] for e in entries] == sorted(e["id"] for e in entries)
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


async def test_exports_are_downloads_of_the_same_record(client: httpx.AsyncClient, new_case: NewCase) -> None:
    case_id, asked = await play(client, new_case)
    record = (await client.get(f"/api/cases/{case_id}/record")).json()
    as_json = await client.get(f"/api/cases/{case_id}/record/export", params={"format": "json"})
    assert as_json.status_code == 200
    assert as_json.headers["content-disposition"] == f'attachment; filename="case-{case_id}-record.json"'
    assert json.loads(as_json.text) == record
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
    stage = (await client.get(f"/api/cases/{case_id}/stage/record")).json()["entries"]
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
    assert all(body.startswith("sealed:v1:") for body in bodies)
    assert not any(asked[0][1] in body or SECRET in body for body in bodies)

    reset = await client.post(f"/api/cases/{case_id}/reset")
    assert reset.status_code == 200 and reset.json()["last_trace"] is None
    assert (await client.get(f"/api/cases/{case_id}/record")).json()["entries"] == []
    await ask(client, case_id, "informant")
    assert len((await client.get(f"/api/cases/{case_id}/record")).json()["entries"]) == 1  # recording again

    assert (await client.delete(f"/api/cases/{case_id}")).status_code == 204
    for path in ("/record", "/record/export", "/stage/record"):
        response = await client.get(f"/api/cases/{case_id}{path}")
        assert (response.status_code, response.json()["detail"]["code"]) == (404, "CASE_NOT_FOUND")
    assert await services.ledger.case_record(case_id) == []
    assert await services.ledger.case_key(case_id) is None
