"""The subject-access view (operator only): for one case, which spaces hold which cards, every board copy
with its source, and every derived artifact with its ingredients and audience."""

from __future__ import annotations

from typing import Any

from bureau.game.contract import SubjectAccess
from bureau.game.views import CaseState
from bureau.ledger.record import RecordEntry
from bureau.scope.audience import SEALED_LABEL, readers_of_space
from bureau.scope.keys import BOARD


def subject_access_view(state: CaseState, entries: list[RecordEntry]) -> SubjectAccess:
    present = {card.id: card.space for cards in state.spaces.values() for card in cards}
    spaces = {
        space: [
            {
                "card_id": card.id,
                "content": card.content,
                "memory_type": card.memory_type,
                "topic": card.topic,
                "created_by": card.created_by,
                "created_at": card.created_at.isoformat(),
                "audience": readers_of_space(space).label,
            }
            for card in cards
        ]
        for space, cards in state.spaces.items()
    }
    board_copies = [
        {
            "card_id": card.id,
            "source": {"role": card.source_role, "card_id": card.source_card_id},
            "source_present": present.get(card.source_card_id or "") == card.source_role,
        }
        for card in state.spaces.get(BOARD, [])
        if card.source_card_id  # a finding's card has no source: nothing to follow home (docs/findings.md)
    ]
    derived: list[dict[str, Any]] = [
        {
            "kind": "session_record",
            "card_id": card.id,
            "space": space,
            "audience": readers_of_space(space).label,
            "ingredients": [],  # derived from a question put to the role, not from other cards
        }
        for space, cards in state.spaces.items()
        for card in cards
        if card.is_derived
    ]
    derived += [
        {
            "kind": entry.kind,
            "record_id": entry.id,
            "roles": entry.roles,
            "audience": entry.audience,
            "sealed": entry.audience == SEALED_LABEL,
            "ingredients": [
                {**item, "present": present.get(item["card_id"]) == item["space"]}
                for item in entry.summary.get("provenance", [])
            ],
            "erased_ingredients": entry.summary.get("erased_ingredients", []),
        }
        for entry in entries
    ]
    view = {"case_id": state.case.id, "spaces": spaces, "board_copies": board_copies, "derived": derived}
    return SubjectAccess.model_validate(view)
