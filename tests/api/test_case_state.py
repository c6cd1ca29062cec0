"""State kept with the case for the console (each role's answer, the who-knows-what matrix), conflicting
intel in the mole scenario, and the stage that follows the newest case. Real store, real ledger, real HTTP."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import helpers
from bureau.game.knowledge import cells_for_answer
from bureau.game.scenario_schema import KeyFact
from helpers import NewCase

MOLE_QUESTION = {"en": "Who is the mole?", "zh": "内鬼是谁？"}


def _card_on(snapshot: dict[str, Any], role: str, topic: str) -> dict[str, Any]:
    [found] = [c for c in helpers.cards(snapshot, role) if c["topic"] == topic]
    return found


async def _publish_both_tips(client: httpx.AsyncClient, snapshot: dict[str, Any]) -> list[str]:
    case_id = snapshot["case"]["id"]
    copies = []
    for role in ("informant", "suspect"):
        response = await helpers.publish(client, case_id, role, _card_on(snapshot, role, "mole_identity")["id"])
        assert response.status_code == 201, response.text
        copies.append(response.json()["public_card"]["id"])
    return copies


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_both_mole_tips_on_the_board_are_conflicting_intel_every_time(
    client: httpx.AsyncClient, new_case: NewCase, language: str
) -> None:
    snapshot = await new_case("mole", language)
    case_id = snapshot["case"]["id"]
    before = await helpers.ask(client, case_id, "detective", MOLE_QUESTION[language])
    assert before["conflicts"] == [] and before["certainty"] == "unknown"
    assert (await helpers.snapshot(client, case_id))["knowledge"]["detective"] == {"mole": "unknown"}

    copies = await _publish_both_tips(client, snapshot)
    results = [await helpers.ask(client, case_id, "detective", MOLE_QUESTION[language]) for _ in range(3)]
    for result in results:
        assert result["conflicts"] == [{"topic": "mole_identity", "card_ids": result["conflicts"][0]["card_ids"]}]
        assert sorted(result["conflicts"][0]["card_ids"]) == sorted(copies)
        assert set(copies) <= set(result["evidence"])
        assert result["trace"]["conflicts"] == result["conflicts"]
    assert len({r["answer"] for r in results}) == 1  # evidence mode is deterministic
    answer = results[0]["answer"]
    if language == "en":
        assert answer.startswith("Conflicting intel")
        assert "from the informant, trust: high" in answer and "from the suspect, trust: low" in answer
    else:
        assert answer.startswith("情报相互矛盾")
        assert "来自线人，可信度：高" in answer and "来自嫌疑人，可信度：低" in answer

    state = await helpers.snapshot(client, case_id)
    assert state["knowledge"]["detective"]["mole"] == "conflicting"
    stage = (await client.get(f"/api/cases/{case_id}/stage")).json()
    assert stage["last_retrieval"]["conflicting"] is True


async def test_a_conflict_involving_a_private_card_is_not_told_to_the_stage(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    snapshot = await new_case("mole", "en")
    case_id = snapshot["case"]["id"]
    rumour = _card_on(snapshot, "suspect", "mole_identity")
    assert (await helpers.publish(client, case_id, "suspect", rumour["id"])).status_code == 201
    result = await helpers.ask(client, case_id, "informant", MOLE_QUESTION["en"])
    assert [c["topic"] for c in result["conflicts"]] == ["mole_identity"]  # own tip against the board's rumour
    stage = (await client.get(f"/api/cases/{case_id}/stage")).json()
    assert stage["last_retrieval"]["conflicting"] is False
    assert (await helpers.snapshot(client, case_id))["knowledge"]["informant"]["mole"] == "conflicting"


async def test_answers_and_matrix_survive_a_reload_and_a_reset_clears_them(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    snapshot = await new_case("safe-combination", "en")
    case_id = snapshot["case"]["id"]
    detective = await helpers.ask(client, case_id, "detective")
    informant = await helpers.ask(client, case_id, "informant")
    await helpers.ask(client, case_id, "detective", "What time was the break-in?")

    state = await helpers.snapshot(client, case_id)  # what a reload or a second console sees
    assert state["knowledge"]["informant"] == {"combination": "own_memory"}
    # The second question settled the timeline and kept the earlier "unknown" for the combination.
    assert state["knowledge"]["detective"] == {"combination": "unknown", "timeline": "own_memory"}
    assert state["answers"]["informant"]["answer"] == informant["answer"]
    assert state["answers"]["informant"]["trace"] == informant["trace"]
    assert state["answers"]["detective"]["answer"] != detective["answer"]  # the newest answer per role
    assert "suspect" not in state["answers"]

    reset = (await client.post(f"/api/cases/{case_id}/reset")).json()
    assert reset["answers"] == {} and reset["knowledge"] == {}


async def test_the_snapshot_labels_topics_and_key_facts_in_both_languages(
    client: httpx.AsyncClient, new_case: NewCase
) -> None:
    scenario = (await new_case("safe-combination", "zh"))["scenario"]
    assert scenario["topic_labels"]["safe_combination"] == {"en": "Safe combination", "zh": "保险柜密码"}
    [fact] = [f for f in scenario["key_facts"] if f["id"] == "combination"]
    assert fact["label"] == "保险柜密码" and fact["labels"] == {"en": "Safe combination", "zh": "保险柜密码"}
    assert "What is the safe combination?" not in (await new_case("mole", "en"))["scenario"]["preset_questions"]


async def test_the_stage_can_follow_the_newest_active_case(client: httpx.AsyncClient, new_case: NewCase) -> None:
    older = (await new_case())["case"]["id"]
    newer = (await new_case("mole"))["case"]["id"]
    assert (await client.get("/api/stage/latest")).json() == {"case_id": newer}
    assert (await client.delete(f"/api/cases/{newer}")).status_code == 204
    assert (await client.get("/api/stage/latest")).json() == {"case_id": older}


def test_matrix_cells_speak_only_to_the_facts_an_answer_addresses() -> None:
    """Pure: one answer's cells, from its cited hits and the question asked."""
    facts = [
        KeyFact(id="combination", label="Safe combination", topic="safe_combination", question="Code?"),
        KeyFact(id="alibi", label="Alibi", topic="suspect_alibi", question="Alibi?"),
        KeyFact(id="handler", label="Handler", topic="handler"),
    ]
    own = {"card_id": "1", "space": "detective", "topic": "safe_combination"}
    copy = {"card_id": "2", "space": "bulletin_board", "topic": "safe_combination"}
    assert cells_for_answer(facts, "detective", "Code?", [], []) == {"combination": "unknown"}
    assert cells_for_answer(facts, "detective", None, [], []) == {}  # text dropped after an erased card
    assert cells_for_answer(facts, "detective", "Something else?", [], []) == {}
    assert cells_for_answer(facts, "detective", "Code?", [copy], []) == {"combination": "board"}
    assert cells_for_answer(facts, "detective", "Code?", [copy, own], []) == {"combination": "own_memory"}
    assert cells_for_answer(facts, "detective", "x", [own, copy], ["safe_combination"]) == {
        "combination": "conflicting"
    }
