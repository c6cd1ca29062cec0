"""Interrogation as a small LangGraph graph of three named steps: load_context → respond → persist.

What a role can know is decided here, by two scoped searches and the relevance policy, before any responder
runs: each candidate is `known` (it answers the question), `uncertain` (close, maybe not an answer; said out
loud, and only a configured model may confirm or reject it) or `unknown` (docs/retrieval.md).
A question cannot widen the scope, whatever it says: scopes come from the role, never from the text.
"""

from __future__ import annotations

import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from bureau.answering.base import Answer, AnswerRequest, Responder
from bureau.answering.conflicts import find_conflicts
from bureau.answering.evidence import evidence_answer
from bureau.config import Settings
from bureau.game import contract
from bureau.game.changes import CaseChange
from bureau.game.traces import AnswerSummary, ConflictView, GrantView, Ingredient, LockedRow, Mark, Reply, Trace
from bureau.game.views import card_event_view
from bureau.ledger.policy_audit import PolicyDecision
from bureau.ledger.record import INTERROGATION, RecordDraft
from bureau.ledger.repository import CaseRecord, PendingEvent
from bureau.memory.gateway import MemoryGateway
from bureau.memory.relevance import question_language
from bureau.memory.types import Candidate, CardDraft, Excluded, Locked, MemoryUnavailableError, StoredCard
from bureau.scope.audience import Readers, narrowest, readers_of_space
from bureau.scope.keys import Role
from bureau.scope.memory_policy import WritePath
from bureau.scope.phrases import phrasebook
from bureau.scope.relevance import Cuts, Judgement, RelevancePolicy
from bureau.scope.vocabulary import (
    Certainty,
    CreatedBy,
    EventType,
    FallbackReason,
    HitStatus,
    Kind,
    MemoryType,
    MissReason,
    PolicyAction,
    PolicyCode,
    RelevancePolicyName,
    Trust,
)
from bureau.vault import Grant, VaultUnavailableError

log = logging.getLogger("bureau.game")
security_log = logging.getLogger("bureau.security")
SESSION_MEMORY_KEEP = 5


@dataclass(slots=True)
class Classified:
    """Candidates sorted into what may be evidence (`hits`), what is close but uncertain (`borderline`) and
    what may not, each miss with its reason; every candidate's judgement, and the cut points used."""

    cuts: Cuts
    policy: RelevancePolicyName
    language: str
    hits: list[Candidate] = field(default_factory=list)
    borderline: list[Candidate] = field(default_factory=list)
    misses: list[tuple[Candidate, MissReason]] = field(default_factory=list)
    judgements: dict[str, Judgement] = field(default_factory=dict)


def _content_key(text: str) -> str:
    return re.sub(r"\W+", " ", text.casefold()).strip()


def _signals(candidate: Candidate) -> dict[str, float]:
    return {"cosine": candidate.score, **candidate.signals}


def classify(candidates: list[Candidate], role: str, policy: RelevancePolicy, language: str) -> Classified:
    """Pure: judge every candidate, de-duplicate (own space wins a tie with its board copy); derived context
    is never evidence. The order is total (score, cosine, own space first, id), so the same candidates give
    the same outcome every time."""
    result = Classified(cuts=policy.cuts(language), policy=policy.name, language=language)
    result.judgements = {c.card.id: policy.judge(_signals(c), language) for c in candidates}
    seen_ids: set[str] = set()
    seen_content: set[str] = set()
    # Scores compared as the trace shows them (4 decimals): a board copy is embedded separately from its
    # source, and float noise in the last digits must not let the copy win the tie its own card should.
    ordered = sorted(
        candidates,
        key=lambda c: (
            -round(result.judgements[c.card.id].score, 4),
            -round(c.score, 4),
            c.card.space != role,
            c.card.id,
        ),
    )
    for candidate in ordered:
        if candidate.card.id in seen_ids:
            continue
        seen_ids.add(candidate.card.id)
        if not candidate.card.may_be_evidence:
            result.misses.append((candidate, MissReason.DERIVED_CONTEXT))
            continue
        key = _content_key(candidate.card.content)
        if key in seen_content:
            result.misses.append((candidate, MissReason.DUPLICATE))
            continue
        seen_content.add(key)
        verdict = result.judgements[candidate.card.id].verdict
        if verdict == Certainty.KNOWN:
            result.hits.append(candidate)
        elif verdict == Certainty.UNCERTAIN:
            result.borderline.append(candidate)
        else:
            result.misses.append((candidate, MissReason.BELOW_THRESHOLD))
    return result


