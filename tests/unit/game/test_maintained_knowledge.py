"""Property-based, on the real store and ledger through the game: after any random history of interrogations,
publications, card deletions (cited cards included), whispers, resets and a case "from before the maintained
state" (its rows gone and its flag cleared, as migration 0008 leaves an old case), the matrix and the latest
answers the ledger maintains equal a full fold of the record (`fold_knowledge` / `latest_answers`, the
reference), and the snapshot shows exactly that.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, update

from bureau.api.deps import Services
from bureau.ledger.models import CaseRow, KnowledgeCellRow, LatestAnswerRow
from helpers import assert_snapshot_state_is_the_fold, grant_of

ROLES = ("detective", "informant", "suspect")
QUESTIONS = (
    "What is the safe combination?",
    "Where is the safe hidden?",
    "What time was the break-in?",
    "What is your alibi for the night of the break-in?",
    "Who holds the combination to the safe?",
    "What did you see on the night of the break-in?",
)
roles = st.sampled_from(ROLES)
picks = st.integers(0, 30)
moves = st.one_of(
    st.tuples(st.just("ask"), roles, st.integers(0, len(QUESTIONS) - 1)),
    st.tuples(st.just("ask"), roles, st.integers(0, len(QUESTIONS) - 1)),
    st.tuples(st.just("ask"), roles, st.integers(0, len(QUESTIONS) - 1)),
    st.tuples(st.just("publish"), roles, picks),
    st.tuples(st.just("delete_cited"), picks, picks),
    st.tuples(st.just("delete_cited"), picks, picks),
    st.tuples(st.just("delete"), roles, picks),
    st.tuples(st.just("whisper"), roles, picks),
    st.tuples(st.just("reset"), picks, picks),
    st.tuples(st.just("from_before"), picks, picks),
)
asks = st.tuples(st.just("ask"), roles, st.integers(0, len(QUESTIONS) - 1))
# A few questions first (so there are answers whose cited cards can be erased), then anything.
histories = st.builds(
    lambda first, rest: [*first, *rest],
    st.lists(asks, min_size=2, max_size=4),
    st.lists(moves, min_size=2, max_size=8),
)
COUNTS = {"asked": 0, "redacted_refolds": 0, "resets": 0, "folded_on_read": 0}


def make_from_before(services: Services, case_id: str) -> None:
    """What migration 0008 leaves for a case it found: no maintained rows, the flag false."""
    with services.ledger.engine.begin() as connection:
        connection.execute(delete(KnowledgeCellRow).where(KnowledgeCellRow.case_id == case_id))
        connection.execute(delete(LatestAnswerRow).where(LatestAnswerRow.case_id == case_id))
        connection.execute(update(CaseRow).where(CaseRow.id == case_id).values(knowledge_folded=False))


async def own_cards(client: httpx.AsyncClient, case_id: str, role: str) -> list[str]:
    snapshot = (await client.get(f"/api/cases/{case_id}")).json()
    return [c["id"] for c in snapshot["spaces"][role] if c["memory_type"] != "session"]


async def play(move: tuple[Any, ...], client: httpx.AsyncClient, services: Services, case_id: str) -> None:
    base = f"/api/cases/{case_id}"
    kind = move[0]
    if kind == "ask":
        response = await client.post(base + "/interrogations", json={"role": move[1], "question": QUESTIONS[move[2]]})
        assert response.status_code == 200, response.text
        COUNTS["asked"] += 1
    elif kind == "publish":
        own = await own_cards(client, case_id, move[1])
        if own:
            body = {"role": move[1], "card_id": own[move[2] % len(own)]}
            assert (await client.post(base + "/publications", json=body)).status_code in (200, 201)
    elif kind == "delete_cited":
        grant, case = (
            await grant_of(services, case_id, record=True),
            await services.bureau.case_access.require_case(case_id),
        )
        maintained = await services.ledger.knowledge.case_knowledge(
            case_id, grant, services.bureau.catalogue.knowledge_steps(case)
        )
        cited = sorted({card for a in maintained.answers.values() for card in a.summary["evidence"]})
        private = {card for role in ROLES for card in await own_cards(client, case_id, role)}
        cited = [card for card in cited if card in private]
        if cited:
            assert (await client.delete(f"{base}/cards/{cited[move[1] % len(cited)]}")).status_code == 204
            COUNTS["redacted_refolds"] += 1
            event("deleted a cited card")
    elif kind == "delete":
        own = await own_cards(client, case_id, move[1])
        if own:
            assert (await client.delete(f"{base}/cards/{own[move[2] % len(own)]}")).status_code == 204
    elif kind == "whisper":
        text = ("The combination is 1-9-8-4.", "The safe is behind the portrait.", "I was at the opera.")[move[2] % 3]
        assert (await client.post(base + "/whispers", json={"role": move[1], "text": text})).status_code == 201
    elif kind == "reset":
        assert (await client.post(base + "/reset", json={})).status_code == 200
        COUNTS["resets"] += 1
    elif kind == "from_before":
        make_from_before(services, case_id)
        COUNTS["folded_on_read"] += 1


@settings(
    max_examples=20,
    derandomize=True,  # the same histories every run
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(history=histories)
async def test_the_maintained_snapshot_state_equals_a_full_fold_after_any_history(
    history: list[tuple[Any, ...]], client: httpx.AsyncClient, services: Services
) -> None:
    created = await client.post("/api/cases", json={"scenario_id": "safe-combination"})
    case_id = created.json()["case"]["id"]
    await assert_snapshot_state_is_the_fold(client, services, case_id)
    for move in history:
        await play(move, client, services, case_id)
        await assert_snapshot_state_is_the_fold(client, services, case_id)
    assert (await client.delete(f"/api/cases/{case_id}")).status_code == 204


def test_the_histories_asked_deleted_cited_cards_reset_and_folded_old_cases() -> None:
    if not any(COUNTS.values()):
        pytest.skip("the property test did not run in this session (selected alone)")
    print(f"\nmaintained-knowledge property run: {COUNTS}")
    assert all(COUNTS.values()), COUNTS
