"""The request schema is read from the one vocabulary: every memory type is in exactly one whisper body, every
preference key has its own body taking exactly its rule, and the OpenAPI links lead somewhere real."""

from __future__ import annotations

import re
from typing import Any, get_args

import pytest
from pydantic import TypeAdapter, ValidationError

from bureau.api.app import create_app
from bureau.api.links import LINKS
from bureau.api.schemas import CardType, PreferenceWhisper, WhisperBody
from bureau.config import Settings
from bureau.scope.limits import TEXT_PATTERN, words_pattern
from bureau.scope.memory_policy import PREFERENCE_KEYS
from bureau.scope.vocabulary import MemoryType, PreferenceKey

WHISPER = TypeAdapter(WhisperBody)


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The document as the app serves it (building it starts no service)."""
    return create_app(Settings(_env_file=None, data_dir=tmp_path_factory.mktemp("unused"))).openapi()


def test_every_memory_type_is_in_exactly_one_whisper_body() -> None:
    card_types = set(get_args(CardType))
    assert MemoryType.USER_PREFERENCE not in card_types
    assert card_types | {MemoryType.USER_PREFERENCE} == set(MemoryType)


def test_every_preference_key_has_a_body_that_takes_exactly_its_rule() -> None:
    [union, _] = get_args(PreferenceWhisper)
    bodies = {get_args(body.model_fields["key"].annotation)[0]: body for body in get_args(union)}
    assert set(bodies) == set(PreferenceKey) == set(PREFERENCE_KEYS)
    for key, body in bodies.items():
        rule = PREFERENCE_KEYS[key]
        text = body.model_json_schema()["properties"]["text"]
        assert text["maxLength"] == rule.max_chars, key
        assert text["pattern"] == (words_pattern(rule.words) if rule.words else TEXT_PATTERN), key


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ({"role": "detective", "text": "A van."}, "CardWhisper"),
        ({"role": "detective", "text": "A van.", "memory_type": "operational_memory"}, "CardWhisper"),
        ({"role": "detective", "text": "a", "memory_type": "session"}, "CardWhisper"),  # the policy's to refuse
        ({"role": "detective", "text": "ZH", "memory_type": "user_preference", "key": "preferred_language"}, None),
    ],
)
def test_a_whisper_is_read_as_the_body_its_memory_type_makes_it(body: dict[str, Any], kind: str | None) -> None:
    parsed = WHISPER.validate_python(body)
    assert type(parsed).__name__ == (kind or "PreferredLanguageWhisper")


@pytest.mark.parametrize(
    ("body", "path", "error"),
    [
        ({"memory_type": "user_preference"}, ("user_preference",), "union_tag_not_found"),
        ({"memory_type": "user_preference", "key": "shoe_size"}, ("user_preference",), "union_tag_invalid"),
        (
            {"memory_type": "user_preference", "key": "answer_style", "text": "verbose"},
            ("user_preference", "answer_style", "text"),
            "string_pattern_mismatch",
        ),
        ({"key": "answer_style"}, ("other_types", "key"), "none_required"),
    ],
)
def test_a_whisper_the_schema_refuses_names_where(body: dict[str, Any], path: tuple[str, ...], error: str) -> None:
    with pytest.raises(ValidationError) as refused:
        WHISPER.validate_python({"role": "detective", "text": "brief", **body})
    assert [(e["loc"], e["type"]) for e in refused.value.errors()] == [(path, error)]


def _target(document: dict[str, Any], reference: str) -> dict[str, Any]:
    match = re.fullmatch(r"#/paths/(?P<path>[^/]+)/(?P<method>\w+)", reference)
    assert match is not None, reference
    path = match["path"].replace("~1", "/").replace("~0", "~")
    return document["paths"][path][match["method"]]


def test_every_link_leads_to_an_operation_and_names_its_parameters(document: dict[str, Any]) -> None:
    counted = 0
    for operations in document["paths"].values():
        for operation in operations.values():
            for response in operation["responses"].values():
                for name, link in response.get("links", {}).items():
                    target = _target(document, link["operationRef"])
                    declared = {p["name"] for p in target.get("parameters", [])}
                    named = {parameter.rsplit(".", 1)[-1] for parameter in link["parameters"]}
                    assert named <= declared, name
                    if "requestBody" in link:
                        assert "requestBody" in target, name
                    counted += 1
    assert counted >= len(LINKS)


def test_the_operations_that_make_ids_link_to_where_the_ids_are_used(document: dict[str, Any]) -> None:
    paths = document["paths"]
    makers = {
        ("/api/cases", "post", "201"),
        ("/api/cases/{case_id}/whispers", "post", "201"),
        ("/api/cases/{case_id}/publications", "post", "201"),
        ("/api/cases/{case_id}/findings/evaluate", "post", "200"),
        ("/api/cases/{case_id}/findings", "post", "201"),
    }
    for path, method, status in makers:
        assert paths[path][method]["responses"][status].get("links"), (method, path)
    card = "#/paths/~1api~1cases~1{case_id}~1cards~1{card_id}/delete"
    whispered = paths["/api/cases/{case_id}/whispers"]["post"]["responses"]["201"]["links"]
    assert {link["operationRef"] for link in whispered.values()} >= {card}