def admitted_for(role: str, candidates: list[Candidate]) -> list[Candidate]:
    """The delivery rule on a role's search: an item reaches the role only if its readership admits the
    role (its own space, the board). The gateway already re-checks scopes; this is the audience check."""
    kept = [c for c in candidates if readers_of_space(c.card.space).admits(role)]
    if len(kept) != len(candidates):
        security_log.warning("security: %d search result(s) withheld from %s", len(candidates) - len(kept), role)
    return kept


@dataclass(frozen=True, slots=True)
class Searched:
    """One role's search under its grant: the candidates judged, what the read policy excluded, and the rows of
    other compartments that came back locked (the presenter act only)."""

    classified: Classified
    excluded: list[Excluded]
    locked: list[Locked]


async def search_and_classify(
    gateway: MemoryGateway,
    settings: Settings,
    grant: Grant,
    role: Role,
    question: str,
    *,
    claim: bool = False,
    unfiltered: bool = False,
) -> Searched:
    """The role's search in the spaces its grant reads (the read policy runs in the gateway first: only what
    passes can be a hit, an uncertain candidate or reach a model), the audience check, then the relevance
    policy on every candidate. Returns what the read policy excluded too, for the X-ray."""
    # Session records take search slots too: fetch enough that they can never crowd out a real card.
    limit = settings.search_limit + SESSION_MEMORY_KEEP + 1
    retrieval = await gateway.retrieve(grant, question, limit, claim=claim, unfiltered=unfiltered)
    candidates = admitted_for(role, retrieval.candidates)
    excluded = [e for e in retrieval.excluded if e.card is None or readers_of_space(e.card.space).admits(role)]
    classified = classify(candidates, role, gateway.relevance_policy, question_language(question))
    return Searched(classified, excluded, retrieval.locked)


def _mark(
    candidate: Candidate,
    judgement: Judgement | None = None,
    *,
    status: str | None = None,
    reason: str | None = None,
    judged_by: str | None = None,
    borderline: bool = False,
) -> Mark:
    """One candidate in the X-ray: `score` is the judged relevance (the axis the cut points are drawn on),
    `signals` every measured signal (`cosine` among them). A candidate the read policy excluded before any
    judgement is drawn at its cosine. A hit has a `status`, a miss a `reason`."""
    card = candidate.card
    mark: Mark = {
        "card_id": card.id,
        "space": card.space,
        "score": round(judgement.score if judgement is not None else candidate.score, 4),
        "cosine": round(candidate.score, 4),
        "signals": {name: round(float(value), 3) for name, value in _signals(candidate).items()},
        "topic": card.topic,
        "memory_type": card.memory_type,
    }
    if judgement is not None and judgement.rule is not None:
        mark["rule"] = judgement.rule
    if status is not None:
        mark["status"] = status
    if reason is not None:
        mark["reason"] = reason
    if judged_by is not None:
        mark["judged_by"] = judged_by
    if borderline:
        mark["borderline"] = True
    return mark


def _by_score(mark: Mark) -> tuple[float, str]:
    return -mark["score"], mark["card_id"]


