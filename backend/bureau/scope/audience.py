"""Audiences and visibility: who may receive what leaves the server, and who may ever encounter an item.

Two ideas live here. `Audience` is who is *asking* (an operator session covers a stage session).
`Readers` is who may *encounter* an item: a set of principals. Anything derived from several items lands in
the narrowest readership of its ingredients (set intersection), so combining two roles' confidences gives
nobody at all: the empty readership is a real value, "sealed" (stored, shown only to the operator, who is
the data controller and not a principal). Only publishing widens a readership, and only to public.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import reduce
from typing import Literal, get_args

from bureau.scope.keys import BOARD, ROLES, Role


class Visibility(StrEnum):
    PRIVATE = "private"
    PUBLIC = "public"


class Audience(StrEnum):
    """Ordered lattice: operator ⊇ stage. The stage only ever receives public data."""

    OPERATOR = "operator"
    STAGE = "stage"

    def covers(self, other: Audience) -> bool:
        return self is Audience.OPERATOR or self is other


def visibility_of_space(space: str) -> Visibility:
    """The board is the only public space; every role space is private."""
    return Visibility.PUBLIC if space == BOARD else Visibility.PRIVATE


# Everyone an item can be delivered to besides the operator: the roles and the public stage.
Principal = Literal[Role, "stage"]
PRINCIPALS: tuple[Principal, ...] = get_args(Principal)  # the roles in their order, then the stage
STAGE: Principal = "stage"
EVERYONE: frozenset[Principal] = frozenset(PRINCIPALS)
PUBLIC_LABEL = "public"
SEALED_LABEL = "sealed"


@dataclass(frozen=True, slots=True)
class Readers:
    """Who may encounter an item. `Readers.public()` (everyone) is the identity of `narrowest`;
    `Readers.sealed()` (nobody) absorbs everything."""

    principals: frozenset[Principal]

    @classmethod
    def public(cls) -> Readers:
        return cls(EVERYONE)

    @classmethod
    def sealed(cls) -> Readers:
        return cls(frozenset())

    @classmethod
    def of(cls, *names: str) -> Readers:
        return cls(frozenset(principal(name) for name in names))

    @property
    def is_sealed(self) -> bool:
        return not self.principals

    @property
    def is_public(self) -> bool:
        return self.principals == EVERYONE

    def admits(self, recipient: str) -> bool:
        return principal(recipient) in self.principals

    def narrowest(self, other: Readers) -> Readers:
        return Readers(self.principals & other.principals)

    @property
    def label(self) -> str:
        """`public`, `sealed`, or the principals joined by `+` in a stable order."""
        if self.is_public:
            return PUBLIC_LABEL
        if self.is_sealed:
            return SEALED_LABEL
        return "+".join(p for p in PRINCIPALS if p in self.principals)

    @classmethod
    def from_label(cls, label: str) -> Readers:
        if label == PUBLIC_LABEL:
            return cls.public()
        if label == SEALED_LABEL:
            return cls.sealed()
        return cls.of(*label.split("+"))


def principal(name: str) -> Principal:
    """`name` as a principal; ValueError for anyone else (a stored label is checked like any input)."""
    if name not in PRINCIPALS:
        raise ValueError("not a principal")
    return name


def narrowest(*audiences: Readers) -> Readers:
    """The readership of anything derived from `audiences`: their intersection (public when there are none)."""
    return reduce(Readers.narrowest, audiences, Readers.public())


def readers_of_space(space: str) -> Readers:
    """A card's own readership: the board is public; a role's space is that role's alone."""
    if space == BOARD:
        return Readers.public()
    if space not in ROLES:
        raise ValueError("unknown space")
    return Readers.of(space)


def deliverable(recipient: str, audiences: Iterable[Readers]) -> bool:
    """The delivery rule: a payload may go to `recipient` only if every item in it admits the recipient."""
    return all(audience.admits(recipient) for audience in audiences)
