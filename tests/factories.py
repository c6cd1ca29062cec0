"""Test-data factories shared by the pure (no store) tests: stored cards and retrieval candidates."""

from __future__ import annotations

from datetime import UTC, datetime

from bureau.memory.types import Candidate, StoredCard

CASE_ID = "case-test-1"


def card(
    card_id: str,
    content: str,
    *,
    space: str = "informant",
    memory_type: str = "long_term_knowledge",
    trust: str = "high",
    source_role: str | None = None,
    case_id: str = CASE_ID,
) -> StoredCard:
    """A stored card as retrieval returns it; a board card with `source_role` is a published copy."""
    return StoredCard(
        id=card_id,
        case_id=case_id,
        space=space,
        content=content,
        topic="vault",
        kind="secret",
        visibility="public" if space == "bulletin_board" else "private",
        memory_type=memory_type,
        trust=trust,
        created_by="scenario",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        source_role=source_role,
        source_card_id="card-src-9" if source_role else None,
    )


def candidate(stored: StoredCard, score: float = 0.62) -> Candidate:
    """A retrieval candidate: `stored` at similarity `score`."""
    return Candidate(card=stored, score=score)