def validate_answer(answer: Answer, request: AnswerRequest) -> Answer:
    """Defence in depth over any responder. Certainty is a retrieval fact: known exactly when usable
    evidence exists, so the same question gives the same certainty however a model phrases it."""
    confirmed = {cid for cid, ok in answer.borderline_verdicts.items() if ok}
    allowed = ({c.card.id for c in request.hits} | confirmed) - set(answer.filtered)
    usable = replace(
        request,
        hits=tuple(c for c in request.hits if c.card.id not in answer.filtered),
        borderline=tuple(c for c in request.borderline if c.card.id not in answer.filtered),
    )
    if answer.certainty == Certainty.UNCERTAIN:
        # Uncertain only without usable evidence, citing only the close candidates it names.
        closest = {c.card.id for c in usable.borderline}
        if usable.hits or confirmed:
            return evidence_answer(usable, FallbackReason.DECLINED_AVAILABLE_EVIDENCE)
        if not answer.evidence or not set(answer.evidence) <= closest:
            return evidence_answer(usable, FallbackReason.CITATION_OUTSIDE_EVIDENCE)
        return answer
    if not allowed and answer.certainty == Certainty.KNOWN:
        return evidence_answer(usable, FallbackReason.CLAIMED_KNOWN_WITHOUT_EVIDENCE)
    if not set(answer.evidence) <= allowed:
        return evidence_answer(usable, FallbackReason.CITATION_OUTSIDE_EVIDENCE)
    if answer.certainty == Certainty.KNOWN and not answer.evidence:
        return evidence_answer(usable, FallbackReason.KNOWN_WITHOUT_CITATION)
    if answer.certainty == Certainty.UNKNOWN and usable.hits:
        return evidence_answer(usable, FallbackReason.DECLINED_AVAILABLE_EVIDENCE)
    return answer


def answer_summary(answer: Answer) -> AnswerSummary:
    """What every record of an answer carries: the trace, the `answer.completed` event, the response."""
    conflicts: list[ConflictView] = [{"topic": c.topic, "card_ids": list(c.card_ids)} for c in answer.conflicts]
    return {
        "certainty": answer.certainty,
        "evidence": list(answer.evidence),
        "responder": answer.responder,
        "fallback_reason": answer.fallback_reason,
        "conflicts": conflicts,
    }


def build_trace(searched: list[str], classified: Classified, answer: Answer, duration_ms: float) -> Trace:
    """The X-ray. Uncertain candidates the model judged are `borderline_confirmed` hits or
    `borderline_rejected` misses (`judged_by: "model"`); unjudged ones are `uncertain` misses."""
    hits: list[Mark] = []
    misses: list[Mark] = []

    def mark(
        candidate: Candidate,
        *,
        status: str | None = None,
        reason: str | None = None,
        judged_by: str | None = None,
        borderline: bool = False,
    ) -> Mark:
        judgement = classified.judgements[candidate.card.id]
        return _mark(candidate, judgement, status=status, reason=reason, judged_by=judged_by, borderline=borderline)

    for candidate in classified.hits:
        if candidate.card.id in answer.filtered:
            misses.append(mark(candidate, reason=MissReason.FILTERED_UNSAFE))
        else:
            hits.append(mark(candidate, status=HitStatus.HIT))
    for candidate in classified.borderline:
        verdict = answer.borderline_verdicts.get(candidate.card.id)
        if candidate.card.id in answer.filtered:
            misses.append(mark(candidate, reason=MissReason.FILTERED_UNSAFE))
        elif verdict is True:
            hits.append(mark(candidate, status=HitStatus.BORDERLINE_CONFIRMED, judged_by="model"))
        elif verdict is False:
            misses.append(mark(candidate, reason=MissReason.BORDERLINE_REJECTED, judged_by="model"))
        else:
            misses.append(mark(candidate, reason=MissReason.UNCERTAIN, borderline=True))
    misses += [mark(candidate, reason=reason) for candidate, reason in classified.misses]
    summary = answer_summary(answer)
    return {
        "role": searched[0],
        "searched_scopes": searched,
        "hits": sorted(hits, key=_by_score),
        "misses": sorted(misses, key=_by_score),
        "threshold": classified.cuts.known,
        "borderline_floor": classified.cuts.uncertain,
        "relevance_policy": classified.policy,
        "question_language": classified.language,
        "duration_ms": round(duration_ms, 1),
        "certainty": summary["certainty"],
        "evidence": summary["evidence"],
        "responder": summary["responder"],
        "fallback_reason": summary["fallback_reason"],
        "conflicts": summary["conflicts"],
    }


