"""The subject-access view (operator only): for one case, which spaces hold which cards, every board copy
with its source, and every derived artifact with its ingredients and audience."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from bureau.game.contract import DerivedArtifact, SubjectAccess
from bureau.game.views import CaseState
from bureau.ledger.record import RecordEntry
from bureau.scope.audience import SEALED_LABEL, readers_of_space
from bureau.scope.keys import BOARD


def _record_artifact(entry: RecordEntry, present: dict[str, str]) -> dict[str, Any]:
    """A record entry as a derived artifact: its ingredients, each marked present or gone."""
    return {
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


async def subject_access_json(state: CaseState, pages: AsyncIterator[list[RecordEntry]]) -> AsyncIterator[str]:
    """The same view as JSON (compact, as the API writes a model), streamed: the cards first, then the record's
    artifacts page by page, so a long record never sits whole in memory."""
    present = _present(state)
    head = SubjectAccess.model_validate(_cards_view(state)).model_dump(mode="json", exclude_unset=True)
    derived = head.pop("derived")  # the last field: the record's artifacts follow its own
    yield _compact(head)[:-1] + ',"derived":['
    first = True
    for item in derived:
        yield ("" if first else ",") + _compact(item)
        first = False
    async for page in pages:  # one chunk per page
        artifacts = [DerivedArtifact.model_validate(_record_artifact(entry, present)) for entry in page]
        chunk = ",".join(_compact(a.model_dump(mode="json", exclude_unset=True)) for a in artifacts)
        if chunk:
            yield ("" if first else ",") + chunk
            first = False
    yield "]}"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _present(state: CaseState) -> dict[str, str]:
    return {card.id: card.space for cards in state.spaces.values() for card in cards}


def _cards_view(state: CaseState) -> dict[str, Any]:
    """Everything but the record: the spaces, the board copies, the session records."""
    present = _present(state)
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
    return {"case_id": state.case.id, "spaces": spaces, "board_copies": board_copies, "derived": derived}
