"""The who-knows-what matrix, one answer at a time: what an answer shows about each key fact of a scenario.

Kept on the server with the case (ledger `role_answers`), so a reload or a second console sees the same matrix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from bureau.game.scenario_schema import KeyFact
from bureau.memory.types import StoredCard
from bureau.scope.content_policy import normalise_whisper
from bureau.scope.keys import BOARD

FactCell = Literal["own_memory", "board", "conflicting", "unknown"]


def cells_for_answer(
    key_facts: Sequence[KeyFact],
    role: str,
    question: str,
    evidence: Iterable[StoredCard],
    conflicting_topics: Iterable[str],
) -> dict[str, FactCell]:
    """Only the facts this answer speaks to: evidence on the fact's topic says where the role knows it from
    (or that the evidence disagrees); no such evidence shows the role does not know it only when the
    question asked was the fact's own question. Any other answer says nothing about the fact."""
    cards = list(evidence)
    disputed = set(conflicting_topics)
    # The asked question was stored normalised (NFKC turns "？" into "?"): compare like with like.
    asked = normalise_whisper(question)
    cells: dict[str, FactCell] = {}
    for fact in key_facts:
        on_topic = [card for card in cards if card.topic == fact.topic]
        if on_topic and fact.topic in disputed:
            cells[fact.id] = "conflicting"
        elif any(card.space == role for card in on_topic):
            cells[fact.id] = "own_memory"
        elif any(card.space == BOARD for card in on_topic):
            cells[fact.id] = "board"
        elif fact.question is not None and asked == normalise_whisper(fact.question):
            cells[fact.id] = "unknown"
    return cells
