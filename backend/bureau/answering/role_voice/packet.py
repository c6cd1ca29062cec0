"""The evidence packet: the only memory the model sees, with short refs instead of store ids."""

from __future__ import annotations

from dataclasses import dataclass

from bureau.answering.base import AnswerRequest
from bureau.memory.types import Candidate
from bureau.scope import BOARD
from bureau.scope.memory_policy import may_replay

UNSAFE_CONTENT = "unsafe_content"
DERIVED_MEMORY = "derived_memory"


@dataclass(frozen=True, slots=True)
class PacketItem:
    ref: str
    candidate: Candidate

    @property
    def card_id(self) -> str:
        return self.candidate.card.id

    def as_data(self) -> dict[str, str]:
        card = self.candidate.card
        item = {
            "ref": self.ref,
            "source": "bulletin board" if card.space == BOARD else "own memory",
            "trust": card.trust,
            "kind": card.memory_type,
            "text": card.content,
        }
        if card.space == BOARD and card.source_role:
            item["published_by"] = card.source_role
        return item


@dataclass(frozen=True, slots=True)
class EvidencePacket:
    hits: tuple[PacketItem, ...]
    borderline: tuple[PacketItem, ...]
    filtered: dict[str, str]


def build_packet(request: AnswerRequest) -> EvidencePacket:
    """Short refs instead of store ids; unsafe and derived cards withheld and reported in `filtered`."""
    filtered: dict[str, str] = {}
    seen: set[str] = set()

    def admit(candidates: tuple[Candidate, ...], prefix: str) -> tuple[PacketItem, ...]:
        items: list[PacketItem] = []
        for candidate in candidates:
            card = candidate.card
            if card.id in seen:
                continue
            seen.add(card.id)
            if not may_replay(card.facts):  # the policy table: type and creator trust (derived, agent, untrusted)
                filtered[card.id] = DERIVED_MEMORY
            elif request.screening.screen(card.content):
                filtered[card.id] = UNSAFE_CONTENT
            else:
                items.append(PacketItem(ref=f"{prefix}{len(items) + 1}", candidate=candidate))
        return tuple(items)

    hits = admit(tuple(sorted(request.hits, key=lambda c: c.score, reverse=True)), "e")
    borderline = admit(tuple(sorted(request.borderline, key=lambda c: c.score, reverse=True)), "b")
    return EvidencePacket(hits=hits, borderline=borderline, filtered=filtered)
