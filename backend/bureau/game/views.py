"""Projections for the operator, as the typed views of `game/contract.py`: the card (DESIGN.md) and its
content-free event form, the snapshot, a policy decision."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from bureau.game.contract import Card, CaseMode, OperatorSnapshot, PolicyDecisionView
from bureau.game.knowledge import answer_view
from bureau.game.scenario_schema import Scenario
from bureau.ledger.policy_audit import PolicyDecisionRecord
from bureau.ledger.record import RecordEntry
from bureau.ledger.repository import CaseRecord, KnowledgeState
from bureau.memory.types import StoredCard
from bureau.scope.keys import SPACES
from bureau.scope.vocabulary import CreatedBy, MemoryType

E = TypeVar("E", bound=StrEnum)


def _card_fields(card: StoredCard) -> dict[str, Any]:
    """The card's fields, once: the operator's `Card` and the event log's content-free form are both made
    from this."""
    return {
        "id": card.id,
        "space": card.space,
        "content": card.content,
        "topic": card.topic,
        "kind": card.kind,
        "visibility": card.visibility,
        "memory_type": card.memory_type,
        "key": card.key,
        "trust": card.trust,
        "created_by": card.created_by,
        "created_at": card.created_at.isoformat(),
        "source": {"role": card.source_role, "card_id": card.source_card_id} if card.source_card_id else None,
        # Who told it (private cards only: a board card never carries one) and a finding's figures.
        **({"told_by": card.told_by} if card.told_by else {}),
        **({"finding": card.finding.as_metadata()} if card.finding else {}),
    }


def card_view(card: StoredCard) -> Card:
    return Card.model_validate(_card_fields(card))


def card_event_view(card: StoredCard) -> dict[str, Any]:
    """Card metadata for the event log (a JSON payload in the ledger): never the content."""
    view = _card_fields(card)
    del view["content"]
    view.pop("told_by", None)  # a name someone typed: as private as the text
    return view


@dataclass(frozen=True, slots=True)
class CaseState:
    """Everything a snapshot is made of, before any audience projection."""

    case: CaseRecord
    scenario: Scenario
    spaces: dict[str, list[StoredCard]]
    last_interrogation: RecordEntry | None
    last_cross_examination: RecordEntry | None = None

    @property
    def last_trace(self) -> dict[str, Any] | None:
        return self.last_interrogation.summary.get("trace") if self.last_interrogation else None


@dataclass(frozen=True, slots=True)
class StageState:
    """What a stage view is made of: each role's card count (never its cards), the board's cards, and the
    content-free last entries of the record."""

    case: CaseRecord
    counts: dict[str, int]
    board: list[StoredCard]
    last_interrogation: RecordEntry | None
    last_cross_examination: RecordEntry | None = None

    @property
    def last_trace(self) -> dict[str, Any] | None:
        return self.last_interrogation.summary.get("trace") if self.last_interrogation else None


def topic_labels(translations: tuple[Scenario, ...]) -> dict[str, dict[str, str]]:
    """Topic -> {language: label}, from every language file of the scenario."""
    labels: dict[str, dict[str, str]] = {}
    for scenario in translations:
        for topic, label in scenario.topics.items():
            labels.setdefault(topic, {})[scenario.language] = label
    return labels


def _key_facts(scenario: Scenario, translations: tuple[Scenario, ...]) -> list[dict[str, Any]]:
    labels: dict[str, dict[str, str]] = {}
    for other in translations:
        for fact in other.key_facts:
            labels.setdefault(fact.id, {})[other.language] = fact.label
    return [{**fact.model_dump(), "labels": labels.get(fact.id, {})} for fact in scenario.key_facts]


def operator_snapshot(
    state: CaseState,
    mode: CaseMode,
    known: KnowledgeState,
    translations: tuple[Scenario, ...] = (),
) -> OperatorSnapshot:
    """`known`: the ledger's maintained matrix and latest answers; `translations`: the scenario in every
    language, for labels in the interface language."""
    scenario = state.scenario
    view = {
        "case": {
            "id": state.case.id,
            "scenario_id": state.case.scenario_id,
            "language": state.case.language,
            "version": state.case.version,
            "status": state.case.status,
            "created_at": state.case.created_at.isoformat(),
        },
        "scenario": {
            "id": scenario.id,
            "title": scenario.title,
            "description": scenario.description,
            "preset_questions": list(scenario.preset_questions),
            "claims": list(scenario.claims),
            "key_facts": _key_facts(scenario, translations or (scenario,)),
            "topic_labels": topic_labels(translations or (scenario,)),
        },
        "mode": mode,
        "spaces": {space: [_card_fields(c) for c in cards] for space, cards in state.spaces.items()},
        "last_trace": state.last_trace,
        # Each role's latest answer with its trace, and the who-knows-what matrix, as the ledger maintains them.
        "answers": {role: answer_view(latest) for role, latest in known.answers.items()},
        "knowledge": known.knowledge,
    }
    return OperatorSnapshot.model_validate(view)


def _known(enum: type[E], value: str) -> E | None:
    """A stored value as the vocabulary's member; None when this server does not know it (a record with no
    type, a foreign record's blanked fields, a value written by another version)."""
    try:
        return enum(value)
    except ValueError:
        return None


def policy_decision_view(record: PolicyDecisionRecord) -> PolicyDecisionView:
    decision = record.decision
    return PolicyDecisionView(
        id=record.id,
        created_at=record.created_at.isoformat(),
        action=decision.action,
        code=decision.code,
        detail=decision.detail,
        memory_type=_known(MemoryType, decision.memory_type),
        creator=_known(CreatedBy, decision.creator),
        space=decision.space if decision.space in SPACES else None,
        count=decision.count,
    )
