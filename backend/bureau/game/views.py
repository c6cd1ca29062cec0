"""The public shape of a card (DESIGN.md "Card JSON") and its content-free event form."""

from __future__ import annotations

from typing import Any

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
        "trust": card.trust,
        "created_by": card.created_by,
        "created_at": card.created_at.isoformat(),
        "source": {"role": card.source_role, "card_id": card.source_card_id} if card.source_card_id else None,
    }


def card_event_view(card: StoredCard) -> dict[str, Any]:
    """Card metadata for the event log: never the content."""
    view = card_view(card)
    del view["content"]
    return view
