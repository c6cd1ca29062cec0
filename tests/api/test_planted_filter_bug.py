"""A planted filter bug (issue 33.4), independently of the presenter act: the store statement forgets the space
filter and the rows' space marker is not looked at again (the gateway's re-check and the game's audience check,
which reads the same marker, both skipped: tests/planted_bugs.py), then the isolation matrix is played through
the ordinary routes, in process, on the real store, ledger and vault. Only the compartments' keys and bases
stand between a role and the other roles' cards.

Played: 4 scenarios x 2 languages x 3 roles x every preset question (interrogations); every preset question
cross-examined with the three roles; the findings (evaluate, then promote what qualifies). Every command runs
twice, on two cases with the same history: with the filter intact (the control), then with the bug planted.
Asserted, with the bug planted (and, as a baseline, without):
- nothing of another role's private cards (its text, named source, card id or topic) in any response, event
  (operator payload and stage projection), record entry (JSON and Markdown exports), log line or model prompt
  of the role, nor among the cards the responder is handed;
- certainty, evidence, answer and trace the control's, question by question;
- the foreign rows did come back, locked (`locked_rows_seen` grows), and the re-check dropped none (it is off);
  with the filter intact, no row came back locked.

The same test with one key and one basis for every space of a case fails (`layout` "one key per case", a
strict xfail): the compartments' own keys are what makes it pass. Its first failure, on the first question:
"safe-combination/en detective asked 'What is the safe combination?': the answer: the detective was shown
another role's text 'The safe combination is 0427.', card id ..., topic 'safe_combination', ...".

The model prompt is the role voice's own (`system_prompt` + `render_prompt` of the plan it would make), built
from every request the responder gets: the in-process app answers in evidence mode, and no model is called.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import pytest_asyncio

from bureau.answering.base import Answer, AnswerRequest
from bureau.answering.role_voice.packet import build_packet
from bureau.answering.role_voice.prompt import render_prompt, system_prompt
from bureau.answering.role_voice.reply import plan_answer
from bureau.api.delivery import project_event
from bureau.api.deps import Services
from bureau.scope.audience import Audience
from bureau.scope.keys import SPACES
from helpers import ask
from planted_bugs import drop_the_space_filter, skip_the_audience_check, skip_the_recheck

SCENARIOS = ("safe-combination", "mole", "allergy", "night-ferry")
LANGUAGES = ("en", "zh")
ROLES = ("detective", "informant", "suspect")
COMPARTMENTS, ONE_KEY = "compartments", "one key per case"


# ----- what a role must never be shown ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Foreign:
    """The other roles' private cards, less what the role's own cards say too: texts (contents and named
    sources), card ids and topics. The role's own texts are blanked out before looking (the suspect's "The grey
    van left the harbour at midnight, I heard." holds the detective's sentence)."""

    role: str
    texts: tuple[str, ...]
    ids: tuple[str, ...]
    topics: tuple[str, ...]
    own: tuple[str, ...]

    def found_in(self, text: str) -> list[str]:
        for mine in self.own:
            text = text.replace(mine, " ")
        found = [f"text {t!r}" for t in self.texts if t in text]
        found += [f"card id {i}" for i in self.ids if re.search(rf"(?<!\d){i}(?!\d)", text)]
        found += [f"topic {t!r}" for t in self.topics if re.search(rf"(?<!\w){re.escape(t)}(?!\w)", text)]
        return found


def foreign_to(case: dict[str, Any], role: str) -> Foreign:
    def texts(card: dict[str, Any]) -> list[str]:
        return [card["content"], *([card["told_by"]] if card.get("told_by") else [])]

    own = case["spaces"][role]
    others = [c for space in ROLES if space != role for c in case["spaces"][space]]
    own_texts = {t for c in own for t in texts(c)}
    return Foreign(
        role,
        tuple(sorted({t for c in others for t in texts(c)} - own_texts)),
        tuple(c["id"] for c in others),
        tuple(sorted({c["topic"] for c in others} - {c["topic"] for c in own})),
        tuple(sorted(own_texts, key=len, reverse=True)),
    )


