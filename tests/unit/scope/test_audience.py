"""The audience lattice (pure): narrowest is a meet — associative, commutative, idempotent; public is its
identity; sealed (nobody) absorbs; and the delivery rule admits a payload only when every item admits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bureau.scope.audience import (
    PRINCIPALS,
    STAGE,
    Audience,
    Principal,
    Readers,
    deliverable,
    narrowest,
    readers_of_space,
)
from bureau.scope.keys import ROLES

audiences = st.frozensets(st.sampled_from(PRINCIPALS)).map(Readers)


@given(audiences, audiences, audiences)
def test_narrowest_is_associative(a: Readers, b: Readers, c: Readers) -> None:
    assert narrowest(narrowest(a, b), c) == narrowest(a, narrowest(b, c))


@given(audiences, audiences)
def test_narrowest_is_commutative(a: Readers, b: Readers) -> None:
    assert narrowest(a, b) == narrowest(b, a)


@given(audiences)
def test_narrowest_is_idempotent_public_is_identity_sealed_absorbs(a: Readers) -> None:
    assert narrowest(a, a) == a
    assert narrowest(a, Readers.public()) == a
    assert narrowest(Readers.public(), a) == a
    assert narrowest(a, Readers.sealed()) == Readers.sealed()
    assert narrowest(a) == a
    assert narrowest() == Readers.public()


@given(audiences, audiences)
def test_narrowest_never_widens(a: Readers, b: Readers) -> None:
    joint = narrowest(a, b)
    assert all(a.admits(p) and b.admits(p) for p in joint.principals)


@given(audiences)
def test_label_round_trips(a: Readers) -> None:
    assert Readers.from_label(a.label) == a


def test_two_roles_private_cards_give_the_sealed_audience() -> None:
    joint = narrowest(readers_of_space("informant"), readers_of_space("suspect"), readers_of_space("bulletin_board"))
    assert joint.is_sealed and joint.label == "sealed"
    assert narrowest(readers_of_space("detective"), readers_of_space("bulletin_board")) == Readers.of("detective")
    assert readers_of_space("bulletin_board").is_public


@given(st.lists(audiences, max_size=6), st.sampled_from(PRINCIPALS))
def test_a_payload_is_deliverable_only_if_every_item_admits_the_recipient(items: list[Readers], who: Principal) -> None:
    assert deliverable(who, items) == all(who in item.principals for item in items)
    assert not deliverable(who, [*items, Readers.sealed()])


def test_principals_are_the_roles_then_the_stage_and_nobody_else() -> None:
    assert (*ROLES, "stage") == PRINCIPALS
    assert Audience.STAGE == STAGE  # the stage audience receives what the stage principal may read
    for outsider in ("operator", "bulletin_board", "Detective", ""):
        with pytest.raises(ValueError):
            Readers.of(outsider)
        with pytest.raises(ValueError):
            Readers.from_label(f"detective+{outsider}")
