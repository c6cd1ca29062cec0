"""The concurrency checker's rules (`tests/chaos.py`) on hand-written histories: a history that keeps every
invariant passes, and each broken invariant is named by its rule. Without these, a checker that finds nothing
could simply be checking nothing."""

from __future__ import annotations

from typing import Any

import pytest

from bureau.game.scenario_schema import load_builtin_scenarios
from chaos import (
    Answer,
    CaseUnderTest,
    Command,
    Contract,
    Event,
    History,
    Supporters,
    check_answers,
    check_history,
    leave_one_out,
    reset,
    whisper,
)

SCENARIOS = load_builtin_scenarios()
SAFE = SCENARIOS[("safe-combination", "en")]
CASE = "c0ffee" * 4


def card(card_id: str, space: str, content: str, created_by: str = "operator", **more: Any) -> dict[str, Any]:
    return {"id": card_id, "space": space, "content": content, "created_by": created_by, "kind": "secret",
            "memory_type": "long_term_knowledge", "source": None, **more}  # fmt: skip


def opening(generation: str, scenario: Any = SAFE) -> dict[str, list[dict[str, Any]]]:
    """The scenario's opening cards, with ids `<generation><n>`."""
    cards = scenario.cards.by_role()
    return {
        role: [card(f"{generation}{role[0]}{n}", role, c.content, "scenario") for n, c in enumerate(cards[role])]
        for role in cards
    }


def snapshot(spaces: dict[str, list[dict[str, Any]]], board: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "spaces": {**{r: [] for r in ("detective", "informant", "suspect")}, **spaces, "bulletin_board": board or []}
    }


def event(event_id: int, kind: str, **data: Any) -> Event:
    return Event(event_id, kind, {"case_id": CASE, "version": event_id, **data})


def written(event_id: int, written_card: dict[str, Any]) -> Event:
    return event(event_id, "memory.written", card={k: v for k, v in written_card.items() if k != "content"})


def answered(command: Command, status: int, body: Any = None, code: str | None = None) -> Answer:
    return Answer(command, status, code, body, 0.0, 0.0)


def whispered(card_id: str, role: str, status: int = 201) -> Answer:
    text = f"note {card_id}"
    body = {"card": card(card_id, role, text)} if status == 201 else {"detail": {"code": "MEMORY_UNAVAILABLE"}}
    return answered(whisper(CASE, role, text), status, body)


# Before the batch: the opening cards "a…" and one whisper (w1, event 2). In the batch: whisper w2 commits (3),
# a reset commits (4), whisper w3 commits (5). After it: the opening cards "b…" and w3.
W1, W2, W3 = (card(f"w{n}", "detective", f"note w{n}") for n in (1, 2, 3))
BEFORE = snapshot({**opening("a"), "detective": [*opening("a")["detective"], W1]})
EVENTS = [event(1, "case.created"), written(2, W1), written(3, W2), event(4, "case.reset"), written(5, W3)]
ANSWERS = [whispered("w2", "detective"), answered(reset(CASE), 200), whispered("w3", "detective")]


def after(**spaces: list[dict[str, Any]]) -> dict[str, Any]:
    fresh = opening("b")
    return snapshot({**fresh, "detective": [*fresh["detective"], W3], **spaces})


def history(after_snapshot: dict[str, Any], events: list[Event] = EVENTS, answers: list[Answer] = ANSWERS) -> History:
    case = CaseUnderTest(CASE, SAFE, BEFORE, last_event=2)
    return History(case, answers, events, after_snapshot, [], None)


def rules(found: list[Any]) -> set[str]:
    return {v.rule for v in found}


def test_a_history_that_keeps_every_invariant_passes() -> None:
    assert check_history(history(after())) == []


def test_a_case_emptied_by_its_resets_breaks_the_opening_cards_and_loses_the_later_whisper() -> None:
    found = check_history(history(snapshot({})))
    assert rules(found) == {"opening cards", "acknowledged write missing"}
    assert sum(v.rule == "opening cards" for v in found) == 3  # every role


def test_a_whisper_committed_before_the_last_reset_must_not_survive_it() -> None:
    fresh = after()
    fresh["spaces"]["detective"].append(W2)
    assert rules(check_history(history(fresh))) == {"survived the reset"}


def test_an_opening_card_of_before_the_reset_must_not_survive_it() -> None:
    stale = after(informant=[*opening("b")["informant"], opening("a")["informant"][0]])
    assert rules(check_history(history(stale))) == {"survived the reset", "opening cards"}


