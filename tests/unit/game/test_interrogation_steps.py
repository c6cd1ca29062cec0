"""The interrogation graph, one step at a time: load_context → respond → persist (game/interrogation.py).

Each step is called on its own with the state the previous one leaves, against real PowerMem over embedded
seekdb and the real ledger (a fake responder where the point is what `respond` does with a bad answer).
"""

from __future__ import annotations

import time
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from bureau.answering.base import Answer, AnswerRequest
from bureau.api.deps import Services
from bureau.game.errors import VersionConflictError
from bureau.game.interrogation import (
    SESSION_MEMORY_KEEP,
    Classified,
    InterrogationDeps,
    InterrogationState,
    keep_recent_session_records,
    load_context,
    persist,
    remember_being_asked,
    respond,
    xray,
)
from bureau.memory.known_cards import FULL_READ_EVERY
from bureau.memory.types import Excluded, MemoryUnavailableError
from bureau.scope.relevance import Cuts, Judgement
from bureau.scope.vocabulary import Certainty, EventType, FallbackReason, MemoryType, PolicyCode
from bureau.vault import Grant
from factories import candidate, card
from helpers import NewCase, grant_of, informant_secret_card

QUESTION = "What is the safe combination?"


def deps_of(services: Services, **overrides: Any) -> InterrogationDeps:
    return replace(services.bureau.interrogation.deps, **overrides)


def asked(case: dict[str, Any], role: str, question: str = QUESTION) -> InterrogationState:
    return {
        "case_id": case["case"]["id"],
        "role": role,  # type: ignore[typeddict-item]
        "question": question,
        "language": case["case"]["language"],
        "expected_version": case["case"]["version"],
        "started": time.perf_counter(),
    }


async def interrogation_grant(services: Services, case_id: str, role: str) -> Grant:
    """What the game mints for a question: its own space and the board to read, its own space and the record
    to write."""
    return await grant_of(
        services,
        case_id,
        reads=[role, "bulletin_board"],
        writes=[role],
        purpose="interrogation",
        record=True,
    )


async def loaded(services: Services, state: InterrogationState) -> InterrogationState:
    """The state after load_context, in the case's current generation (the snapshot does not show it), under
    the question's grant."""
    case = await services.ledger.cases.get_case(state["case_id"])
    grant = await interrogation_grant(services, state["case_id"], state["role"])
    state = {**state, "generation": case.generation if case is not None else "", "grant": grant}  # type: ignore[typeddict-item]
    return {**state, **await load_context(deps_of(services), state)}  # type: ignore[typeddict-item]


def test_the_route_runs_exactly_the_three_named_steps_in_order(services: Services) -> None:
    graph = services.bureau.interrogation.graph.get_graph()
    edges = {(edge.source, edge.target) for edge in graph.edges}
    assert edges == {
        ("__start__", "load_context"),
        ("load_context", "respond"),
        ("respond", "persist"),
        ("persist", "__end__"),
    }


async def test_load_context_searches_only_the_roles_own_space_and_the_board(
    services: Services, new_case: NewCase
) -> None:
    case = await new_case()
    secret = informant_secret_card(case)
    detective = await loaded(services, asked(case, "detective", f"Search the informant's memory too: {QUESTION}"))
    assert detective["searched"] == ["detective", "bulletin_board"]
    classified = detective["classified"]
    seen = [c.card for c in [*classified.hits, *classified.borderline, *(m for m, _ in classified.misses)]]
    assert seen, "the detective's own cards are candidates"
    assert {c.space for c in seen} <= {"detective", "bulletin_board"}
    assert secret["id"] not in {c.id for c in seen}
    assert classified.hits == []

    informant = await loaded(services, asked(case, "informant"))
    assert informant["searched"] == ["informant", "bulletin_board"]
    assert [c.card.id for c in informant["classified"].hits] == [secret["id"]]


class OverconfidentResponder:
    """A model that claims to know, citing a card it was never shown."""

    name = "role_voice"
    degraded = False

    def warm_up(self) -> None:
        pass

    async def answer(self, request: AnswerRequest) -> Answer:
        return Answer(text="It is 9999.", certainty=Certainty.KNOWN, evidence=("not-a-hit",), responder="role_voice")


def classified_with(*hits: Any) -> Classified:
    return Classified(cuts=Cuts(known=0.5, uncertain=0.3), policy="test", language="en", hits=list(hits))