def dumped(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def assert_nothing_foreign(where: str, value: Any, foreign: Foreign) -> None:
    found = foreign.found_in(dumped(value))
    assert not found, f"{where}: the {foreign.role} was shown another role's {', '.join(found)}"


# ----- what a command gave, without the ids and scores that differ between two cases ---------------------


def card_of(case: dict[str, Any]) -> Callable[[str], tuple[str, str]]:
    """A card id of the case as (space, content): the same card in two cases played alike."""
    seeded = {c["id"]: (space, c["content"]) for space in SPACES for c in case["spaces"][space]}
    return lambda card_id: seeded.get(card_id, ("not seeded", card_id))


def outcome(result: dict[str, Any], card: Callable[[str], tuple[str, str]]) -> dict[str, Any]:
    trace = result["trace"]
    return {
        "certainty": result["certainty"],
        "answer": result["answer"],
        "evidence": [card(i) for i in trace["evidence"]],
        "searched": trace["searched_scopes"],
        "hits": [(card(h["card_id"]), h["status"]) for h in trace["hits"]],
        "misses": sorted((m["space"], m["topic"], m["memory_type"], m["reason"]) for m in trace["misses"]),
        "fallback": trace["fallback_reason"],
        "conflicts": [(c["topic"], [card(i) for i in c["card_ids"]]) for c in trace["conflicts"]],
        "dropped": trace["owner_mismatch_dropped"],
    }


def evaluation_outcome(evaluation: dict[str, Any], card: Callable[[str], tuple[str, str]]) -> list[dict[str, Any]]:
    return [
        {
            **{k: v for k, v in claim.items() if k not in ("contributors", "finding_id")},
            "contributors": [(c["role"], card(c["card_id"]), c["source"], c["status"]) for c in claim["contributors"]],
        }
        for claim in evaluation["claims"]
    ]


# ----- the two cases, the bug, the layout ----------------------------------------------------------------


@dataclass(slots=True)
class Twin:
    """One case of a pair played alike: its snapshot at creation, its last event then, its cards by id."""

    snapshot: dict[str, Any]
    cursor: int
    card: Callable[[str], tuple[str, str]] = field(init=False)

    def __post_init__(self) -> None:
        self.card = card_of(self.snapshot)

    @property
    def id(self) -> str:
        return str(self.snapshot["case"]["id"])

    def foreign_to(self, role: str) -> Foreign:
        return foreign_to(self.snapshot, role)

    def private_cards(self) -> list[dict[str, Any]]:
        return [c for role in ROLES for c in self.snapshot["spaces"][role]]


class Prompts:
    """Every answer the game asks the responder for: what the role voice would send a model for it (persona,
    rules, question, the facts the server chose: the model call in `answering/role_voice/responder.py`) and the
    cards the responder is handed, by case and role."""

    def __init__(self, answer: Callable[[AnswerRequest], Any]) -> None:
        self._answer = answer
        self.sent: list[tuple[str, str, str]] = []

    async def answer(self, request: AnswerRequest) -> Answer:
        plan = plan_answer(build_packet(request))
        prompt = system_prompt(request.role, request.language) + "\n" + render_prompt(request, plan)
        handed = [
            (c.card.id, c.card.space, c.card.topic, c.card.content, c.card.told_by)
            for c in (*request.hits, *request.borderline)
        ]
        self.sent.append((request.case_id, request.role, prompt + "\n" + dumped(handed)))
        answer: Answer = await self._answer(request)
        return answer

    def of(self, case_id: str) -> list[tuple[str, str]]:
        return [(role, text) for case, role, text in self.sent if case == case_id]


class LogLines(logging.Handler):
    """Every log line of the process, at every level, as written."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.name} {record.levelname}: {record.getMessage()}")


@dataclass(slots=True)
class Match:
    """The matrix being played: the client, the services, what was recorded, the cases made (erased at the
    end) and, per part of the matrix, what was counted."""

    client: httpx.AsyncClient
    services: Services
    monkeypatch: pytest.MonkeyPatch
    prompts: Prompts
    logs: LogLines
    cases: list[str] = field(default_factory=list)
    counts: dict[str, Counter[str]] = field(default_factory=dict)

    async def twins(self, scenario: str, language: str) -> tuple[Twin, Twin]:
        made = []
        for _ in range(2):
            case = await post(self, "", "", {"scenario_id": scenario, "language": language})
            self.cases.append(case["case"]["id"])
            made.append(Twin(case, (await self.events(case["case"]["id"], 0))[-1].id))
        return made[0], made[1]

    @contextlib.contextmanager
    def counted(self, counts: Counter[str], run: str) -> Iterator[None]:
        """Rows that came back and did not open, and rows the re-check dropped, while one command ran."""
        gateway = self.services.gateway
        locked, dropped = gateway.locked_rows_seen, gateway.foreign_hits_dropped
        yield
        counts[f"{run}: locked rows seen"] += gateway.locked_rows_seen - locked
        counts[f"{run}: foreign hits dropped"] += gateway.foreign_hits_dropped - dropped

    @contextlib.contextmanager
    def planted(self, counts: Counter[str]) -> Iterator[None]:
        """The bug planted for one command: the statement without its space filter, no check of the rows'
        space marker after it (the re-check, the audience check)."""
        with self.monkeypatch.context() as patch, self.counted(counts, "planted"):
            drop_the_space_filter(self.services.gateway, patch)
            skip_the_recheck(patch)
            skip_the_audience_check(patch)
            yield

    async def events(self, case_id: str, after: int) -> list[Any]:
        found: list[Any] = []
        while page := await self.services.ledger.events.events_after(case_id, after):
            found += page
            after = page[-1].id
        return found

    async def text(self, case_id: str, path: str) -> str:
        response = await self.client.get(f"/api/cases/{case_id}{path}")
        assert response.status_code == 200, response.text
        return response.text

    def assert_logs_name_no_card(self, since: int, twins: tuple[Twin, Twin], where: str) -> None:
        """No log line written since `since` names a private card of the twins: its text, source, id or topic
        (whoever's: a log line names counts, never a card)."""
        everyone = [twin.foreign_to(role) for twin in twins for role in ROLES]
        for line in self.logs.lines[since:]:
            for foreign in everyone:
                assert_nothing_foreign(f"{where}: log line {line!r}", line, foreign)


@pytest.fixture
def layout(request: pytest.FixtureRequest, services: Services, monkeypatch: pytest.MonkeyPatch) -> str:
    """How a case's keys are laid out. "one key per case" is the layout before compartments: every space's
    text sealed under one key of the case, every space's vectors in one basis (the vault's test seam,
    `Keyring.key_name`; the cases are made under it)."""
    if request.param == ONE_KEY:
        one = SPACES[0]
        monkeypatch.setattr(
            services.vault.keyring, "key_name", lambda compartment: one if compartment in SPACES else compartment
        )
    return str(request.param)


@pytest_asyncio.fixture
async def match(
    layout: str, client: httpx.AsyncClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Match]:
    responder = services.bureau.interrogation.deps.responder
    assert services.bureau.cross_examination.deps.responder is responder
    prompts = Prompts(responder.answer)
    monkeypatch.setattr(responder, "answer", prompts.answer)
    logs, root = LogLines(), logging.getLogger()
    level = root.level
    root.addHandler(logs)
    root.setLevel(logging.DEBUG)
    played = Match(client, services, monkeypatch, prompts, logs)
    try:
        yield played
    finally:
        root.removeHandler(logs)
        root.setLevel(level)
        for case_id in played.cases:  # under the layout they were made in (an erase opens nothing)
            assert (await client.delete(f"/api/cases/{case_id}")).status_code == 204


# ----- the matrix -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "layout",
    [
        COMPARTMENTS,
        pytest.param(
            ONE_KEY,
            marks=pytest.mark.xfail(
                strict=True,
                raises=AssertionError,
                reason="one key and one basis for every space of a case: the planted bug's foreign rows open and "
                "score like the role's own, and another role's cards reach the answer",
            ),
        ),
    ],
    indirect=True,
)
async def test_a_planted_filter_bug_shows_no_role_anything_foreign(layout: str, match: Match) -> None:
    started = time.monotonic()
    for scenario in SCENARIOS:
        for language in LANGUAGES:
            for role in ROLES:
                await interrogations(match, scenario, language, role)
            await cross_examinations_and_findings(match, scenario, language)
    # The log capture was live: the searches that got rows of other compartments said so, in counts only.
    assert any("of other compartments; none opened" in line for line in match.logs.lines)
    print(f"\nplanted filter bug, layout {layout!r}: {time.monotonic() - started:.1f} s")
    for part, counts in match.counts.items():
        print(f"  {part:50} {dict(counts)}")


async def interrogations(match: Match, scenario: str, language: str, role: str) -> None:
    """Every preset question asked of one role, in a control case and in a case with the bug planted."""
    part = f"{scenario}/{language} {role}"
    control, planted = await match.twins(scenario, language)
    counts = match.counts.setdefault(part, Counter())
    lines = len(match.logs.lines)
    questions = planted.snapshot["scenario"]["preset_questions"]
    for question in questions:
        where = f"{part} asked {question!r}"
        with match.counted(counts, "control"):
            expected = await ask(match.client, control.id, role, question)
        with match.planted(counts):
            got = await ask(match.client, planted.id, role, question)
        counts["questions"] += 1
        for twin, result in ((control, expected), (planted, got)):
            assert_nothing_foreign(f"{where}: the answer", result, twin.foreign_to(role))
        assert outcome(got, planted.card) == outcome(expected, control.card), f"{where}: not the control's"
    assert counts["planted: locked rows seen"] > 0, f"{part}: no foreign row came back"
    assert counts["planted: foreign hits dropped"] == 0, f"{part}: the re-check is off, it drops nothing"
    assert counts["control: locked rows seen"] == counts["control: foreign hits dropped"] == 0, part
    for twin in (control, planted):
        foreign = twin.foreign_to(role)
        events = await match.events(twin.id, twin.cursor)
        assert events, part
        for event in events:
            assert_nothing_foreign(f"{part}: event {event.type}", event.payload, foreign)
            staged = project_event(Audience.STAGE, event.type, event.payload)
            assert_nothing_foreign(f"{part}: event {event.type} on stage", staged, foreign)
        for path in ("/record/export?format=json", "/record/export?format=markdown", "/stage", "/stage/record"):
            assert_nothing_foreign(f"{part}: {path}", await match.text(twin.id, path), foreign)
        prompts = match.prompts.of(twin.id)
        assert [asked for asked, _ in prompts] == [role] * len(questions), part
        for _, prompt in prompts:
            assert_nothing_foreign(f"{part}: a model prompt", prompt, foreign)
    match.assert_logs_name_no_card(lines, (control, planted), part)


async def cross_examinations_and_findings(match: Match, scenario: str, language: str) -> None:
    """Every preset question put to the three roles at once, then the findings (every role's private cards
    read under one grant, one role's part at a time): each role's part shows its own cards only, and every
    result is the control's."""
    part = f"{scenario}/{language} cross-examinations, findings"
    control, planted = await match.twins(scenario, language)
    counts = match.counts.setdefault(part, Counter())
    lines = len(match.logs.lines)
    questions = planted.snapshot["scenario"]["preset_questions"]
    for question in questions:
        where = f"{scenario}/{language} cross-examined on {question!r}"
        body = {"roles": list(ROLES), "question": question}
        with match.counted(counts, "control"):
            expected = await post(match, control.id, "/cross-examinations", body)
        with match.planted(counts):
            got = await post(match, planted.id, "/cross-examinations", body)
        counts["questions"] += 1
        for twin, result in ((control, expected), (planted, got)):
            for result_of in result["results"]:
                role = result_of["role"]
                assert_nothing_foreign(f"{where}: the {role}'s part", result_of, twin.foreign_to(role))
        assert [outcome(r, planted.card) for r in got["results"]] == [
            outcome(r, control.card) for r in expected["results"]
        ], f"{where}: not the control's"
        assert conclusion(got, planted) == conclusion(expected, control), f"{where}: not the control's"

    with match.counted(counts, "control"):
        expected = await post(match, control.id, "/findings/evaluate", None)
    with match.planted(counts):
        got = await post(match, planted.id, "/findings/evaluate", None)
    for twin, evaluation in ((control, expected), (planted, got)):
        for claim in evaluation["claims"]:
            for contributor in claim["contributors"]:  # a role's part holds its own cards only
                assert twin.card(contributor["card_id"])[0] == contributor["role"], f"{part}: {claim}"
    assert evaluation_outcome(got, planted.card) == evaluation_outcome(expected, control.card), part
    for claim in [c["claim"] for c in expected["claims"] if c["decision"] == "qualifies"]:
        with match.counted(counts, "control"):
            promoted = await post(match, control.id, "/findings", {"claim": claim})
        with match.planted(counts):
            promoted_planted = await post(match, planted.id, "/findings", {"claim": claim})
        counts["findings promoted"] += 1
        assert promotion(promoted_planted) == promotion(promoted), f"{part}: promoting {claim!r}"

    assert counts["planted: locked rows seen"] > 0, f"{part}: no foreign row came back"
    assert counts["planted: foreign hits dropped"] == 0, f"{part}: the re-check is off, it drops nothing"
    assert counts["control: locked rows seen"] == counts["control: foreign hits dropped"] == 0, part
    for twin in (control, planted):
        await each_role_apart_in_the_record_and_nothing_private_on_stage(match, twin, part)
        prompts = match.prompts.of(twin.id)
        assert len(prompts) == len(questions) * len(ROLES), part
        for asked, prompt in prompts:
            assert_nothing_foreign(f"{part}: the {asked}'s model prompt", prompt, twin.foreign_to(asked))
    match.assert_logs_name_no_card(lines, (control, planted), part)


def conclusion(result: dict[str, Any], twin: Twin) -> dict[str, Any]:
    found = result["conclusion"]
    return {
        **{k: v for k, v in found.items() if k != "provenance"},
        "provenance": [(twin.card(p["card_id"]), p["space"]) for p in found["provenance"]],
    }


def promotion(result: dict[str, Any]) -> dict[str, Any]:
    """A promotion without what differs between two cases (ids, times)."""
    finding = {k: v for k, v in result["finding"].items() if not k.endswith(("id", "_at"))}
    mark = {k: v for k, v in result["card"]["finding"].items() if not k.endswith(("id", "_at"))}
    return {"finding": finding, "card": (result["card"]["content"], result["card"]["space"], mark)}


async def each_role_apart_in_the_record_and_nothing_private_on_stage(match: Match, twin: Twin, part: str) -> None:
    """Each role's part of a cross-examination's event and record entry shows that role's cards only; the
    space a record entry names for a card is the card's own; the stage names no private card or source."""
    private = twin.private_cards()

    def assert_nothing_private(where: str, staged: str) -> None:
        assert not [c["id"] for c in private if c["id"] in staged], f"{part}: {where}"
        assert not [c["told_by"] for c in private if c.get("told_by") and c["told_by"] in staged], f"{part}: {where}"

    for event in await match.events(twin.id, twin.cursor):
        for trace in event.payload.get("traces", []):
            assert_nothing_foreign(f"{part}: event {event.type}", trace, twin.foreign_to(trace["role"]))
        assert_nothing_private(
            f"event {event.type} on stage", dumped(project_event(Audience.STAGE, event.type, event.payload))
        )
    export = json.loads(await match.text(twin.id, "/record/export?format=json"))
    assert len(export["entries"]) == len(twin.snapshot["scenario"]["preset_questions"]), part
    for entry in export["entries"]:
        for result_of in entry["results"]:
            role = result_of["role"]
            assert_nothing_foreign(f"{part}: the {role}'s part of a record entry", result_of, twin.foreign_to(role))
        for item in entry["provenance"]:
            assert twin.card(item["card_id"])[0] == item["space"], f"{part}: record entry {entry['id']}"
    for path in ("/stage", "/stage/record"):
        assert_nothing_private(path, await match.text(twin.id, path))


async def post(match: Match, case_id: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
    """A command's answer (201 or 200). `case_id` "": a new case."""
    url = f"/api/cases/{case_id}{path}" if case_id else "/api/cases"
    response = await match.client.post(url, json=body)
    assert response.status_code in (200, 201), f"{url}: {response.text}"
    result: dict[str, Any] = response.json()
    return result
