"""The support rule (scope/support.py) against a brute-force oracle: the largest set of contributions with
pairwise distinct roles and sources, and leave-one-out over every single role and source."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given
from hypothesis import strategies as st

from bureau.scope.support import CHIEF_SOURCE, Contribution, leave_one_out, matching, qualifies, source_key, support


def brute_support(contributions: list[Contribution]) -> int:
    for size in range(len(contributions), 0, -1):
        for chosen in combinations(contributions, size):
            if len({c.role for c in chosen}) == size and len({c.source for c in chosen}) == size:
                return size
    return 0


def brute_leave_one_out(contributions: list[Contribution]) -> int:
    if not contributions:
        return 0
    removals = [("role", r) for r in {c.role for c in contributions}] + [
        ("source", s) for s in {c.source for c in contributions}
    ]
    return min(brute_support([c for c in contributions if getattr(c, kind) != value]) for kind, value in removals)


contributions = st.lists(
    st.builds(
        Contribution,
        card=st.text("abcdefgh", min_size=1, max_size=3),
        role=st.sampled_from(["detective", "informant", "suspect"]),
        source=st.sampled_from(["memo", "porter", "fisher", "chief"]),
    ),
    max_size=7,
    unique_by=lambda c: c.card,
)


@given(contributions)
def test_support_and_leave_one_out_match_the_brute_force_oracle(found: list[Contribution]) -> None:
    chosen = matching(found)
    assert len({c.role for c in chosen}) == len({c.source for c in chosen}) == len(chosen)
    assert support(found) == brute_support(found)
    assert leave_one_out(found) == brute_leave_one_out(found)
    for minimum in (1, 2):
        assert qualifies(found, minimum) == (brute_leave_one_out(found) >= minimum)


def test_the_issues_examples() -> None:
    three = [Contribution("a", "detective", "porter"), Contribution("b", "informant", "harbour")]
    three.append(Contribution("c", "suspect", "fisher"))
    assert (support(three), leave_one_out(three), qualifies(three, 2)) == (3, 2, True)
    assert (support(three[:2]), leave_one_out(three[:2]), qualifies(three[:2], 2)) == (2, 1, False)
    memo = [Contribution("a", "detective", "memo"), Contribution("b", "informant", "memo")]
    memo.append(Contribution("c", "suspect", "crane"))
    assert (support(memo), leave_one_out(memo)) == (2, 1)  # five people who read the same memo are one source
    same_role = [Contribution("a", "detective", "x"), Contribution("b", "detective", "y")]
    assert support(same_role) == 1


def test_source_identity() -> None:
    assert source_key("  The Night   Porter ", "operator", "1") == source_key("the night porter", "scenario", "2")
    assert source_key(None, "operator", "1") == source_key("", "operator", "2") == CHIEF_SOURCE
    assert source_key(None, "scenario", "1") != source_key(None, "scenario", "2")
