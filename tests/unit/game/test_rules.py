"""Pure rules, no I/O: settings that must fail fast, and how candidates become evidence."""

from __future__ import annotations

import pytest

from bureau.answering.base import Answer, AnswerRequest
from bureau.answering.evidence import evidence_answer
from bureau.config import DEFAULT_THRESHOLDS, Settings, UnsafeSettingsError
from bureau.game.interrogation import classify, validate_answer
from bureau.memory.types import Candidate
from bureau.scope.keys import SPACES, MemoryScope, ScopeError, composite_key, readable_scopes, space_scope
from bureau.scope.relevance import ThresholdPolicy
from factories import candidate, card

GOOD = {"operator_passcode": "operator-pass-1", "stage_passcode": "stage-pass-22"}


def settings(**values) -> Settings:
    return Settings(_env_file=None, **values)


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"operator_passcode": "operator-pass-1"},
        {"operator_passcode": "short", "stage_passcode": "stage-pass-22"},
        {"operator_passcode": "same-pass-1", "stage_passcode": "same-pass-1"},
        {**GOOD, "embedder": "openai"},
    ],
)
def test_unsafe_production_settings_fail_fast(values: dict) -> None:
    with pytest.raises(UnsafeSettingsError) as error:
        settings(env="production", **values)
    for secret in values.values():
        if "pass" in str(secret):
            assert str(secret) not in str(error.value)  # the message names the problem, not the secret


def test_safe_production_settings_start() -> None:
    production = settings(env="production", **GOOD)
    assert production.is_production and production.passcodes_enabled


def test_empty_env_values_mean_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BUREAU_RELEVANCE_THRESHOLD", "")
    monkeypatch.setenv("BUREAU_SEEKDB_HOST", "")
    loaded = settings()
    assert loaded.effective_threshold == DEFAULT_THRESHOLDS["local"]
    assert loaded.seekdb_host == ""
    monkeypatch.setenv("BUREAU_RELEVANCE_THRESHOLD", "0.5")
    assert settings().effective_threshold == 0.5


def test_scopes_are_built_only_from_valid_parts() -> None:
    own, board = readable_scopes("abcdef123456", "detective")
    assert (own.space, board.space) == ("detective", "bulletin_board")
    assert own.key == composite_key("abcdef123456", "detective") == "case:abcdef123456:chief:main:detective"
    for case_id, space in (("../x", "detective"), ("abcdef123456", "chief"), ("a:b:c:d:e", "informant")):
        with pytest.raises(ScopeError):
            MemoryScope(case_id, space)  # type: ignore[arg-type]
    with pytest.raises(ScopeError):
        readable_scopes("abcdef123456", "bulletin_board")  # type: ignore[arg-type]


def test_a_stored_space_name_becomes_a_scope_only_if_it_is_a_space() -> None:
    assert [space_scope("abcdef123456", space).space for space in SPACES] == list(SPACES)
    for stored in ("chief", "", "bulletin_board:x"):
        with pytest.raises(ScopeError):
            space_scope("abcdef123456", stored)


def test_classify_thresholds_dedupes_and_never_counts_derived_context() -> None:
    own = candidate(card("1", "The safe combination is 0427."), 0.55)
    copy = candidate(card("2", "The safe combination is 0427.", space="bulletin_board"), 0.55)
    session = candidate(card("3", "I was asked: what is the code?", memory_type="session"), 0.95)
    near = candidate(card("4", "The safe is behind the painting."), 0.33)
    far = candidate(card("5", "Lunch is at noon.", space="bulletin_board"), 0.05)
    # The single cosine threshold is now one of two relevance policies (the fallback for uncalibrated embedders).
    result = classify([far, session, copy, near, own], "informant", ThresholdPolicy(0.40, 0.10), "en")
    assert result.hits == [own]  # the own-space original wins the tie with its board copy
    assert result.borderline == [near]
    assert [(c.card.id, reason) for c, reason in result.misses] == [
        ("3", "derived_context"),
        ("2", "duplicate"),
        ("5", "below_threshold"),
    ]


def request(*hits: Candidate) -> AnswerRequest:
    return AnswerRequest("abcdef123456", "informant", "q", "en", hits=hits)


@pytest.mark.parametrize(
    ("answer", "hits", "certainty", "reason"),
    [
        (Answer("I know", "known", ("1",), "role_voice"), (), "unknown", "claimed_known_without_evidence"),
        (Answer("It is 0427", "known", ("9",), "role_voice"), ("1",), "known", "citation_outside_evidence"),
        (Answer("It is 0427", "known", (), "role_voice"), ("1",), "known", "known_without_citation"),
        (Answer("No idea", "unknown", (), "role_voice"), ("1",), "known", "declined_available_evidence"),
        (Answer("It is 0427", "known", ("1",), "role_voice"), ("1",), "known", None),
    ],
)
def test_validate_answer_keeps_certainty_a_retrieval_fact(
    answer: Answer, hits: tuple[str, ...], certainty: str, reason: str | None
) -> None:
    candidates = [candidate(card(i, "The safe combination is 0427."), 0.6) for i in hits]
    checked = validate_answer(answer, request(*candidates))
    assert checked.certainty == certainty
    assert checked.fallback_reason == reason
    assert set(checked.evidence) <= set(hits)


def test_the_web_client_listens_for_exactly_the_event_types_the_server_emits() -> None:
    """EventSource drops a named event nobody listens for: a type missing on either side fails silently."""
    import re

    from bureau.scope.vocabulary import EventType
    from live_server import REPO

    source = (REPO / "web/src/api/schema.ts").read_text()  # LIVE_EVENT_TYPES in types.ts is eventTypeValues
    block = re.search(r"eventTypeValues: [^=]*= \[(.*?)\]", source, re.S)
    assert block is not None
    client_types = set(re.findall(r'"([a-z_.]+)"', block.group(1)))
    server_types = {str(t) for t in EventType}
    assert client_types == server_types


def test_evidence_mode_says_uncertain_out_loud_in_both_languages() -> None:
    close = candidate(card("7", "夜班门房看见一个打着紫色雨伞的快递员。", space="detective"), 0.3)
    for language, opening in (
        ("en", "I might know — the closest memory is in my own memory"),
        ("zh", "我可能知道——最接近的记忆是"),
    ):
        request = AnswerRequest("abcdef123456", "detective", "q", language, hits=(), borderline=(close,))
        answer = evidence_answer(request)
        assert (answer.certainty, answer.evidence) == ("uncertain", ("7",))
        assert answer.text.startswith(opening) and close.card.content in answer.text
        assert validate_answer(answer, request) == answer  # uncertain, citing only the close card it quotes
