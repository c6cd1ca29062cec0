"""Pure: how many independent contributors support a claim, and whether it survives leave-one-out.

A contribution is one role's card that matches the claim at known grade, with the source it came from (a
whisper may name who told it; a scenario card declares one). Contributions are independent when no two share a
role or a source, so the support of a claim is the largest set of contributions that are pairwise distinct in
both: a maximum matching between roles and sources. Leave-one-out removes any single contributor (a role, or a
source with every card it told) and asks the support again; a claim qualifies when the smallest of those is
still at least the configured minimum. No I/O here; the game and the ledger both call it (docs/findings.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

CHIEF_SOURCE = "chief"  # an operator whisper that names no source: the chief's own word, one source for all


@dataclass(frozen=True, slots=True)
class Contribution:
    """`card`, `role` and `source` are opaque keys: card ids in the game, keyed pseudonyms in the ledger."""

    card: str
    role: str
    source: str


def source_key(label: str | None, created_by: str, card_id: str) -> str:
    """The identity a source is compared by. A named source is compared by its normalised label, so five
    people who read the same memo are one source. An operator whisper without one is the chief's own word (all
    such whispers share it); a scenario card without one is its own source."""
    if label:
        return "label:" + " ".join(label.casefold().split())
    if created_by == "operator":
        return CHIEF_SOURCE
    return "card:" + card_id


def matching(contributions: Sequence[Contribution]) -> list[Contribution]:
    """A largest set of contributions no two of which share a role or a source (Kuhn's augmenting paths;
    deterministic: contributions are tried in the order given)."""
    by_role: dict[str, list[Contribution]] = {}
    for c in contributions:
        by_role.setdefault(c.role, []).append(c)
    holder: dict[str, Contribution] = {}  # source -> the contribution that uses it

    def augment(role: str, seen: set[str]) -> bool:
        for c in by_role[role]:
            if c.source in seen:
                continue
            seen.add(c.source)
            current = holder.get(c.source)
            if current is None or augment(current.role, seen):
                holder[c.source] = c
                return True
        return False

    for role in sorted(by_role):
        augment(role, set())
    return sorted(holder.values(), key=lambda c: (c.role, c.source, c.card))


def support(contributions: Sequence[Contribution]) -> int:
    return len(matching(contributions))


def leave_one_out(contributions: Sequence[Contribution]) -> int:
    """The smallest support left after removing any single role or any single source (0 with none)."""
    roles = {c.role for c in contributions}
    sources = {c.source for c in contributions}
    if not contributions:
        return 0
    left = [support([c for c in contributions if c.role != r]) for r in sorted(roles)]
    left += [support([c for c in contributions if c.source != s]) for s in sorted(sources)]
    return min(left)


def qualifies(contributions: Sequence[Contribution], min_support: int) -> bool:
    return leave_one_out(contributions) >= min_support


def without_card(contributions: Iterable[Contribution], card: str) -> list[Contribution]:
    return [c for c in contributions if c.card != card]
