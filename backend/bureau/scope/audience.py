"""Audiences and visibility: who may receive what leaves the server."""

from __future__ import annotations

from enum import StrEnum

from bureau.scope.keys import BOARD


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
