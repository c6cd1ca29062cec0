"""The delivery gate: the one place that decides what the public (stage) audience may receive.

Allow-list only. Every stage-bound payload, snapshot or SSE frame (live or replayed), is built here from
named public fields; the snapshot and the record come out as their response models (`StageSnapshot`,
`StageRecord`), the frames' payloads as the dicts the stream writes. Every `EventType` is named in
`STAGE_PROJECTIONS`: either a projection or `None` (private: never sent to the stage). A type the table does
not know projects to nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bureau.api.responses import StageRecord, StageSnapshot
from bureau.game.views import StageState
from bureau.ledger.record import CROSS_EXAMINATION, RecordEntry
from bureau.memory.types import StoredCard
from bureau.scope.audience import SEALED_LABEL, STAGE, Audience, readers_of_space
from bureau.scope.keys import BOARD, ROLES, SPACES
from bureau.scope.vocabulary import Certainty, EventType

Payload = dict[str, Any]


def _public_card(card: StoredCard) -> Payload:
    # A board copy is public; the id of its private source is not.
    return {
        "id": card.id,
        "content": card.content,
        "topic": card.topic,
        "kind": card.kind,
        "source_role": card.source_role,
        "created_at": card.created_at.isoformat(),
    }


def stage_retrieval(trace: Payload | None) -> Payload | None:
    """Scopes searched, public hits, a count of private hits, the verdict and the latency. No question,
    no answer, no private card id."""
    if not trace:
        return None
    hits = trace.get("hits", [])
    public_hits = [{"card_id": h["card_id"], "score": h["score"]} for h in hits if _public(h.get("space"))]
    public_ids = {h["card_id"] for h in public_hits}
    return {
        "role": trace.get("role"),
        "searched_scopes": list(trace.get("searched_scopes", [])),
        "public_hits": public_hits,
        "private_hit_count": sum(1 for h in hits if not _public(h.get("space"))),
        # The answer's certainty when recorded (a confirmed borderline hit can still end as "unknown").
        "verdict": trace.get("certainty") or (Certainty.KNOWN if hits else Certainty.UNKNOWN),
        # Only a disagreement between board cards: one involving a private card is the operator's to see.
        "conflicting": any(
            set(conflict.get("card_ids", [])) <= public_ids for conflict in trace.get("conflicts", []) or []
        ),
        "duration_ms": trace.get("duration_ms"),
        # The presenter act: what came back from other compartments, locked (a space and a score, nothing else).
        **(
            {
                "unfiltered": True,
                "locked": [
                    {"space": row["space"], "score": row["score"]}
                    for row in trace.get("locked", [])
                    if row.get("space") in SPACES
                ],
            }
            if trace.get("unfiltered")
            else {}
        ),
    }


def stage_snapshot(state: StageState) -> StageSnapshot:
    """The stage's view of a case, built from named public fields only."""
    return StageSnapshot.model_validate(
        {
            "case": {
                "id": state.case.id,
                "version": state.case.version,
                "status": state.case.status,
                "language": state.case.language,
            },
            "counts": {role: state.counts[role] for role in ROLES},
            "bulletin_board": [_public_card(c) for c in state.board if _public(c.space)],
            "last_retrieval": stage_retrieval(state.last_trace),
            "last_conclusion": stage_record_entry(state.last_cross_examination)
            if state.last_cross_examination
            else None,
        }
    )


def _public(space: str | None) -> bool:
    """The audience check every stage-bound item passes: its readership must admit the stage."""
    return space in SPACES and readers_of_space(space).admits(STAGE)


def stage_record_entry(entry: RecordEntry) -> Payload:
    """One record entry as the public sees it. A sealed conclusion is announced, nothing more."""
    base: Payload = {"id": entry.id, "kind": entry.kind, "created_at": entry.created_at.isoformat()}
    if entry.kind != CROSS_EXAMINATION:
        return {**base, **(stage_retrieval(entry.summary.get("trace")) or {})}
    if entry.audience == SEALED_LABEL:
        return {**base, "sealed": True}
    results = entry.summary.get("results", [])
    retrievals = [stage_retrieval(r.get("trace")) for r in results]
    return {**base, "sealed": False, "roles": list(entry.roles), "retrievals": retrievals}


