"""The ids the session-record retention deletes by: what this process has seen of a space's cards of a type."""

from __future__ import annotations

from bureau.memory.known_cards import FULL_READ_EVERY, KnownCards

KEY = ("bureau:case-a", "detective", "session")


def test_a_list_is_read_first_and_again_every_so_many_trims() -> None:
    known = KnownCards()
    reads = []
    for trim in range(1, 3 * FULL_READ_EVERY + 1):
        if known.needs_full_read(KEY):
            reads.append(trim)
            known.read(KEY, [])
    assert reads == [1, FULL_READ_EVERY, 2 * FULL_READ_EVERY, 3 * FULL_READ_EVERY]


def test_writes_extend_only_a_list_already_read_and_the_oldest_are_beyond_the_newest() -> None:
    known = KnownCards()
    known.written("bureau:case-a", "detective", [("session", "1")])
    assert known.beyond_newest(KEY, 0) == []  # never read: nothing is assumed
    known.read(KEY, ["1", "2"])
    known.written("bureau:case-a", "detective", [("session", "3"), ("long_term_knowledge", "4"), ("session", "3")])
    known.written("bureau:case-a", "informant", [("session", "5")])
    assert known.beyond_newest(KEY, 2) == ["1"]
    assert known.beyond_newest(KEY, 0) == ["1", "2", "3"]


def test_deletes_in_the_space_or_the_whole_case_leave_the_list() -> None:
    known = KnownCards()
    other = ("bureau:case-b", "detective", "session")
    known.read(KEY, ["1", "2", "3"])
    known.read(other, ["1", "9"])  # ids of another case are another list, whatever their value
    known.deleted("bureau:case-a", "informant", ["1"])
    assert known.beyond_newest(KEY, 0) == ["1", "2", "3"]
    known.deleted("bureau:case-a", "detective", ["2"])
    assert known.beyond_newest(KEY, 0) == ["1", "3"]
    known.deleted("bureau:case-a", None, ["1", "3"])  # an erase names no space
    assert known.beyond_newest(KEY, 0) == [] and known.beyond_newest(other, 0) == ["1", "9"]
