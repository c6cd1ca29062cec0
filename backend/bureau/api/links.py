"""OpenAPI links: where the ids an operation creates are used next. A client (or a fuzzer: schemathesis
follows them in its stateful phase, `tests/api/test_fuzz.py`) learns from them that a listed scenario is one a
case can be made of, that the case a `POST /cases` made is the `{case_id}` of every case operation (and its
opening cards can be published or deleted), that a whispered card can be published or deleted, that a
publication's source card can be deleted, and that a claim the server evaluated can be promoted.

Written once here, added to the document by `api/openapi.py`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CASES = "/api/cases"
CASE = CASES + "/{case_id}"
CASE_ID = "case_id"


@dataclass(frozen=True, slots=True)
class Link:
    """One link of `source` (method, path, status) to `target` (method, path)."""

    name: str
    source: tuple[str, str, str]
    target: tuple[str, str]
    description: str
    parameters: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None


_SAME_CASE = {CASE_ID: "$request.path.case_id"}
_NEW_CASE = {CASE_ID: "$response.body#/case/id"}

LINKS: tuple[Link, ...] = (
    Link(
        "AskAPresetQuestion",
        ("post", CASES, "201"),
        ("post", CASE + "/interrogations"),
        "ask the detective the scenario's first preset question",
        _NEW_CASE,
        {"role": "detective", "question": "$response.body#/scenario/preset_questions/0"},
    ),
    Link(
        "EvaluateAScenarioClaim",
        ("post", CASES, "201"),
        ("post", CASE + "/findings/evaluate"),
        "evaluate the first claim the scenario offers",
        _NEW_CASE,
        {"claim": "$response.body#/scenario/claims/0"},
    ),
    Link(
        "PromoteAScenarioClaim",
        ("post", CASES, "201"),
        ("post", CASE + "/findings"),
        "promote the first claim the scenario offers (it qualifies when the scenario's cards support it)",
        _NEW_CASE,
        {"claim": "$response.body#/scenario/claims/0"},
    ),
    Link(
        "DeleteAScenarioCard",
        ("post", CASES, "201"),
        ("delete", CASE + "/cards/{card_id}"),
        "delete the detective's first opening card",
        {**_NEW_CASE, "card_id": "$response.body#/spaces/detective/0/id"},
    ),
    Link(
        "PublishAScenarioCard",
        ("post", CASES, "201"),
        ("post", CASE + "/publications"),
        "publish the informant's first opening card (at whatever version the case is then)",
        _NEW_CASE,
        {"role": "informant", "card_id": "$response.body#/spaces/informant/0/id", "expected_version": None},
    ),
    Link(
        "DeleteTheCard",
        ("post", CASE + "/whispers", "201"),
        ("delete", CASE + "/cards/{card_id}"),
        "delete the whispered card",
        {**_SAME_CASE, "card_id": "$response.body#/card/id"},
    ),
    Link(
        "PublishTheCard",
        ("post", CASE + "/whispers", "201"),
        ("post", CASE + "/publications"),
        "publish the whispered card from the role that holds it (at whatever version the case is then)",
        _SAME_CASE,
        {"role": "$request.body#/role", "card_id": "$response.body#/card/id", "expected_version": None},
    ),
    Link(
        "PublishAgain",
        ("post", CASE + "/publications", "201"),
        ("post", CASE + "/publications"),
        "the same publication again: the same board copy (200, idempotent)",
        _SAME_CASE,
        {"role": "$request.body#/role", "card_id": "$request.body#/card_id", "expected_version": None},
    ),
    Link(
        "DeleteThePublishedCard",
        ("post", CASE + "/publications", "201"),
        ("delete", CASE + "/cards/{card_id}"),
        "delete the published private card: its board copy goes with it",
        {**_SAME_CASE, "card_id": "$request.body#/card_id"},
    ),
    Link(
        "PromoteTheClaim",
        ("post", CASE + "/findings/evaluate", "200"),
        ("post", CASE + "/findings"),
        "promote the first claim evaluated (it qualifies when its decision says so)",
        _SAME_CASE,
        {"claim": "$response.body#/claims/0/claim"},
    ),
    Link(
        "PromoteAgain",
        ("post", CASE + "/findings", "201"),
        ("post", CASE + "/findings"),
        "the same claim again: the same finding (200, idempotent)",
        _SAME_CASE,
        {"claim": "$request.body#/claim"},
    ),
    Link(
        "ListTheFindings",
        ("post", CASE + "/findings", "201"),
        ("get", CASE + "/findings"),
        "the findings, the promoted one among them",
        _SAME_CASE,
    ),
)


def _pointer(path: str) -> str:
    return path.replace("~", "~0").replace("/", "~1")


def _operation_ref(method: str, path: str) -> str:
    return f"#/paths/{_pointer(path)}/{method}"


def _link_name(operation: dict[str, Any], method: str, path: str) -> str:
    summary = str(operation.get("summary") or f"{method} {path}")
    return "".join(word.capitalize() for word in summary.replace("-", " ").split())


def scenario_links(listed: int) -> list[Link]:
    """From the scenario list to a new case of each of its `listed` entries (a link names one position)."""
    return [
        Link(
            f"CaseOfListedScenario{index}",
            ("get", "/api/scenarios", "200"),
            ("post", CASES),
            f"a case of the scenario listed at position {index}, in its language",
            body={"scenario_id": f"$response.body#/{index}/id", "language": f"$response.body#/{index}/language"},
        )
        for index in range(listed)
    ]


def case_links(paths: dict[str, dict[str, Any]]) -> list[Link]:
    """From a new case to every operation of a case that needs no other id: the case id is the new case's."""
    return [
        Link(_link_name(operation, method, path), ("post", CASES, "201"), (method, path), "the new case", _NEW_CASE)
        for path, operations in paths.items()
        if path.startswith(CASE) and path.count("{") == 1
        for method, operation in operations.items()
    ]


def add_links(document: dict[str, Any], listed_scenarios: int) -> None:
    """Every link (`scenario_links`, `case_links`, `LINKS`) into the document's responses (each must exist)."""
    paths = document["paths"]
    for link in (*scenario_links(listed_scenarios), *case_links(paths), *LINKS):
        method, path, status = link.source
        target_method, target_path = link.target
        assert target_method in paths[target_path], link.name  # a link to nothing would mislead every client
        definition: dict[str, Any] = {
            "operationRef": _operation_ref(target_method, target_path),
            "description": link.description,
            "parameters": link.parameters,
        }
        if link.body is not None:
            definition["requestBody"] = link.body
        response = paths[path][method]["responses"][status]
        response.setdefault("links", {})[link.name] = definition
