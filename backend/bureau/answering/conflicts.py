"""Conflicting intel: evidence cards on one topic that say different things (the mole's two tips).

Pure and deterministic, so evidence mode and the role voice report the same conflicts for the same hits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bureau.memory.types import StoredCard

# Topics that name where a card came from, not what it is about: two whispers are not one claim each
# about the same question, so they never conflict by topic alone.
UNTOPICAL = frozenset({"whisper", "session"})


@dataclass(frozen=True, slots=True)
class Conflict:
    topic: str
    card_ids: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"topic": self.topic, "card_ids": list(self.card_ids)}


def _claim(card: StoredCard) -> str:
    """What a card asserts, normalised: a board copy and its private original make the same claim."""
    return re.sub(r"\W+", " ", card.content.casefold()).strip()


def find_conflicts(cards: Iterable[StoredCard]) -> tuple[Conflict, ...]:
    """Topics on which the given cards make two or more different claims, in the order first seen."""
    by_topic: dict[str, list[StoredCard]] = {}
    for card in cards:
        if card.topic in UNTOPICAL or not card.may_be_evidence:
            continue
        by_topic.setdefault(card.topic, []).append(card)
    conflicts = []
    for topic, on_topic in by_topic.items():
        if len({_claim(card) for card in on_topic}) > 1:
            conflicts.append(Conflict(topic, tuple(card.id for card in on_topic)))
    return tuple(conflicts)