def with_read_policy(trace: Trace, excluded: list[Excluded]) -> None:
    """Each candidate the read policy excluded joins the misses with its reason (`expired`,
    `failed_validation`, `type_not_evidence`); records outside the scope are only counted (nothing of them,
    not even an id, is shown)."""
    shown = [_mark(Candidate(e.card, e.score), reason=e.reason) for e in excluded if e.card is not None]
    trace["misses"] = sorted(trace["misses"] + shown, key=_by_score)
    trace["owner_mismatch_dropped"] = sum(1 for e in excluded if e.card is None)


def answer_readers(role: str, trace: Trace) -> Readers:
    """An answer is derived from the question put to `role` and from every card it used (hits, and the card an
    uncertain answer quotes): the narrowest readership of them all (a role's own answer is that role's, even
    when every hit is on the board)."""
    return narrowest(Readers.of(role), *(readers_of_space(item["space"]) for item in provenance(trace)))


def provenance(trace: Trace) -> list[Ingredient]:
    """Which card in which space each hit was: the ingredients of whatever was derived from the trace
    (an uncertain answer's quoted card too, though it is no hit)."""
    quoted = [m for m in trace["misses"] if m["card_id"] in trace.get("evidence", ())]
    return [{"card_id": mark["card_id"], "space": mark["space"]} for mark in [*trace["hits"], *quoted]]


def held_back_gaps(classified: Classified) -> dict[str, list[str]]:
    """Per candidate the coverage rule held back, the question's words it does not cover (memory/relevance/coverage.py).
    Question text: it goes where the record keeps the question (the sealed body), never into the trace."""
    candidates = [*classified.hits, *classified.borderline, *(c for c, _ in classified.misses)]
    return {
        c.card.id: list(c.gaps)
        for c in candidates
        if c.gaps and classified.judgements.get(c.card.id) is not None and classified.judgements[c.card.id].rule
    }


def interrogation_entry(
    role: str, question: str, answer: str, trace: Trace, gaps: dict[str, list[str]] | None = None
) -> RecordDraft:
    """The case-record entry of one interrogation: content-free summary, sealed text (the question, the answer,
    and the question's words a held-back candidate does not cover)."""
    return RecordDraft(
        kind=INTERROGATION,
        roles=[role],
        audience=answer_readers(role, trace).label,
        summary={
            "trace": trace,
            "provenance": provenance(trace),
            "ingredients": [hit["card_id"] for hit in trace["hits"]],
        },
        body={"question": question, "answer": answer, **({"uncovered": gaps} if gaps else {})},
    )


def read_decisions(role: str, session_card: StoredCard, excluded: list[Excluded]) -> list[PolicyDecision]:
    """The audit rows of one interrogation: the session record written, each read exclusion counted by
    (reason, space, type, creator). Codes and counts only."""
    written = PolicyDecision(
        PolicyAction.WRITE_ACCEPTED, PolicyCode.OK, session_card.memory_type, session_card.created_by, role
    )
    counts = Counter(
        (e.reason, e.space, e.card.memory_type if e.card else "", e.card.created_by if e.card else "") for e in excluded
    )
    filtered = [
        PolicyDecision(PolicyAction.READ_FILTERED, reason, memory_type, creator, space, count)
        for (reason, space, memory_type, creator), count in sorted(counts.items())
    ]
    return [written, *filtered]


def _evidence_cards(classified: Classified, answer: Answer) -> list[StoredCard]:
    """The cards an answer cites, in citation order."""
    by_id = {c.card.id: c.card for c in [*classified.hits, *classified.borderline]}
    return [by_id[card_id] for card_id in answer.evidence if card_id in by_id]


