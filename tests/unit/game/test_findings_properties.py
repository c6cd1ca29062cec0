"""Property-based, on the real store and ledger: random histories of whispers (drawn from a small pool of
claims and sources, so that findings do qualify), publications, questions, promotions and deletions, under
both allowed settings of BUREAU_FINDING_MIN_SUPPORT. After every step:

- no finding ever qualifies below the rule: a promotion succeeds exactly when a brute-force oracle over the
  evaluation's eligible contributors says leave-one-out holds, and every ready finding's ledger mapping holds it;
- no stage frame, finding event, finding list, finding card, record export or role-voice prompt holds a
  contributor's card id or source (nor, in what a finding shows, a role);
- after any deletion, no finding survives that fails leave-one-out without the deleted contributor, and a
  withdrawn finding's board card and mapping are gone.

The counts of qualifying promotions and withdrawals are reported by the last test of the module (and must not
be zero: a run where nothing qualified would prove nothing).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bureau.answering.base import AnswerRequest
from bureau.answering.role_voice.packet import build_packet
from bureau.answering.role_voice.prompt import render_prompt, system_prompt
from bureau.answering.role_voice.reply import plan_answer
from bureau.api.delivery import project_event
from bureau.api.deps import Services
from bureau.memory.types import Candidate
from bureau.scope.audience import Audience
from helpers import grant_of

ROLES = ("detective", "informant", "suspect")
CLAIMS = ("The red boat docked at the north pier at dawn.", "The gardener burned the letters in the greenhouse.")
VARIANTS = ("{claim}", "Word is that {lower}")
SOURCES = ("the lighthouse keeper", "the postman", "the night nurse")
ELIGIBLE = {"counted", "same_role", "shared_source"}
COUNTS = {"promoted": 0, "refused": 0, "withdrawn": 0, "kept_after_deletion": 0}

roles = st.sampled_from(ROLES)
claims = st.integers(0, len(CLAIMS) - 1)
sources = st.one_of(st.none(), st.sampled_from(SOURCES))
whisper = st.tuples(st.just("whisper"), roles, claims, st.integers(0, 1), sources)
# Three roles told one claim: by three different named sources (qualifies), or by sources drawn at random
# (perhaps shared, perhaps the chief's own unsourced word).
corroborate = st.one_of(
    st.tuples(st.just("corroborate"), claims, st.permutations(SOURCES)),
    st.tuples(st.just("corroborate"), claims, st.tuples(sources, sources, sources)),
)
promote = st.tuples(st.just("promote"), claims)
delete = st.tuples(st.just("delete"), roles, st.integers(0, 9))
# Deleting a card that supports a promoted finding (any card of the role when none does).
delete_contributor = st.tuples(st.just("delete_contributor"), st.integers(0, 20))
steps = st.one_of(
    delete_contributor,
    delete_contributor,
    whisper,
    corroborate,
    st.tuples(st.just("publish"), roles, st.integers(0, 9)),
    st.tuples(st.just("ask"), roles, claims),
    promote,
    delete,
    delete,
)
# A history: the claims told, a promotion, then anything (more deletions and promotions among it).
histories = st.builds(
    lambda told, first, rest: [*told, first, *rest],
    st.lists(st.one_of(corroborate, whisper), min_size=1, max_size=3),
    promote,
    st.lists(steps, min_size=2, max_size=7),
)


def brute_leave_one_out(found: list[tuple[str, str, str]]) -> int:
    """(card, role, source) triples: the smallest largest-independent-set after removing any role or source."""

    def best(items: list[tuple[str, str, str]]) -> int:
        for size in range(min(len(items), 3), 0, -1):
            for chosen in combinations(items, size):
                if len({c[1] for c in chosen}) == size and len({c[2] for c in chosen}) == size:
                    return size
        return 0

    if not found:
        return 0
    removals = [(1, r) for r in {c[1] for c in found}] + [(2, s) for s in {c[2] for c in found}]
    return min(best([c for c in found if c[index] != value]) for index, value in removals)


def source_identity(contributor: dict[str, Any]) -> str:
    """The test's own reading of the rule: a named source by its label; an unsourced whisper is the chief's;
    an unsourced scenario card is its own source."""
    if contributor["source"]:
        return "label:" + " ".join(contributor["source"].casefold().split())
    return "chief" if contributor.get("created_by") == "operator" else "card:" + contributor["card_id"]


@dataclass
class Game:
    client: httpx.AsyncClient
    services: Services
    case_id: str
    min_support: int
    # finding id -> the eligible (card, role, source) triples the evaluation listed before it was promoted
    promoted: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    finding_cards: dict[str, str] = field(default_factory=dict)
    contributor_ids: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)
    created_by: dict[str, str] = field(default_factory=dict)
    withdrawn: set[str] = field(default_factory=set)

    @property
    def base(self) -> str:
        return f"/api/cases/{self.case_id}"

    async def snapshot(self) -> dict[str, Any]:
        response = await self.client.get(self.base)
        assert response.status_code == 200
        snap: dict[str, Any] = response.json()
        for role in ROLES:
            for card in snap["spaces"][role]:
                self.created_by[card["id"]] = card["created_by"]
        return snap

    async def whisper(self, role: str, claim: int, variant: int, source: str | None) -> None:
        text = VARIANTS[variant].format(claim=CLAIMS[claim], lower=CLAIMS[claim][0].lower() + CLAIMS[claim][1:])
        body: dict[str, Any] = {"role": role, "text": text}
        if source:
            body["source"] = source
        response = await self.client.post(self.base + "/whispers", json=body)
        assert response.status_code == 201, response.text

    async def promote(self, claim: int) -> None:
        evaluated = await self.client.post(self.base + "/findings/evaluate", json={"claim": CLAIMS[claim]})
        assert evaluated.status_code == 200
        [result] = evaluated.json()["claims"]
        for c in result["contributors"]:
            c["created_by"] = self.created_by.get(c["card_id"], "")
        if result["decision"] == "promoted":
            # After promotion no view shows which cards supported it, the evaluation included.
            assert result["contributors"] == [] and result["finding_id"] in self.promoted, result
            response = await self.client.post(self.base + "/findings", json={"claim": CLAIMS[claim]})
            assert response.status_code == 200 and response.json()["finding"]["id"] == result["finding_id"]
            return
        eligible = [
            (c["card_id"], c["role"], source_identity(c)) for c in result["contributors"] if c["status"] in ELIGIBLE
        ]
        oracle = brute_leave_one_out(eligible)
        assert result["leave_one_out"] == oracle, result
        assert (result["decision"] != "not_qualified") == (oracle >= self.min_support), result
        already = result["decision"] == "promoted"
        response = await self.client.post(self.base + "/findings", json={"claim": CLAIMS[claim]})
        if oracle < self.min_support and not already:
            assert response.status_code == 409 and response.json()["detail"]["code"] == "FINDING_NOT_QUALIFIED"
            COUNTS["refused"] += 1
            event("refused")
            return
        assert response.status_code in (200, 201), response.text
        assert (response.status_code == 200) == already
        finding = response.json()["finding"]
        if not already:
            COUNTS["promoted"] += 1
            event("promoted")
            self.promoted[finding["id"]] = eligible
            self.finding_cards[finding["id"]] = response.json()["card"]["id"]
            self.contributor_ids |= {c[0] for c in eligible}

    async def delete(self, role: str, pick: int, snap: dict[str, Any]) -> None:
        own = [c for c in snap["spaces"][role] if c["memory_type"] != "session"]
        if not own:
            return
        card_id = own[pick % len(own)]["id"]
        response = await self.client.delete(f"{self.base}/cards/{card_id}")
        assert response.status_code == 204
        self.deleted.add(card_id)

    async def step(self, move: tuple[Any, ...], snap: dict[str, Any]) -> None:
        kind = move[0]
        if kind == "whisper":
            await self.whisper(move[1], move[2], move[3], move[4])
        elif kind == "corroborate":
            for role, source in zip(ROLES, move[2], strict=True):
                await self.whisper(role, move[1], 0, source)
        elif kind == "publish":
            own = [c for c in snap["spaces"][move[1]] if c["memory_type"] != "session"]
            if own:
                response = await self.client.post(
                    self.base + "/publications", json={"role": move[1], "card_id": own[move[2] % len(own)]["id"]}
                )
                assert response.status_code in (200, 201, 404), response.text
        elif kind == "ask":
            question = "Is it true that " + CLAIMS[move[2]][0].lower() + CLAIMS[move[2]][1:-1] + "?"
            response = await self.client.post(
                self.base + "/interrogations", json={"role": move[1], "question": question}
            )
            assert response.status_code == 200
        elif kind == "promote":
            await self.promote(move[1])
        elif kind == "delete":
            await self.delete(move[1], move[2], snap)
        elif kind == "delete_contributor":
            alive = sorted({c for found in self.promoted.values() for c in found} - {("",)}, key=str)
            alive = [c for c in alive if c[0] not in self.deleted]
            if alive:
                card_id, role, _ = alive[move[1] % len(alive)]
                response = await self.client.delete(f"{self.base}/cards/{card_id}")
                assert response.status_code == 204
                self.deleted.add(card_id)
            else:
                await self.delete(ROLES[move[1] % 3], move[1], snap)

    async def check(self, cursor: int) -> None:
        """The three properties, after every step."""
        listed = (await self.client.get(self.base + "/findings")).json()["findings"]
        board = (await self.snapshot())["spaces"]["bulletin_board"]
        board_ids = {c["id"] for c in board}
        rows = await self.services.ledger.findings.support_rows(self.case_id)
        for finding in listed:
            mapping = [(r[1], r[2], r[3]) for r in rows if r[0] == finding["id"]]
            expected = [c for c in self.promoted.get(finding["id"], []) if c[0] not in self.deleted]
            if finding["state"] == "ready":
                # Never below the rule: by the ledger's own mapping and by the oracle's account of it.
                assert brute_leave_one_out(mapping) >= finding["min_support"], finding
                assert brute_leave_one_out(expected) >= finding["min_support"], (finding, expected)
                assert finding["public_card_id"] in board_ids
            elif finding["state"] == "withdrawn":
                assert brute_leave_one_out(expected) < finding["min_support"], finding
                assert mapping == [] and finding["claim"] is None
                assert self.finding_cards[finding["id"]] not in board_ids
                board_grant = await grant_of(self.services, self.case_id, reads=["bulletin_board"])
                assert await self.services.gateway.get(board_grant, self.finding_cards[finding["id"]]) is None
        # No path home: what a finding shows, its events (operator and stage), the stage, the record, a prompt.
        events = await self.services.ledger.events.events_after(self.case_id, cursor)
        finding_events = [e.payload for e in events if e.type.startswith("finding.")]
        finding_events += [
            e.payload for e in events if e.type == "memory.written" and e.payload["card"].get("kind") == "finding"
        ]
        staged = [project_event(Audience.STAGE, e.type, e.payload) for e in events]
        stage = (await self.client.get(f"/api/cases/{self.case_id}/stage")).json()
        shown = json.dumps([listed, [c for c in board if c["kind"] == "finding"], finding_events], ensure_ascii=False)
        public = json.dumps([staged, stage], ensure_ascii=False)
        record = (await self.client.get(self.base + "/record/export")).text
        prompt = await self.prompt([c for c in board if c["kind"] == "finding"])
        for text in (shown, public, prompt):
            assert not [i for i in self.contributor_ids if f'"{i}"' in text]
            assert not [s for s in SOURCES if s in text]
        assert not [r for r in ROLES if r in shown.replace("bulletin_board", "")]
        assert not [f for f in self.promoted if f in record]
        assert not [p for r in rows for p in r[1:] if p in record or p in public]

    async def prompt(self, finding_cards: list[dict[str, Any]]) -> str:
        """What a role-voice model would be shown with the finding cards (as the store returns them) as its
        evidence."""
        if not finding_cards:
            return ""
        board = await grant_of(self.services, self.case_id, reads=["bulletin_board"])
        stored = [await self.services.gateway.get(board, c["id"]) for c in finding_cards]
        hits = tuple(Candidate(card, 0.9) for card in stored if card is not None)
        request = AnswerRequest(self.case_id, "detective", "What does the bureau know?", "en", hits)
        return system_prompt("detective", "en") + render_prompt(request, plan_answer(build_packet(request)))


@pytest.fixture(params=[2, 1], ids=["min-support-2", "min-support-1"])
def min_support(request: pytest.FixtureRequest, services: Services) -> Iterator[int]:
    findings = services.bureau.findings
    before = findings.settings
    findings.settings = before.model_copy(update={"finding_min_support": request.param})
    yield request.param
    findings.settings = before


@settings(
    max_examples=10,
    derandomize=True,  # the same histories every run: the reported counts are reproducible
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(history=histories)
async def test_findings_hold_the_rule_keep_no_path_home_and_survive_erasure_only_when_supported(
    history: list[tuple[Any, ...]], client: httpx.AsyncClient, services: Services, min_support: int
) -> None:
    created = await client.post("/api/cases", json={"scenario_id": "safe-combination"})
    game = Game(client, services, created.json()["case"]["id"], min_support)
    cursor = await services.ledger.events.latest_event_id()
    snap = await game.snapshot()
    for move in history:
        ready_before = {f for f in game.promoted if f not in game.withdrawn}
        await game.step(move, snap)
        await game.check(cursor)
        snap = await game.snapshot()
        if move[0].startswith("delete"):
            listed = {f["id"]: f["state"] for f in (await client.get(game.base + "/findings")).json()["findings"]}
            for finding_id in ready_before:
                if listed.get(finding_id) == "withdrawn":
                    game.withdrawn.add(finding_id)
                    COUNTS["withdrawn"] += 1
                    event("withdrawn")
                elif listed.get(finding_id) == "ready":
                    COUNTS["kept_after_deletion"] += 1
    assert (await client.delete(game.base)).status_code == 204
    assert await services.ledger.findings.support_rows(game.case_id) == []


def test_the_histories_did_promote_and_withdraw_findings() -> None:
    if not any(COUNTS.values()):
        pytest.skip("the property test did not run in this session (selected alone)")
    print(f"\nfindings property run: {COUNTS}")
    assert COUNTS["promoted"] > 0 and COUNTS["withdrawn"] > 0 and COUNTS["refused"] > 0, COUNTS
