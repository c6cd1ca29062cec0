"""The case record as the operator sees it: one view per entry, a page of them (`CaseRecordPage`), and the
two downloads, streamed page by page: the JSON export (`CaseRecordView`) and a Markdown report."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from bureau.game.contract import CaseRecordPage, CaseRecordView
from bureau.ledger.record import CROSS_EXAMINATION, RecordEntry
from bureau.ledger.repository import CaseRecord
from bureau.scope.audience import SEALED_LABEL


def record_view(case: CaseRecord, entries: list[RecordEntry]) -> CaseRecordView:
    """Entries of a case's record as the JSON download holds them."""
    return CaseRecordView.model_validate({"case_id": case.id, "entries": [record_entry_view(e) for e in entries]})


def record_page_view(
    case: CaseRecord, entries: list[RecordEntry], next_cursor: int | None, total: int
) -> CaseRecordPage:
    """One page of the record, newest first: what `/record` answers."""
    views = [record_entry_view(e) for e in entries]
    return CaseRecordPage.model_validate({"case_id": case.id, "entries": views, "next": next_cursor, "total": total})


def _indented(value: Any, depth: int) -> str:
    """`value` as `json.dumps(..., indent=2)` writes it `depth` levels down (the first line unindented)."""
    return json.dumps(value, ensure_ascii=False, indent=2).replace("\n", "\n" + "  " * depth)


async def json_export(case: CaseRecord, pages: AsyncIterator[list[RecordEntry]]) -> AsyncIterator[str]:
    """The JSON download, page by page: the same document `json.dumps(record_view(...), indent=2)` gives for
    the whole record, without ever holding it."""
    yield '{\n  "case_id": ' + json.dumps(case.id) + ',\n  "entries": ['
    first = True
    async for page in pages:  # one chunk per page: a send per entry would cost more than the entry
        views = record_view(case, page).model_dump(mode="json", exclude_unset=True)["entries"]
        chunk = ",\n    ".join(_indented(view, 2) for view in views)
        if chunk:
            yield ("\n    " if first else ",\n    ") + chunk
            first = False
    yield "]\n}" if first else "\n  ]\n}"


async def markdown_export(case: CaseRecord, count: int, pages: AsyncIterator[list[RecordEntry]]) -> AsyncIterator[str]:
    """The Markdown report, page by page (`count`: how many entries the header announces)."""
    yield "\n".join(_report_header(case, count)).rstrip() + "\n"
    number = 0
    async for page in pages:  # one chunk per page
        parts = []
        for entry in page:
            number += 1
            view = record_entry_view(entry)
            render = _cross_examination_md if entry.kind == CROSS_EXAMINATION else _interrogation_md
            parts.append("\n" + "\n".join(render(number, view)).rstrip() + "\n")
        yield "".join(parts)


def record_entry_view(entry: RecordEntry) -> dict[str, Any]:
    """Everything the record holds about one interrogation or cross-examination (operator only): the fields
    of `InterrogationEntry` / `CrossExaminationEntry`, which the Markdown report reads too."""
    summary, body = entry.summary, entry.body
    view: dict[str, Any] = {
        "id": entry.id,
        "kind": entry.kind,
        "roles": entry.roles,
        "audience": entry.audience,
        "sealed": entry.audience == SEALED_LABEL,
        "question": body.get("question"),
        "provenance": summary.get("provenance", []),
        "erased_ingredients": summary.get("erased_ingredients", []),
        "created_at": entry.created_at.isoformat(),
    }
    if entry.kind == CROSS_EXAMINATION:
        answers = body.get("answers", {})
        view["results"] = [{**result, "answer": answers.get(result["role"])} for result in summary.get("results", [])]
        view["conclusion"] = {**summary.get("conclusion", {}), "text": body.get("conclusion")}
    else:
        trace = summary.get("trace", {})
        view["answer"] = body.get("answer")
        view["certainty"] = trace.get("certainty")
        view["trace"] = trace
    return view


def _hit_rows(trace: dict[str, Any]) -> list[str]:
    hits = trace.get("hits", [])
    rows = [f"| `{h['card_id']}` | {h['space']} | {h['score']:.3f} | {h.get('topic', '')} |" for h in hits]
    if not rows:
        return ["_No hits: nothing in the searched spaces was relevant enough._"]
    return ["| card | space | score | topic |", "|---|---|---|---|", *rows]


def _trace_lines(trace: dict[str, Any]) -> list[str]:
    scopes = " + ".join(trace.get("searched_scopes", []))
    return [
        f"- searched: {scopes}; threshold {trace.get('threshold')}; {len(trace.get('misses', []))} miss(es);"
        f" {trace.get('duration_ms')} ms; responder {trace.get('responder')}",
        "",
        *_hit_rows(trace),
    ]


def _quote(text: str | None) -> str:
    if text is None:
        return "> _(text not available: an ingredient was erased)_"
    return "\n".join("> " + line for line in text.splitlines() or [""])


def _interrogation_md(number: int, view: dict[str, Any]) -> list[str]:
    role = view["roles"][0] if view["roles"] else "?"
    return [
        f"## {number}. Interrogation of the {role}",
        "",
        f"_{view['created_at']} · certainty **{view['certainty']}** · audience {view['audience']}_",
        "",
        "**Question**",
        "",
        _quote(view["question"]),
        "",
        "**Answer**",
        "",
        _quote(view["answer"]),
        "",
        *_trace_lines(view["trace"]),
        "",
    ]


def _cross_examination_md(number: int, view: dict[str, Any]) -> list[str]:
    conclusion = view["conclusion"]
    lines = [
        f"## {number}. Cross-examination of {', '.join(view['roles'])}",
        "",
        f"_{view['created_at']}_",
        "",
        "**Question**",
        "",
        _quote(view["question"]),
        "",
    ]
    for result in view["results"]:
        lines += [f"### The {result['role']} ({result['certainty']}, audience {result['audience']})", ""]
        lines += [_quote(result["answer"]), "", *_trace_lines(result["trace"]), ""]
    sources = ", ".join(f"`{p['card_id']}` ({p['space']})" for p in view["provenance"]) or "none"
    lines += ["### Joint conclusion", ""]
    if view["sealed"]:
        # A handout leaves the operator's hands: a sealed conclusion is named, never quoted.
        lines += ["**Sealed** — it combines more than one role's private memory; its audience is nobody.", ""]
    else:
        lines += [_quote(conclusion.get("text")), "", f"Audience: {view['audience']}.", ""]
    lines += [f"Derived from: {sources}.", ""]
    return lines


def _report_header(case: CaseRecord, count: int) -> list[str]:
    return [
        f"# Case record {case.id}",
        "",
        f"Scenario `{case.scenario_id}` ({case.language}), {count} entr{'y' if count == 1 else 'ies'}.",
        "",
    ]