def test_a_whisper_acknowledged_after_the_last_reset_must_be_there() -> None:
    assert rules(check_history(history(after(detective=opening("b")["detective"])))) == {"acknowledged write missing"}


def test_a_refused_command_must_have_committed_nothing() -> None:
    w4 = card("w4", "suspect", "note w4")
    refused = [*ANSWERS, whispered("w4", "suspect", status=503)]
    fresh = after(suspect=[*opening("b")["suspect"], w4])
    found = check_history(history(fresh, [*EVENTS, written(6, w4)], refused))
    assert rules(found) == {"committed but refused"}


def test_a_card_no_command_committed_is_found() -> None:
    orphan = card("x1", "suspect", "never committed")
    assert rules(check_history(history(after(suspect=[*opening("b")["suspect"], orphan])))) == {"uncommitted card"}


def test_acknowledged_resets_need_a_committed_one_and_may_coalesce_into_it() -> None:
    two_resets = [*ANSWERS, answered(reset(CASE), 200)]
    assert check_history(history(after(), answers=two_resets)) == []
    no_reset = [e for e in EVENTS if e.type != "case.reset"]
    fresh_without_reset = snapshot({**BEFORE["spaces"], "detective": [*BEFORE["spaces"]["detective"], W2, W3]})
    assert rules(check_history(history(fresh_without_reset, no_reset))) == {"commits ≠ acknowledgements"}


def test_a_board_copy_whose_source_is_gone_is_found() -> None:
    copy = card("p1", "bulletin_board", "note w3", source={"role": "detective", "card_id": "w9"})
    board = after()
    board["spaces"]["bulletin_board"] = [copy]
    found = check_history(history(board, [*EVENTS, written(6, copy)]))
    assert rules(found) == {"board source"}


def test_a_promoted_finding_whose_support_is_gone_is_found() -> None:
    ferry = SCENARIOS[("night-ferry", "en")]
    claim, cards = ferry.claims[0], opening("b", ferry)
    vans = {(r, c["content"]): f"witness of {r}" for r, cs in cards.items() for c in cs if "grey van" in c["content"]}
    assert len(vans) == 3  # one per role, three sources: leave-one-out 2
    supporters = Supporters(2, {claim: vans})
    finding_card = card("f1", "bulletin_board", claim, "system", kind="finding")
    findings = [{"id": "F1", "state": "ready", "claim": claim, "public_card_id": "f1"}]
    promoted = event(3, "finding.promoted", public_card_id="f1", finding_id="F1")
    events = [event(1, "case.created"), written(2, finding_card), promoted]
    case = CaseUnderTest(CASE, ferry, snapshot(cards), last_event=3)
    assert check_history(History(case, [], events, snapshot(cards, [finding_card]), findings, supporters)) == []
    suspect = [c for c in cards["suspect"] if "grey van" not in c["content"]]
    one_gone = snapshot({**cards, "suspect": suspect}, [finding_card])
    assert "finding not qualified" in rules(check_history(History(case, [], events, one_gone, findings, supporters)))


@pytest.mark.parametrize(
    ("status", "code", "erasing", "rule"),
    [
        (503, "MEMORY_UNAVAILABLE", False, "5xx"),
        (404, "CASE_NOT_FOUND", False, "case lost"),
        (404, "CASE_NOT_FOUND", True, None),
        (404, "CARD_NOT_FOUND", True, "undocumented"),  # not declared for a whisper
        (0, None, False, "no answer"),
    ],
)
def test_answers_are_checked_against_the_operations_declared_errors(
    status: int, code: str | None, erasing: bool, rule: str | None
) -> None:
    document = {
        "paths": {
            "/api/cases/{case_id}/whispers": {
                "post": {"responses": {"201": {}, "404": {"description": "CASE_NOT_FOUND"}, "503": {}}}
            }
        }
    }
    found = check_answers(
        Contract(document), [answered(whisper(CASE, "suspect", "x"), status, code=code)], erasing=erasing
    )
    assert rules(found) == ({rule} if rule else set())


def test_the_leave_one_out_oracle_counts_roles_and_sources_apart() -> None:
    independent = [("detective", "porter"), ("informant", "harbourmaster"), ("suspect", "fisherman")]
    assert leave_one_out(independent) == 2
    one_memo = [("detective", "memo"), ("informant", "memo"), ("suspect", "crane")]
    assert leave_one_out(one_memo) == 1
    assert leave_one_out([]) == 0