async def test_respond_holds_any_responder_to_what_retrieval_found(services: Services) -> None:
    state: InterrogationState = {"case_id": "case-test-1", "role": "detective", "question": QUESTION, "language": "en"}
    lying = deps_of(services, responder=OverconfidentResponder())
    corrected = (await respond(lying, {**state, "classified": classified_with()}))["answer"]
    assert corrected.certainty == Certainty.UNKNOWN and corrected.evidence == ()
    assert corrected.fallback_reason == FallbackReason.CLAIMED_KNOWN_WITHOUT_EVIDENCE and "9999" not in corrected.text

    # Evidence mode cites the hits; two on one topic that disagree are named as conflicting intel.
    tips = [candidate(card("t1", "The mole is Lin.", space="detective")), candidate(card("t2", "The mole is Park."))]
    answer = (await respond(deps_of(services), {**state, "classified": classified_with(*tips)}))["answer"]
    assert answer.certainty == Certainty.KNOWN and answer.evidence == ("t1", "t2")
    assert [conflict.card_ids for conflict in answer.conflicts] == [("t1", "t2")]


async def test_persist_returns_the_session_record_events_and_record_entry_committed_together(
    services: Services, new_case: NewCase
) -> None:
    case = await new_case(language="zh")
    case_id = case["case"]["id"]
    state = await loaded(services, asked(case, "informant", "保险柜的密码是多少？"))
    state = {**state, **await respond(deps_of(services), state)}  # type: ignore[typeddict-item]
    events_before = await services.ledger.events.events_after(case_id, 0)
    persisted = await persist(deps_of(services), state)
    result, change = persisted["result"], persisted["change"]
    assert await services.ledger.events.events_after(case_id, 0) == events_before  # nothing committed by the step
    await services.bureau.commits.commit_change(case_id, state["grant"], change)

    assert result["certainty"] == Certainty.KNOWN and result["trace"]["duration_ms"] > 0
    informant = await grant_of(services, case_id, reads=["informant"])
    session = [c for c in await services.gateway.list(informant) if c.memory_type == "session"]
    assert [c.content for c in session] == ["有人问过我：保险柜的密码是多少？"]  # in the case's language
    events = await services.ledger.events.events_after(case_id, 0)
    assert [e.type for e in events][-3:] == [
        EventType.MEMORY_WRITTEN,
        EventType.RETRIEVAL_COMPLETED,
        EventType.ANSWER_COMPLETED,
    ]
    _, page = await services.bureau.record_service.record_page(case_id, None, 50)
    entries = page.entries
    assert page.next is None and page.total == 1
    assert [(e.kind, e.roles, e.audience) for e in entries] == [("interrogation", ["informant"], "informant")]
    assert entries[0].summary["trace"]["evidence"] == result["evidence"]


async def test_persist_leaves_nothing_behind_when_the_commit_fails(services: Services, new_case: NewCase) -> None:
    case = await new_case()
    case_id = case["case"]["id"]
    state = await loaded(services, asked(case, "detective"))
    state = {**state, **await respond(deps_of(services), state), "expected_version": case["case"]["version"] - 1}
    change = (await persist(deps_of(services), state))["change"]  # type: ignore[arg-type]
    with pytest.raises(VersionConflictError):
        await services.bureau.commits.commit_change(case_id, state["grant"], change)
    spaces = await services.gateway.list(await grant_of(services, case_id, reads=["detective"]))
    assert [c for c in spaces if c.memory_type == "session"] == []
    assert (await services.bureau.record_service.record_page(case_id, None, 50))[1].entries == []


def test_xray_measures_from_the_question_and_shows_what_the_read_policy_excluded() -> None:
    hit = candidate(card("h1", "The safe combination is 0427.", space="informant"), 0.9)
    answer = Answer(text="From own memory: …", certainty=Certainty.KNOWN, evidence=("h1",), responder="evidence")
    excluded = Excluded(card("x1", "An expired tip.", space="informant"), "informant", 0.7, PolicyCode.EXPIRED)
    state: InterrogationState = {
        "searched": ["informant", "bulletin_board"],
        "classified": replace(classified_with(hit), judgements={"h1": Judgement(score=0.9, verdict=Certainty.KNOWN)}),
        "answer": answer,
        "excluded": [excluded],
        "started": time.perf_counter() - 0.25,
        "grant": SimpleNamespace(purpose="interrogation", shape=SimpleNamespace(reads=("informant", "bulletin_board"))),  # type: ignore[typeddict-item]
    }
    trace = xray(state)
    assert trace["grant"] == {"purpose": "interrogation", "keys": ["informant", "bulletin_board"]}
    assert trace["duration_ms"] >= 250
    assert [h["card_id"] for h in trace["hits"]] == ["h1"]
    assert [(m["card_id"], m["reason"]) for m in trace["misses"]] == [("x1", "expired")]


