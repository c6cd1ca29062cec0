"""Property-based: random game histories (whispers, interrogations, publications, cross-examinations, card
erasures, resets) over the real store. After every step, no payload delivered to the stage or to a role's
search holds an item whose audience excludes that recipient, and sealed conclusions never leave the operator
view (not on the stage, not in any card any role could retrieve, not in any later answer)."""

from __future__ import annotations

import json
import secrets
import string
from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bureau.api.delivery import project_event
from bureau.api.deps import Services
from bureau.scope.audience import Audience

ROLES = ("detective", "informant", "suspect")
BOARD = "bulletin_board"

roles = st.sampled_from(ROLES)
steps = st.one_of(
    st.tuples(st.just("whisper"), roles),
    st.tuples(st.just("ask"), roles, st.integers(0, 7)),
    st.tuples(st.just("publish"), roles, st.integers(0, 7)),
    st.tuples(st.just("cross"), st.lists(roles, min_size=2, max_size=3, unique=True), st.integers(0, 7)),
    st.tuples(st.just("erase_card"), roles, st.integers(0, 7)),
    st.tuples(st.just("reset")),
)


def marker() -> str:
    return "zq" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(12))


@dataclass
class Game:
    client: httpx.AsyncClient
    case_id: str
    markers: list[str] = field(default_factory=list)
    private_ids: set[str] = field(default_factory=set)
    private_texts: set[str] = field(default_factory=set)  # everything that was ever only in a role's space
    questions: set[str] = field(default_factory=set)
    sealed_texts: set[str] = field(default_factory=set)

    async def snapshot(self) -> dict[str, Any]:
        response = await self.client.get(f"/api/cases/{self.case_id}")
        assert response.status_code == 200
        snap = response.json()
        for role in ROLES:
            for card in snap["spaces"][role]:
                self.private_ids.add(card["id"])
        return snap

    def question(self, pick: int) -> str:
        if not self.markers:
            return "What is the safe combination?"
        return f"Where does marker {self.markers[pick % len(self.markers)]} hide?"

    async def step(self, move: tuple[Any, ...], snap: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """Play one move; returns the (recipient role, trace) of every search it ran."""
        base = f"/api/cases/{self.case_id}"
        kind = move[0]
        if kind == "whisper":
            m = marker()
            self.markers.append(m)
            response = await self.client.post(
                base + "/whispers", json={"role": move[1], "text": f"Marker {m} hides in the {move[1]}'s room."}
            )
            assert response.status_code == 201
        elif kind == "ask":
            question = self.question(move[2])
            self.questions.add(question)
            response = await self.client.post(base + "/interrogations", json={"role": move[1], "question": question})
            assert response.status_code == 200
            body = response.json()
            assert not any(text in body["answer"] for text in self.sealed_texts)
            return [(move[1], body["trace"])]
        elif kind == "publish":
            cards = [c for c in snap["spaces"][move[1]] if c["memory_type"] not in ("session", "task_state")]
            if cards:
                card = cards[move[2] % len(cards)]
                response = await self.client.post(base + "/publications", json={"role": move[1], "card_id": card["id"]})
                assert response.status_code in (200, 201)
        elif kind == "cross":
            question = self.question(move[2])
            self.questions.add(question)
            response = await self.client.post(
                base + "/cross-examinations", json={"roles": move[1], "question": question}
            )
            assert response.status_code == 200
            body = response.json()
            if body["conclusion"]["sealed"]:
                self.sealed_texts.add(body["conclusion"]["text"])
            return [(r["role"], r["trace"]) for r in body["results"]]
        elif kind == "erase_card":
            cards = snap["spaces"][move[1]]
            if cards:
                response = await self.client.delete(f"{base}/cards/{cards[move[2] % len(cards)]['id']}")
                assert response.status_code == 204
        else:
            assert (await self.client.post(base + "/reset")).status_code == 200
        return []


async def stage_payloads(client: httpx.AsyncClient, services: Services, case_id: str) -> str:
    parts = [(await client.get(f"/api/cases/{case_id}/stage")).text]
    parts.append((await client.get(f"/api/cases/{case_id}/stage/record")).text)
    for event in await services.ledger.events.events_after(case_id, 0):
        parts.append(json.dumps(project_event(Audience.STAGE, event.type, event.payload), ensure_ascii=False))
    return "\n".join(parts)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(history=st.lists(steps, min_size=4, max_size=9))
async def test_no_payload_reaches_a_recipient_outside_an_items_audience(
    history: list[tuple[Any, ...]], client: httpx.AsyncClient, services: Services
) -> None:
    created = await client.post("/api/cases", json={"scenario_id": "safe-combination"})
    game = Game(client, created.json()["case"]["id"])
    snap = await game.snapshot()
    for move in history:
        searches = await game.step(move, snap)
        before = snap
        snap = await game.snapshot()
        spaces_of = {c["id"]: space for space, cards in before["spaces"].items() for c in cards}
        spaces_of |= {c["id"]: space for space, cards in snap["spaces"].items() for c in cards}
        # A role's search only ever returns items whose audience admits the role: its own space and the board.
        for role, trace in searches:
            for item in trace["hits"] + trace["misses"]:
                assert item["space"] in (role, BOARD), (move, item)
                assert spaces_of.get(item["card_id"], item["space"]) == item["space"], (move, item)
        board_texts = {c["content"] for c in snap["spaces"][BOARD]}
        for role in ROLES:
            game.private_texts |= {c["content"] for c in snap["spaces"][role]} - board_texts
        # The stage receives only public items: no private card id, question, private text or sealed result.
        stage = await stage_payloads(client, services, game.case_id)
        assert not [i for i in game.private_ids if i in stage], move
        assert not [q for q in game.questions if q in stage], move
        assert not [t for t in game.sealed_texts if t in stage], move
        assert not [t for t in game.private_texts - board_texts if t in stage], move
        # Sealed conclusions never become retrievable: no card in any space holds one.
        contents = [c["content"] for cards in snap["spaces"].values() for c in cards]
        assert not [t for t in game.sealed_texts for c in contents if t in c], move
    assert (await client.delete(f"/api/cases/{game.case_id}")).status_code == 204