def _events(role: str, trace: Trace, answer: Answer, session_card: StoredCard) -> list[PendingEvent]:
    """Card metadata, the trace without the answer's evidence list, the answer's certainty: never text."""
    return [
        PendingEvent(EventType.MEMORY_WRITTEN, {"card": card_event_view(session_card)}),
        PendingEvent(EventType.RETRIEVAL_COMPLETED, {k: v for k, v in trace.items() if k != "evidence"}),
        PendingEvent(EventType.ANSWER_COMPLETED, {"role": role, **answer_summary(answer)}),
    ]


# -- The graph: load_context → respond → persist ------------------------------------------------------------
# Route `POST /api/cases/{id}/interrogations` → `QuestionService.interrogate` (checks the question and the version) →
# `Interrogation.run` → the three steps below, each a function of its dependencies and the state so far; the
# service commits what `persist` returns.


class InterrogationState(TypedDict, total=False):
    """What flows through the graph. The caller supplies the first nine; each step adds its own."""

    case_id: str
    role: Role
    question: str
    language: str
    expected_version: int | None
    generation: str  # the case's generation the question is asked in (scope/keys.py: MemoryScope)
    grant: Grant  # the request's keys: own space and board to read, own space and the record to write
    unfiltered: bool  # the presenter act: no space filter, no re-check (game/services/questions.py: interrogate)
    started: float  # perf_counter() when the question arrived: the trace's latency is measured from here
    # load_context:
    searched: list[str]
    classified: Classified
    excluded: list[Excluded]
    locked: list[Locked]
    # respond:
    answer: Answer
    # persist:
    change: CaseChange
    result: Reply


@dataclass(frozen=True, slots=True)
class InterrogationDeps:
    """What the steps use besides the state: the store and the responder."""

    settings: Settings
    gateway: MemoryGateway
    responder: Responder


async def load_context(deps: InterrogationDeps, state: InterrogationState) -> InterrogationState:
    """Step 1, before any responder runs: what the role can know. Its own space and the board (the scopes
    come from the role, never from the question), searched under the read policy and the audience check,
    every candidate judged known / uncertain / unknown."""
    grant = state["grant"]
    searched = await search_and_classify(
        deps.gateway, deps.settings, grant, state["role"], state["question"], unfiltered=state.get("unfiltered", False)
    )
    return {
        "searched": [scope.space for scope in grant.read_scopes],
        "classified": searched.classified,
        "excluded": searched.excluded,
        "locked": searched.locked,
    }


async def respond(deps: InterrogationDeps, state: InterrogationState) -> InterrogationState:
    """Step 2: put the evidence into words. A responder (evidence mode or a model) sees only the hits and the
    uncertain candidates; `validate_answer` then holds any answer to retrieval's certainty, and the cards it
    cites are checked for conflicting intel."""
    classified = state["classified"]
    request = AnswerRequest(
        case_id=state["case_id"],
        role=state["role"],
        question=state["question"],
        language=state["language"],
        hits=tuple(classified.hits),
        borderline=tuple(classified.borderline),
        screening=deps.gateway.screening,
    )
    answer = validate_answer(await deps.responder.answer(request), request)
    return {"answer": replace(answer, conflicts=find_conflicts(_evidence_cards(classified, answer)))}


async def persist(deps: InterrogationDeps, state: InterrogationState) -> InterrogationState:
    """Step 3: make it part of the case, all or nothing. The role remembers being asked; that card, the events,
    the case-record entry and the policy audit are returned as one change, which the service commits (undoing
    the card if the commit fails) before the session-record retention runs."""
    role, answer, grant = state["role"], state["answer"], state["grant"]
    session_card = await remember_being_asked(deps.gateway, grant, state["question"], state["language"])
    trace = xray(state)
    change = CaseChange(
        _events(role, trace, answer, session_card),
        state["generation"],
        expected_version=state.get("expected_version"),
        written=[session_card],
        record=interrogation_entry(role, state["question"], answer.text, trace, held_back_gaps(state["classified"])),
        decisions=read_decisions(role, session_card, state.get("excluded", [])),
    )
    summary = answer_summary(answer)
    result: Reply = {
        "answer": answer.text,
        "certainty": summary["certainty"],
        "evidence": summary["evidence"],
        "responder": summary["responder"],
        "fallback_reason": summary["fallback_reason"],
        "conflicts": summary["conflicts"],
        "trace": trace,
    }
    return {"change": change, "result": result}


