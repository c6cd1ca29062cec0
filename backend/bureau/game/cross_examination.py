"""Cross-examination: one question to several roles at once, and a joint conclusion with its audience.

Each role is searched in its own scopes (own space + board), exactly as an interrogation would; nothing is
pooled before the answers. The joint conclusion is derived from every role's hits, so its readership is
the narrowest of them all: two roles' private cards together make it sealed (nobody may encounter it). A
conclusion lives only in the case record (sealed text in the ledger), never in the memory store, so no
role's search can ever retrieve it and no publication can ever name it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TypedDict

from bureau.answering.base import Answer, Responder
from bureau.config import Settings
from bureau.game.changes import CaseChange
from bureau.game.contract import CrossExaminationResult
from bureau.game.interrogation import (
    InterrogationDeps,
    InterrogationState,
    load_context,
    provenance,
    respond,
    xray,
)
from bureau.game.keys import Keys
from bureau.game.traces import Ingredient, Trace
from bureau.ledger.event_records import PendingEvent
from bureau.ledger.record import CROSS_EXAMINATION, RecordDraft
from bureau.ledger.repository import CaseRecord
from bureau.memory.gateway import MemoryGateway
from bureau.scope.audience import Readers, narrowest, readers_of_space
from bureau.scope.keys import Role
from bureau.scope.phrases import phrasebook
from bureau.scope.vocabulary import EventType
from bureau.vault import Grant


@dataclass(frozen=True, slots=True)
class RoleResult:
    role: str
    answer: Answer
    trace: Trace


class Conclusion(TypedDict):
    certainty: str
    audience: str
    sealed: bool


class RoleView(TypedDict):
    """One role's part of the record's summary: its certainty and audience, and its X-ray."""

    role: str
    certainty: str
    audience: str
    trace: Trace


def conclusion_readers(roles: list[str], results: list[RoleResult]) -> Readers:
    """The question was put to `roles`; the conclusion is derived from every hit of every role, and from the
    card each uncertain answer quotes (its text is part of the conclusion)."""
    used = [item for result in results for item in provenance(result.trace)]
    return narrowest(Readers.of(*roles), *(readers_of_space(item["space"]) for item in used))


def _conclusion_text(results: list[RoleResult], language: str) -> str:
    words = phrasebook(language)
    known = [r for r in results if r.answer.certainty != "unknown"]
    if not known:
        return words.nobody_knows
    return words.together + " ".join(f"({words.role_name(r.role)}) {r.answer.text}" for r in known)


def _joint_certainty(results: list[RoleResult]) -> str:
    certainties = {r.answer.certainty for r in results}
    return "known" if "known" in certainties else ("uncertain" if "uncertain" in certainties else "unknown")


@dataclass(frozen=True, slots=True)
class Examined:
    """One cross-examination: the change to commit (its record entry and event), and the view once committed."""

    change: CaseChange
    result: CrossExaminationResult


class CrossExamination:
    def __init__(self, settings: Settings, gateway: MemoryGateway, responder: Responder) -> None:
        self.deps = InterrogationDeps(settings, gateway, responder)

    async def _ask_one(self, case: CaseRecord, grant: Grant, role: Role, question: str) -> RoleResult:
        """The role's own interrogation steps up to its X-ray, under its part of the grant (its space and the
        board), without persisting: the role keeps no session record of a cross-examination; the joint entry
        in the case record is what is kept."""
        state: InterrogationState = {
            "case_id": case.id,
            "role": role,
            "question": question,
            "language": case.language,
            "generation": case.generation,
            "grant": Keys.role_part(grant, role),
            "started": time.perf_counter(),
        }
        state.update(await load_context(self.deps, state))
        state.update(await respond(self.deps, state))
        return RoleResult(role, state["answer"], xray(state))

    async def run(
        self, case: CaseRecord, grant: Grant, roles: list[Role], question: str, expected_version: int | None
    ) -> Examined:
        """Every role asked under its part of `grant`; nothing is committed here: the service commits the
        returned change under the same grant."""
        language = case.language
        results = [await self._ask_one(case, grant, role, question) for role in roles]
        readers = conclusion_readers(list(roles), results)
        text = _conclusion_text(results, language)
        sources: list[Ingredient] = [item for r in results for item in provenance(r.trace)]
        conclusion: Conclusion = {
            "certainty": _joint_certainty(results),
            "audience": readers.label,
            "sealed": readers.is_sealed,
        }
        per_role: list[RoleView] = [
            {
                "role": r.role,
                "certainty": r.answer.certainty,
                "audience": Readers.of(r.role).label,
                "trace": r.trace,
            }
            for r in results
        ]
        draft = RecordDraft(
            kind=CROSS_EXAMINATION,
            roles=list(roles),
            audience=readers.label,
            summary={
                "results": per_role,
                "conclusion": conclusion,
                "provenance": sources,
                "ingredients": sorted({item["card_id"] for item in sources}),
            },
            body={"question": question, "answers": {r.role: r.answer.text for r in results}, "conclusion": text},
        )
        event = PendingEvent(
            EventType.CROSS_EXAMINATION_COMPLETED,
            {"roles": list(roles), **conclusion, "traces": [r.trace for r in results]},
        )
        change = CaseChange([event], case.generation, expected_version=expected_version, record=draft)
        view = {
            "roles": list(roles),
            "results": [{**item, "answer": r.answer.text} for item, r in zip(per_role, results, strict=True)],
            "conclusion": {**conclusion, "text": text, "provenance": sources},
        }  # the response, checked by its model
        return Examined(change, CrossExaminationResult.model_validate(view))
