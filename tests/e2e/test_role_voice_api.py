"""Role voice end to end: a live `bureau serve` talks to a local OpenAI-compatible stub over HTTP.

The memory layer decides what can be known; these tests prove the model only phrases it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from helpers import informant_secret_card
from live_server import LiveServer
from stub_openai import StubOpenAI, json_reply, status_reply

API_KEY = "sk-bureau-test-never-shown-31337"


@pytest.fixture(scope="module")
def stub() -> Iterator[StubOpenAI]:
    with StubOpenAI() as provider:
        yield provider


@pytest.fixture(scope="module")
def voiced(tmp_path_factory: pytest.TempPathFactory, stub: StubOpenAI) -> Iterator[LiveServer]:
    server = LiveServer(
        tmp_path_factory.mktemp("voice-data"),
        BUREAU_LLM_BASE_URL=stub.base_url,
        BUREAU_LLM_API_KEY=API_KEY,
        BUREAU_LLM_MODEL="stub-model",
        BUREAU_LLM_TIMEOUT_S="3",
    ).start()
    yield server
    server.stop()


@pytest.fixture
def case(voiced: LiveServer, stub: StubOpenAI) -> dict[str, Any]:
    stub.reset()
    response = httpx.post(voiced.url + "/api/cases", json={"scenario_id": "safe-combination"}, timeout=60)
    assert response.status_code == 201
    return response.json()


def ask(server: LiveServer, case: dict[str, Any], role: str, question: str) -> dict[str, Any]:
    response = httpx.post(
        server.url + f"/api/cases/{case['case']['id']}/interrogations",
        json={"role": role, "question": question},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_health_reports_role_voice_without_the_key(voiced: LiveServer) -> None:
    health = httpx.get(voiced.url + "/api/health").json()
    assert health["mode"] == "role_voice"
    assert health["llm"]["status"] in ("configured", "degraded")
    assert health["llm"]["model"] == "stub-model"
    assert API_KEY not in str(health)
    assert API_KEY not in voiced.log_text()


def test_a_grounded_reply_is_used_and_mapped_to_card_ids(
    voiced: LiveServer, stub: StubOpenAI, case: dict[str, Any]
) -> None:
    secret = informant_secret_card(case)
    stub.push(json_reply({"answer": "Between us: it's 0427."}))
    result = ask(voiced, case, "informant", "What is the safe combination?")
    assert result["responder"] == "role_voice" and result["fallback_reason"] is None
    assert result["answer"] == "Between us: it's 0427."
    assert result["evidence"] == [secret["id"]]
    assert result["trace"]["responder"] == "role_voice"
    [request] = stub.requests
    sent = request.text
    assert "0427" in sent
    assert secret["id"] not in sent  # the fact's text, never a store id
    assert request.headers.get("authorization") == f"Bearer {API_KEY}"


def test_an_invented_number_falls_back_to_the_evidence(
    voiced: LiveServer, stub: StubOpenAI, case: dict[str, Any]
) -> None:
    stub.push(json_reply({"answer": "It's 0427, or 1234, trust me."}))
    result = ask(voiced, case, "informant", "What is the safe combination?")
    assert result["responder"] == "evidence"
    assert result["fallback_reason"] == "ungrounded_claim"
    assert result["certainty"] == "known" and "0427" in result["answer"] and "1234" not in result["answer"]
    assert result["trace"]["fallback_reason"] == "ungrounded_claim"


def test_a_model_cannot_know_what_retrieval_did_not_find(
    voiced: LiveServer, stub: StubOpenAI, case: dict[str, Any]
) -> None:
    stub.push(json_reply({"answer": "The combination is 0427."}))
    result = ask(voiced, case, "detective", "What is the safe combination?")
    assert result["certainty"] == "unknown" and result["evidence"] == []
    assert "The combination is 0427." not in str(result)  # the whole sentence: ids can contain "0427"
    assert "0427" not in result["answer"]
    for request in stub.requests:  # the informant's secret never reached the model for the detective
        assert "0427" not in request.text


def test_a_provider_failure_is_never_an_error_for_the_user(
    voiced: LiveServer, stub: StubOpenAI, case: dict[str, Any]
) -> None:
    stub.push(status_reply(500))
    result = ask(voiced, case, "informant", "What is the safe combination?")
    assert result["responder"] == "evidence" and result["fallback_reason"] == "provider_error"
    assert result["certainty"] == "known"


def test_a_close_candidate_stays_uncertain_and_the_role_voice_only_hedges(
    voiced: LiveServer, stub: StubOpenAI, case: dict[str, Any]
) -> None:
    # The relevance model knows "Where did you spend the evening?" outright; this one leaves the alibi uncertain.
    question = "What did you do on Friday evening?"

    def hedge(body: dict[str, Any]) -> Any:
        prompt = str(body)
        assert "birthday dinner" in prompt and "not sure" in prompt  # the lead, and the server's "uncertain"
        return json_reply({"answer": "Not sure, detective. Maybe my sister's birthday dinner?"})

    stub.push(hedge)
    result = ask(voiced, case, "suspect", question)
    assert result["certainty"] == "uncertain" and result["responder"] == "role_voice"
    assert result["fallback_reason"] is None
    # Certainty is decided by retrieval: the model judged nothing, so the X-ray shows no model verdict.
    assert all(h["status"] != "borderline_confirmed" for h in result["trace"]["hits"])
    assert any(m.get("borderline") for m in result["trace"]["misses"])

    # The same question without the model: still uncertain, in evidence mode's words.
    stub.push(status_reply(503))
    fallback = ask(voiced, case, "suspect", question)
    assert fallback["responder"] == "evidence" and fallback["certainty"] == "uncertain"


def test_the_mode_is_per_case_and_a_language_the_model_does_not_speak_stays_evidence(
    tmp_path_factory: pytest.TempPathFactory, stub: StubOpenAI
) -> None:
    stub.reset()
    server = LiveServer(
        tmp_path_factory.mktemp("voice-en-only"),
        BUREAU_LLM_BASE_URL=stub.base_url,
        BUREAU_LLM_MODEL="stub-model",
        BUREAU_LLM_LANGUAGES="en",  # as with the packaged local model
    ).start()
    try:
        cases = {}
        for language in ("en", "zh"):
            created = httpx.post(
                server.url + "/api/cases", json={"scenario_id": "safe-combination", "language": language}, timeout=60
            )
            assert created.status_code == 201
            cases[language] = created.json()
            snapshot = httpx.get(server.url + f"/api/cases/{cases[language]['case']['id']}", timeout=30).json()
            assert snapshot["mode"] == created.json()["mode"]
        assert cases["en"]["mode"] == {"mode": "role_voice", "reason": "model_speaks_language"}
        assert cases["zh"]["mode"] == {"mode": "evidence", "reason": "language_not_spoken"}
        # The Chinese case is answered in evidence mode without asking the model, and that is not a fallback.
        result = ask(server, cases["zh"], "informant", "保险柜的密码是多少？")
        assert (result["responder"], result["fallback_reason"]) == ("evidence", None)
        assert stub.requests == []
    finally:
        server.stop()


def test_without_a_model_every_case_says_why_it_is_in_evidence_mode(tmp_path_factory: pytest.TempPathFactory) -> None:
    server = LiveServer(tmp_path_factory.mktemp("no-model")).start()
    try:
        created = httpx.post(server.url + "/api/cases", json={"scenario_id": "safe-combination"}, timeout=60)
        assert created.json()["mode"] == {"mode": "evidence", "reason": "no_model"}
    finally:
        server.stop()
