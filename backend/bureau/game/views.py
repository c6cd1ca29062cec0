"""Projections for the operator: the card JSON (DESIGN.md), its content-free event form, the snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bureau.game.knowledge import fold_knowledge, latest_answers
from bureau.game.scenario_schema import Scenario
from bureau.ledger.record import RecordEntry
from bureau.ledger.repository import CaseRecord
from bureau.memory.types import StoredCard


def card_view(card: StoredCard) -> dict[str, Any]:
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


def card_event_view(card: StoredCard) -> dict[str, Any]:
    """Card metadata for the event log: never the content."""
    view = card_view(card)
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
    state: CaseState, interrogations: Sequence[RecordEntry] = (), translations: tuple[Scenario, ...] = ()
) -> dict[str, Any]:
    """`interrogations`: the case record's interrogations, oldest first; `translations`: the scenario in
    every language, for labels in the interface language."""
    scenario = state.scenario
    return {
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
        "spaces": {space: [card_view(c) for c in cards] for space, cards in state.spaces.items()},
        "last_trace": state.last_trace,
        # Each role's latest answer with its trace, and the who-knows-what matrix, from the case record.
        "answers": latest_answers(interrogations),
        "knowledge": fold_knowledge(scenario.key_facts, interrogations),
    }
