"""The case record as the operator sees it: one view per entry (`CaseRecordView`), a JSON export and a
Markdown report."""

from __future__ import annotations

from typing import Any

from bureau.game.contract import CaseRecordView
from bureau.ledger.record import CROSS_EXAMINATION, RecordEntry
from bureau.ledger.repository import CaseRecord
from bureau.scope.audience import SEALED_LABEL


def record_view(case: CaseRecord, entries: list[RecordEntry]) -> CaseRecordView:
    """The whole record of a case: what `/record` answers and what its JSON download holds."""
    return CaseRecordView.model_validate({"case_id": case.id, "entries": [record_entry_view(e) for e in entries]})


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


def markdown_report(case: CaseRecord, entries: list[RecordEntry]) -> str:
    """A readable report of the case record, in order, for a presenter to hand out."""
    lines = [
        f"# Case record {case.id}",
        "",
        f"Scenario `{case.scenario_id}` ({case.language}), {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}.",
        "",
    ]
    for number, entry in enumerate(entries, start=1):
        view = record_entry_view(entry)
        render = _cross_examination_md if entry.kind == CROSS_EXAMINATION else _interrogation_md
        lines += render(number, view)
    return "\n".join(lines).rstrip() + "\n"