def xray(state: InterrogationState) -> Trace:
    """The trace of this interrogation, as the console draws it: what was searched under which keys, every
    candidate with its outcome, what the read policy excluded, what came back locked (the presenter act), and
    the latency so far."""
    duration_ms = (time.perf_counter() - state["started"]) * 1000
    trace = build_trace(state["searched"], state["classified"], state["answer"], duration_ms)
    with_read_policy(trace, state.get("excluded", []))
    grant = state["grant"]
    shown_grant: GrantView = {"purpose": grant.purpose, "keys": list(grant.shape.reads)}
    trace["grant"] = shown_grant
    if state.get("unfiltered"):
        trace["unfiltered"] = True
        locked: list[LockedRow] = [
            {"space": row.space, "score": round(row.score, 4)}
            for row in sorted(state.get("locked", []), key=lambda r: (-r.score, r.space))
        ]
        trace["locked"] = locked
    return trace


async def remember_being_asked(gateway: MemoryGateway, grant: Grant, question: str, language: str) -> StoredCard:
    """Session memory in the role's own space (its narrowest audience): context for later, never evidence.
    Indexed by the question itself, whose vector the search has just computed: no second encoder call."""
    draft = CardDraft(
        content=phrasebook(language).session_record.format(question=question),
        index_text=question,
        topic="session",
        kind=Kind.NOTE,
        memory_type=MemoryType.SESSION,
        trust=Trust.LOW,
        created_by=CreatedBy.SYSTEM,
        path=WritePath.SYSTEM,  # expiry: the configured session retention (BUREAU_SESSION_RETENTION_S)
    )
    return await gateway.write(grant, draft)


async def keep_recent_session_records(gateway: MemoryGateway, grant: Grant) -> None:
    """Keep the last few session records. Best effort, after the commit: a store fault here must not turn a
    committed answer into a 503; the next interrogation trims again. Deletes by the ids the gateway knows
    (memory/known_cards.py), their keys first."""
    try:
        await gateway.trim(grant, MemoryType.SESSION, SESSION_MEMORY_KEEP)
    except (MemoryUnavailableError, VaultUnavailableError):
        log.warning("session memory retention skipped; retried on the next question")


@dataclass(frozen=True, slots=True)
class Asked:
    """One question run through the graph: the change to commit, and the answer once it is committed."""

    change: CaseChange
    result: contract.Interrogation


class Interrogation:
    """The compiled graph with its dependencies; `QuestionService.interrogate` calls `run` and commits its change."""

    def __init__(self, settings: Settings, gateway: MemoryGateway, responder: Responder) -> None:
        self.deps = InterrogationDeps(settings, gateway, responder)
        graph = StateGraph(InterrogationState)
        graph.add_node("load_context", partial(load_context, self.deps))
        graph.add_node("respond", partial(respond, self.deps))
        graph.add_node("persist", partial(persist, self.deps))
        graph.add_edge(START, "load_context")
        graph.add_edge("load_context", "respond")
        graph.add_edge("respond", "persist")
        graph.add_edge("persist", END)
        self.graph = graph.compile()

    async def run(
        self,
        case: CaseRecord,
        role: Role,
        question: str,
        expected_version: int | None,
        grant: Grant,
        *,
        unfiltered: bool = False,
        started: float | None = None,
    ) -> Asked:
        state = await self.graph.ainvoke(
            {
                "case_id": case.id,
                "role": role,
                "question": question,
                "language": case.language,
                "expected_version": expected_version,
                "generation": case.generation,
                "grant": grant,
                "unfiltered": unfiltered,
                "started": time.perf_counter() if started is None else started,
            }
        )
        return Asked(state["change"], contract.Interrogation.model_validate(state["result"]))
