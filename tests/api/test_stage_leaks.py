"""The delivery gate, scanned: every scenario in both languages, played over real HTTP against a live server.

Whispers carry unique secret markers and interrogations unique question markers. Every stage snapshot (after
every step) and every stage SSE frame (live and replayed from the start) is scanned for private card
content, private card ids, question text and answer text. Operator frames, the ledger's event rows and
the server log are scanned for whisper text, question text and card content: events never carry them.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import string
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import pytest_asyncio

import helpers
from bureau.api.delivery import project_event
from bureau.scope.audience import Audience
from live_server import LiveServer
from sse_client import open_sse

SCENARIOS = ("safe-combination", "mole", "allergy")
LANGUAGES = ("en", "zh")
ROLES = ("detective", "informant", "suspect")
EVENT_TYPES = {
    "case.created",
    "memory.written",
    "retrieval.completed",
    "answer.completed",
    "publication.started",
    "publication.completed",
    "case.reset",
    "case.erased",
}
WHISPER = {"en": "Marker {m} hides in the cellar.", "zh": "暗号{m}藏在地窖里。"}
MARKER_QUESTION = {"en": "Where does {m} hide?", "zh": "{m}藏在哪里？"}
WHISPER_QUESTION = {"en": "Where does marker {m} hide?", "zh": "暗号{m}藏在哪里？"}
BOARD_CARD_KEYS = {"id", "content", "topic", "kind", "source_role", "created_at"}
RETRIEVAL_KEYS = {
    "role",
    "searched_scopes",
    "public_hits",
    "private_hit_count",
    "verdict",
    "duration_ms",
    "conflicting",
}


def marker() -> str:
    """Letters only, so no input-policy pattern (phone, card number) can ever match it."""
    return "zq" + "".join(secrets.choice(string.ascii_lowercase) for _ in range(12))


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@dataclass
class Secrets:
    """Everything private seen during a game, and what the stage may legitimately show."""

    private_ids: set[str] = field(default_factory=set)
    private_contents: set[str] = field(default_factory=set)
    board_contents: set[str] = field(default_factory=set)
    board_ids: set[str] = field(default_factory=set)
    whisper_markers: dict[str, str] = field(default_factory=dict)  # marker -> role
    published_markers: set[str] = field(default_factory=set)
    questions: list[str] = field(default_factory=list)
    question_markers: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)

    def learn(self, snapshot: dict[str, Any]) -> None:
        for role in ROLES:
            for card in snapshot["spaces"][role]:
                self.private_ids.add(card["id"])
                self.private_contents.add(card["content"])
        for card in snapshot["spaces"]["bulletin_board"]:
            self.board_ids.add(card["id"])
            self.board_contents.add(card["content"])
            assert card["source"]["card_id"] in self.private_ids

    def stage_leaks(self, text: str) -> list[str]:
        """What of the private world appears in a stage payload (board copies' content is public)."""
        found = [f"private card id {i}" for i in self.private_ids if i in text]
        for content in self.private_contents:
            if content in text and not any(content in public for public in self.board_contents):
                found.append(f"private content {content!r}")
        found += [f"question {q!r}" for q in self.questions if q in text]
        found += [f"question marker {m}" for m in self.question_markers if m in text]
        found += [f"answer {a!r}" for a in self.answers if a in text]
        found += [f"whisper marker {m}" for m in self.whisper_markers if m in text and m not in self.published_markers]
        return found

    def event_leaks(self, text: str) -> list[str]:
        """Events (and logs) never carry whisper text, question text, answers or any card content."""
        found = [f"whisper marker {m}" for m in self.whisper_markers if m in text]
        found += [f"question {q!r}" for q in self.questions if q in text]
        found += [f"question marker {m}" for m in self.question_markers if m in text]
        found += [f"answer {a!r}" for a in self.answers if a in text]
        found += [f"card content {c!r}" for c in self.private_contents | self.board_contents if c in text]
        return found


def assert_stage_shape(stage: dict[str, Any], case_id: str, language: str, operator: dict[str, Any]) -> None:
    assert set(stage) == {"case", "counts", "bulletin_board", "last_retrieval", "last_conclusion"}
    assert stage["last_conclusion"] is None  # this game never cross-examines (tests/api/test_cross_examination.py)
    assert set(stage["case"]) == {"id", "version", "status", "language"}
    assert stage["case"]["id"] == case_id
    assert stage["case"]["language"] == language
    assert stage["case"]["version"] == operator["case"]["version"]
    assert stage["case"]["status"] == "active"
    assert set(stage["counts"]) == set(ROLES)
    for role in ROLES:  # locked cards: the role's own memories, not its session notes
        expected = sum(1 for c in operator["spaces"][role] if c["memory_type"] != "session")
        assert stage["counts"][role] == expected, role
    board = operator["spaces"]["bulletin_board"]
    assert [c["id"] for c in stage["bulletin_board"]] == [c["id"] for c in board]
    for public, full in zip(stage["bulletin_board"], board, strict=True):
        assert set(public) == BOARD_CARD_KEYS
        assert public["content"] == full["content"]
        assert public["source_role"] == full["source"]["role"]
    retrieval = stage["last_retrieval"]
    if retrieval is not None:
        assert set(retrieval) == RETRIEVAL_KEYS
        assert retrieval["verdict"] in ("known", "uncertain", "unknown")
        assert isinstance(retrieval["conflicting"], bool)
        assert retrieval["searched_scopes"] == [retrieval["role"], "bulletin_board"]
        assert all(set(h) == {"card_id", "score"} for h in retrieval["public_hits"])


@pytest_asyncio.fixture(scope="module")
async def http(live_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live_server.url, timeout=30) as client:
        yield client


def ledger_payloads(server: LiveServer, case_id: str) -> list[tuple[int, str, str]]:
    """The event rows as stored, read straight from the SQLite ledger file."""
    with sqlite3.connect(server.data_dir / "bureau.db") as db:
        rows = db.execute("SELECT id, type, payload FROM events WHERE case_id = ? ORDER BY id", (case_id,))
        # Re-serialised without ASCII escapes, so Chinese text is scanned as text.
        return [(i, t, dump(json.loads(p) if isinstance(p, str) else p)) for i, t, p in rows]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("scenario_id", SCENARIOS)
async def test_the_stage_never_receives_anything_private(
    scenario_id: str, language: str, http: httpx.AsyncClient, live_server: LiveServer
) -> None:
    known = Secrets()
    created = await http.post("/api/cases", json={"scenario_id": scenario_id, "language": language})
    assert created.status_code == 201, created.text
    snapshot = created.json()
    case_id = snapshot["case"]["id"]
    presets: list[str] = snapshot["scenario"]["preset_questions"]
    known.learn(snapshot)
    stage_payloads: list[str] = []
    steps = 0

    async def step() -> dict[str, Any]:
        nonlocal steps
        steps += 1
        operator = await helpers.snapshot(http, case_id)
        known.learn(operator)
        response = await http.get(f"/api/cases/{case_id}/stage")
        assert response.status_code == 200
        stage = response.json()
        assert_stage_shape(stage, case_id, language, operator)
        stage_payloads.append(response.text)
        stage_payloads.append(dump(stage))
        return operator

    async def ask(role: str, question: str) -> dict[str, Any]:
        known.questions.append(question)
        body = await helpers.ask(http, case_id, role, question)
        known.answers.append(body["answer"])
        await step()
        return body

    async def whisper(role: str) -> dict[str, Any]:
        m = marker()
        known.whisper_markers[m] = role
        text = WHISPER[language].format(m=m)
        response = await http.post(f"/api/cases/{case_id}/whispers", json={"role": role, "text": text})
        assert response.status_code == 201, response.text
        card = response.json()["card"]
        assert m in card["content"]
        await step()
        return card

    async def publish(role: str, card_id: str, status: int = 201) -> dict[str, Any]:
        response = await helpers.publish(http, case_id, role, card_id)
        assert response.status_code == status, response.text
        await step()
        return response.json()["public_card"]

    await step()
    async with (
        open_sse(http, f"/api/cases/{case_id}/stage/events") as live_stage,
        open_sse(http, f"/api/cases/{case_id}/events") as live_operator,
    ):
        whispered = {role: await whisper(role) for role in ROLES}
        for role in ROLES:
            await ask(role, presets[0])
            question_marker = marker()
            known.question_markers.append(question_marker)
            await ask(role, MARKER_QUESTION[language].format(m=question_marker))
            await ask(
                role,
                WHISPER_QUESTION[language].format(m=next(m for m, r in known.whisper_markers.items() if r == role)),
            )
        # Publish one scenario card and one whispered card; the rest stays private.
        scenario_card = snapshot["spaces"]["informant"][0]
        copy = await publish("informant", scenario_card["id"])
        assert copy["source"]["card_id"] == scenario_card["id"]
        detective_marker = next(m for m, r in known.whisper_markers.items() if r == "detective")
        known.published_markers.add(detective_marker)
        await publish("detective", whispered["detective"]["id"])
        await publish("informant", scenario_card["id"], status=200)  # idempotent repeat
        board_hit = await ask("suspect", WHISPER_QUESTION[language].format(m=detective_marker))
        assert board_hit["certainty"] == "known"  # the suspect now reads the detective's published whisper
        assert (await http.post(f"/api/cases/{case_id}/reset")).status_code == 200
        after_reset = await step()
        assert after_reset["spaces"]["bulletin_board"] == []
        await whisper("suspect")
        await ask("suspect", presets[-1])

        # Everything committed so far, replayed from the start on fresh streams.
        async with open_sse(http, f"/api/cases/{case_id}/stage/events", params={"after": 0}) as replay:
            replayed_stage = await replay.frames_until_idle()
        async with open_sse(http, f"/api/cases/{case_id}/events", params={"after": 0}) as replay:
            replayed_operator = await replay.frames_until_idle()
        last_id = replayed_operator[-1].id
        live_stage_frames = await live_stage.frames_until(lambda f: f.id == replayed_stage[-1].id)
        await live_operator.frames_until(lambda f: f.id == last_id)
        stored = ledger_payloads(live_server, case_id)

        assert (await http.delete(f"/api/cases/{case_id}")).status_code == 204
        await live_stage.wait_closed()
        await live_operator.wait_closed()
        stage_raw, operator_raw = live_stage.text(), live_operator.text()
        live_operator_frames = list(live_operator.frames)

    # The live stage stream and the replay agree, and carry exactly the projected types.
    assert [(f.id, f.data) for f in live_stage_frames] == [(f.id, f.data) for f in replayed_stage]
    assert [f.id for f in replayed_stage] == [f.id for f in replayed_operator if f.event != "answer.completed"]
    assert {f.event for f in replayed_operator} == EVENT_TYPES - {"case.erased"}
    assert live_operator_frames[-1].event == "case.erased"
    assert [(i, t) for i, t, _ in stored] == [(f.id, f.event) for f in replayed_operator]
    assert len(known.private_ids) > 10 and known.board_ids and known.questions and known.answers

    # The scanners are not blind: the operator's own view is full of what the stage must never see.
    operator_view = dump(after_reset) + "".join(known.answers)
    assert known.stage_leaks(operator_view) and known.event_leaks(operator_view)

    # The stage: snapshots after every step, every live and replayed frame, byte for byte.
    stage_texts = [*stage_payloads, stage_raw, *(dump(f.data) for f in replayed_stage)]
    leaks = sorted({leak for text in stage_texts for leak in known.stage_leaks(text)})
    assert leaks == [], leaks
    for frame in replayed_stage:  # a board copy names its source role, never its source card
        card = frame.data.get("card")
        if card is not None:
            assert set(card) == {"id", "topic", "kind", "source_role"}
            assert card["id"] in known.board_ids
    assert steps >= 20

    # The operator stream and the ledger rows: metadata only.
    operator_texts = [operator_raw, *(dump(f.data) for f in replayed_operator), *(p for _, _, p in stored)]
    leaks = sorted({leak for text in operator_texts for leak in known.event_leaks(text)})
    assert leaks == [], leaks
    for frame in replayed_operator:
        assert "content" not in (frame.data.get("card") or {})
        assert "question" not in frame.data and "answer" not in frame.data and "text" not in frame.data

    # The server log: no whisper, question, answer or card text, in any language.
    log_leaks = known.event_leaks(live_server.log_text())
    assert log_leaks == [], log_leaks


# ----- the projection itself ---------------------------------------------------------------------------

PRIVATE_CARD = {
    "id": "700000000000000001",
    "space": "informant",
    "topic": "safe_combination",
    "kind": "secret",
    "visibility": "private",
    "memory_type": "long_term_knowledge",
    "trust": "high",
    "created_by": "scenario",
    "created_at": "2026-01-01T00:00:00+00:00",
    "source": None,
    "content": "The safe combination is 0427.",
}
BOARD_COPY = {
    **PRIVATE_CARD,
    "id": "700000000000000002",
    "space": "bulletin_board",
    "visibility": "public",
    "created_by": "agent",
    "source": {"role": "informant", "card_id": "700000000000000001"},
}


@pytest.mark.parametrize(
    "event_type",
    ["answer.completed", "case.debug", "trace.stored", "memory.deleted", "", "CASE.CREATED", "case.created "],
)
def test_unknown_or_unprojected_event_types_project_to_nothing(event_type: str) -> None:
    payload = {"case_id": "c1", "version": 3, "answer": "The safe combination is 0427.", "card": PRIVATE_CARD}
    assert project_event(Audience.STAGE, event_type, payload) is None
    assert project_event(Audience.OPERATOR, event_type, payload) == payload


def test_each_stage_projection_is_an_allow_list() -> None:
    secret_id, secret = PRIVATE_CARD["id"], PRIVATE_CARD["content"]
    extra = {"question": "What is the code?", "answer": secret, "text": secret, "case_id": "c1", "version": 4}
    trace = {
        "role": "detective",
        "searched_scopes": ["detective", "bulletin_board"],
        "hits": [
            {"card_id": secret_id, "space": "detective", "score": 0.9, "topic": "safe_combination"},
            {"card_id": BOARD_COPY["id"], "space": "bulletin_board", "score": 0.8, "topic": "safe_combination"},
        ],
        "misses": [{"card_id": "700000000000000009", "space": "detective", "score": 0.1, "reason": "x"}],
        "threshold": 0.4,
        "duration_ms": 12.5,
        "responder": "evidence",
    }
    cases: dict[str, dict[str, Any]] = {
        "case.created": {"scenario_id": "mole", "language": "en"},
        "case.reset": {},
        "case.erased": {},
        "memory.written": {"card": PRIVATE_CARD},
        "retrieval.completed": trace,
        "publication.started": {"role": "informant", "source_card_id": secret_id},
        "publication.completed": {"role": "informant", "source_card_id": secret_id, "public_card_id": "7002"},
    }
    for event_type, payload in cases.items():
        projected = project_event(Audience.STAGE, event_type, {**payload, **extra})
        assert projected is not None, event_type
        text = dump(projected)
        assert secret_id not in text and "0427" not in text and "What is the code" not in text, event_type
        assert "700000000000000009" not in text  # misses are not projected either
        assert projected["case_id"] == "c1" and projected["version"] == 4

    board = project_event(Audience.STAGE, "memory.written", {"card": BOARD_COPY, "case_id": "c1", "version": 5})
    assert board == {
        "case_id": "c1",
        "version": 5,
        "space": "bulletin_board",
        "card": {"id": BOARD_COPY["id"], "topic": "safe_combination", "kind": "secret", "source_role": "informant"},
    }
    retrieval = project_event(Audience.STAGE, "retrieval.completed", {**trace, "case_id": "c1", "version": 6})
    assert retrieval is not None
    assert retrieval["public_hits"] == [{"card_id": BOARD_COPY["id"], "score": 0.8}]
    assert retrieval["private_hit_count"] == 1
    assert retrieval["verdict"] == "known"


def test_stage_frames_never_carry_a_private_id_whatever_the_payload_shape() -> None:
    """Hostile shapes (a private card claiming the board, missing fields) still project only named fields."""
    sneaky = {**PRIVATE_CARD, "space": "bulletin_board", "source": {"role": "informant", "card_id": "7111"}}
    projected = project_event(Audience.STAGE, "memory.written", {"card": sneaky, "case_id": "c", "version": 1})
    assert projected is not None
    text = dump(projected)
    assert "0427" not in text and "7111" not in text
    assert project_event(Audience.STAGE, "memory.written", {"case_id": "c", "version": 1}) == {
        "case_id": "c",
        "version": 1,
        "space": None,
    }
    assert project_event(Audience.STAGE, "retrieval.completed", {"case_id": "c", "version": 1})["verdict"] == "unknown"