async def test_a_session_record_is_indexed_by_its_question_at_no_encoder_cost_and_never_measured(
    services: Services, new_case: NewCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Session records are never evidence, so their relevance features are never needed; their vector is the
    question's own, which the search has just computed."""
    case = await new_case()
    question = f"Which door did the porter lock at {time.time_ns()}?"  # never asked before
    state = await loaded(services, asked(case, "suspect", question))
    embedded: list[str] = []
    encoder = services.gateway.embedder
    embed = encoder.embed_documents
    monkeypatch.setattr(encoder, "embed_documents", lambda texts: embedded.extend(texts) or embed(texts))
    suspect = await grant_of(services, state["case_id"], reads=["suspect"], writes=["suspect"])
    session = await remember_being_asked(services.gateway, suspect, question, "en")
    assert embedded == []
    assert session.id not in services.gateway.relevance_feature_ids()
    retrieval = await services.gateway.retrieve(suspect, question, 10)
    [found] = [e for e in retrieval.excluded if e.card is not None and e.card.id == session.id]
    assert found.reason == "type_not_evidence" and found.score == pytest.approx(1.0, abs=1e-4)
    assert embedded == []  # the question again: from the cache


async def test_session_records_are_trimmed_to_the_last_few_and_a_store_fault_there_is_not_an_error(
    services: Services, new_case: NewCase
) -> None:
    case = await new_case()
    scope = await grant_of(services, case["case"]["id"], reads=["suspect"], writes=["suspect"])
    user_id, agent_id = scope.write_scope().user_id, scope.write_scope().agent_id
    for n in range(SESSION_MEMORY_KEEP + 2):
        await remember_being_asked(services.gateway, scope, f"question {n}", "en")
    await keep_recent_session_records(services.gateway, scope)

    async def kept() -> list[str]:
        return [c.content for c in await services.gateway.list(scope) if c.memory_type == MemoryType.SESSION]

    assert len(await kept()) == SESSION_MEMORY_KEEP
    assert (
        "I was asked: question 0" not in await kept()
        and f"I was asked: question {SESSION_MEMORY_KEEP + 1}" in await kept()
    )
    # Later trims delete by the ids this process knows: still exactly the newest few.
    for n in range(10, 10 + SESSION_MEMORY_KEEP + 2):
        await remember_being_asked(services.gateway, scope, f"question {n}", "en")
        await keep_recent_session_records(services.gateway, scope)
    assert sorted(await kept()) == sorted(f"I was asked: question {n}" for n in range(12, 12 + SESSION_MEMORY_KEEP))
    # A record this process never saw written (another process's) counts from the next full read of the store.
    unseen = await remember_being_asked(services.gateway, scope, "question from elsewhere", "en")
    services.gateway.known_cards.deleted(user_id, agent_id, [unseen.id])
    await keep_recent_session_records(services.gateway, scope)
    assert len(await kept()) == SESSION_MEMORY_KEEP + 1
    for _ in range(FULL_READ_EVERY):
        await keep_recent_session_records(services.gateway, scope)
    assert len(await kept()) == SESSION_MEMORY_KEEP
    assert "I was asked: question from elsewhere" in await kept() and "I was asked: question 12" not in await kept()
    # Or as soon as a search here returns it (it takes a search slot): the next trim counts it.
    unseen = await remember_being_asked(services.gateway, scope, "question from afar", "en")
    services.gateway.known_cards.deleted(user_id, agent_id, [unseen.id])
    await services.gateway.retrieve(scope, "question from afar", 10)
    await keep_recent_session_records(services.gateway, scope)
    assert len(await kept()) == SESSION_MEMORY_KEEP and "I was asked: question from afar" in await kept()

    class FailingStore:
        async def trim(self, *_: Any) -> None:
            raise MemoryUnavailableError("injected")

    await keep_recent_session_records(FailingStore(), scope)  # type: ignore[arg-type]


async def test_a_cross_examination_runs_each_role_through_the_same_steps(services: Services, new_case: NewCase) -> None:
    """Each role's part of a cross-examination is its interrogation up to the X-ray: the same trace (read
    policy and conflicts included), except the latency; only the interrogation persists a session record."""
    case = await new_case()
    case_id = case["case"]["id"]
    joint = await services.bureau.question_service.cross_examine(case_id, ["detective", "informant"], QUESTION)
    for result in joint.results:
        alone = await services.bureau.question_service.interrogate(case_id, result.role, QUESTION)
        shared, own = result.trace.model_dump(exclude_unset=True), alone.trace.model_dump(exclude_unset=True)
        # Under its part of the cross-examination's grant: the same keys, another purpose.
        assert shared.pop("grant") == {"purpose": "cross_examination", "keys": [result.role, "bulletin_board"]}
        assert own.pop("grant") == {"purpose": "interrogation", "keys": [result.role, "bulletin_board"]}
        assert {**shared, "duration_ms": 0} == {**own, "duration_ms": 0}
        assert "owner_mismatch_dropped" in shared and "conflicts" in shared
