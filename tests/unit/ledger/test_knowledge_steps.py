"""The ledger keeps the snapshot's matrix and latest answers with the steps each call hands it, and holds no game
code between calls: a ledger built alone (no game, no bureau) steps and folds a case correctly given the steps,
and without them marks the case to be folded on its next read instead of guessing."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from bureau.game.knowledge import answer_view, fold_knowledge, latest_answers, step_of
from bureau.game.scenario_schema import load_builtin_scenarios
from bureau.ledger.models import CaseRow
from bureau.ledger.record import INTERROGATION, RecordDraft
from bureau.ledger.repository import Ledger, StepOf
from bureau.scope.keys import case_scopes
from bureau.scope.vocabulary import Purpose
from bureau.vault import Grant, Vault

SCENARIO = load_builtin_scenarios()[("safe-combination", "en")]
ALIBI = "suspect_alibi"
ASKED = [  # (role, question, answer, cited hits as (card, space, topic))
    ("informant", "What is the safe combination?", "It is 4-1-7.", [("c1", "informant", "safe_combination")]),
    ("suspect", "Where is the safe hidden?", "I do not know.", []),
    ("detective", "What time was the break-in?", "Near midnight.", [("c2", "bulletin_board", "break_in_timeline")]),
    ("suspect", "What is your alibi for the night of the break-in?", "The opera.", [("c3", "suspect", ALIBI)]),
]


def entry(role: str, question: str, answer: str, cited: list[tuple[str, str, str]]) -> RecordDraft:
    """An interrogation's record entry as the game writes it (its trace: the hits, the cited ones, certainty)."""
    hits = [{"card_id": card, "space": space, "topic": topic, "score": 0.9} for card, space, topic in cited]
    evidence = [card for card, _, _ in cited]
    trace: dict[str, Any] = {"role": role, "hits": hits, "evidence": evidence, "certainty": "known", "conflicts": []}
    return RecordDraft(
        kind=INTERROGATION,
        roles=[role],
        audience=role,
        summary={"trace": trace, "provenance": [], "ingredients": evidence},
        body={"question": question, "answer": answer},
    )


def folded(engine: Engine, case_id: str) -> bool:
    with Session(engine) as session:
        return bool(session.scalar(select(CaseRow.knowledge_folded).where(CaseRow.id == case_id)))


async def active_case(ledger: Ledger, vault: Vault) -> tuple[str, Grant]:
    """A case in play with its keys, and the operator's grant over its generation (reads and writes the record)."""
    case_id = "steps" + os.urandom(6).hex()
    case = await ledger.cases.create_case(case_id, SCENARIO.id, SCENARIO.language)
    await ledger.cases.change_case(case_id, [], status="active")
    await vault.create_case(case_id, case.generation)
    scopes = case_scopes(case_id, case.generation)
    grant = await vault.grant(
        case_id, case.generation, Purpose.OPERATOR, reads=scopes, record_reads=True, record_writes=True
    )
    return case_id, grant


async def assert_maintained_is_the_fold(ledger: Ledger, case_id: str, grant: Grant, steps: StepOf) -> None:
    entries = await ledger.record.interrogations(case_id, grant)
    assert len(entries) == len(ASKED)
    view = await ledger.cases.case_view(case_id, grant=grant, steps=steps)
    assert view.knowledge is not None
    assert view.knowledge.knowledge == fold_knowledge(SCENARIO.key_facts, entries)
    assert view.knowledge.knowledge["suspect"] == {"safe_location": "unknown", "alibi": "own_memory"}
    assert {role: answer_view(a) for role, a in view.knowledge.answers.items()} == latest_answers(entries)
    assert view.knowledge.answers["suspect"].answer == "The opera."


def test_a_ledger_alone_steps_the_maintained_state_with_the_steps_each_commit_hands_it(
    engine: Engine, vault: Vault
) -> None:
    ledger, steps = Ledger(engine), step_of(SCENARIO.key_facts)

    async def play() -> str:
        case_id, grant = await active_case(ledger, vault)
        for asked in ASKED:
            await ledger.cases.change_case(case_id, [], record=entry(*asked), grant=grant, steps=steps)
        assert folded(engine, case_id)  # stepped in each commit: nothing left to fold
        await assert_maintained_is_the_fold(ledger, case_id, grant, steps)
        grant.close()
        return case_id

    assert folded(engine, asyncio.run(play()))


def test_a_commit_without_steps_leaves_the_case_to_be_folded_whole_on_its_next_read(
    engine: Engine, vault: Vault
) -> None:
    ledger, steps = Ledger(engine), step_of(SCENARIO.key_facts)

    async def play() -> None:
        case_id, grant = await active_case(ledger, vault)
        await ledger.cases.change_case(case_id, [], record=entry(*ASKED[0]), grant=grant, steps=steps)
        for asked in ASKED[1:]:
            await ledger.cases.change_case(case_id, [], record=entry(*asked), grant=grant)  # no steps given
        assert not folded(engine, case_id)
        await assert_maintained_is_the_fold(ledger, case_id, grant, steps)  # the read folds it, once
        assert folded(engine, case_id)
        grant.close()

    asyncio.run(play())