def stage_record(case_id: str, entries: list[RecordEntry], next_cursor: int | None) -> StageRecord:
    """A page of the public projection of the case record: scopes, public hits and counts; a sealed
    conclusion is only announced."""
    views = [stage_record_entry(e) for e in entries]
    return StageRecord.model_validate({"case_id": case_id, "entries": views, "next": next_cursor})


def _case_only(payload: Payload) -> Payload:
    return {"case_id": payload.get("case_id"), "version": payload.get("version")}


def _memory_written(payload: Payload) -> Payload:
    card = payload.get("card") or {}
    projected = {**_case_only(payload), "space": card.get("space")}
    if card.get("space") == BOARD:
        source = card.get("source") or {}
        projected["card"] = {
            "id": card.get("id"),
            "topic": card.get("topic"),
            "kind": card.get("kind"),
            "source_role": source.get("role"),
        }
    return projected


def _retrieval(payload: Payload) -> Payload:
    return {**_case_only(payload), **(stage_retrieval(payload) or {})}


def _publication_started(payload: Payload) -> Payload:
    return {**_case_only(payload), "role": payload.get("role")}


def _publication_completed(payload: Payload) -> Payload:
    return {
        **_case_only(payload),
        "role": payload.get("role"),
        "public_card_id": payload.get("public_card_id"),
    }


def _cross_examination(payload: Payload) -> Payload:
    """A sealed conclusion is announced and nothing else; an open one shows each role's public retrieval."""
    if payload.get("sealed", True):
        return {**_case_only(payload), "sealed": True}
    retrievals = [stage_retrieval(trace) for trace in payload.get("traces", [])]
    return {**_case_only(payload), "sealed": False, "roles": list(payload.get("roles", [])), "retrievals": retrievals}


def _card_erased(payload: Payload) -> Payload:
    """Which board copies disappeared (public ids); the private card's id and space stay private."""
    return {**_case_only(payload), "board_card_ids": list(payload.get("board_card_ids", []))}


def _finding_promoted(payload: Payload) -> Payload:
    """The board card that holds the finding and its figures: never a contributor."""
    return {
        **_case_only(payload),
        "public_card_id": payload.get("public_card_id"),
        "support": payload.get("support"),
    }


def _finding_withdrawn(payload: Payload) -> Payload:
    return {**_case_only(payload), "public_card_id": payload.get("public_card_id")}


STAGE_PROJECTIONS: dict[EventType, Callable[[Payload], Payload] | None] = {
    EventType.CASE_CREATED: _case_only,
    EventType.CASE_RESET: _case_only,
    EventType.CASE_ERASED: _case_only,
    EventType.MEMORY_WRITTEN: _memory_written,
    EventType.RETRIEVAL_COMPLETED: _retrieval,
    EventType.ANSWER_COMPLETED: None,  # the answer's certainty and evidence derive from private cards
    EventType.PUBLICATION_STARTED: _publication_started,
    EventType.PUBLICATION_COMPLETED: _publication_completed,
    EventType.CROSS_EXAMINATION_COMPLETED: _cross_examination,
    EventType.CARD_ERASED: _card_erased,
    EventType.FINDING_PROMOTED: _finding_promoted,
    EventType.FINDING_WITHDRAWN: _finding_withdrawn,
}


def project_event(audience: Audience, event_type: str, payload: Payload) -> Payload | None:
    """What `audience` may receive of one event; None means the frame is not sent at all."""
    if audience is Audience.OPERATOR:
        return payload  # events never carry whisper/question text or card content (see the ledger)
    try:
        projection = STAGE_PROJECTIONS[EventType(event_type)]
    except ValueError:  # not a type this server knows (e.g. written by a newer version): private
        return None
    return projection(payload) if projection else None
