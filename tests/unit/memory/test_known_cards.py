"""The ids the session-record retention deletes by: what this process has seen of a space's cards of a type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bureau.memory.known_cards import FULL_READ_EVERY, KnownCards

KEY = ("bureau:case-a", "detective", "session")
T0 = datetime(2026, 12, 1, tzinfo=UTC)


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_a_list_is_read_first_and_again_every_so_many_trims() -> None:
    known = KnownCards()
    reads = []
    for trim in range(1, 3 * FULL_READ_EVERY + 1):
        if known.needs_full_read(KEY):
            reads.append(trim)
            known.read(KEY, [])
    assert reads == [1, FULL_READ_EVERY, 2 * FULL_READ_EVERY, 3 * FULL_READ_EVERY]


def test_cards_noted_join_only_a_list_already_read_in_creation_order() -> None:
    known = KnownCards()
    known.noted("bureau:case-a", "detective", [("session", at(1), "1", "item-1")])
    assert known.beyond_newest(KEY, 0) == []  # never read: nothing is assumed
    known.read(KEY, [(at(4), "4", "item-4"), (at(2), "2", "item-2")])
    # A write here (newest), a card another process wrote earlier (found by a search), one noted twice, other
    # types and spaces: each lands in its own place, once.
    known.noted(
        "bureau:case-a",
        "detective",
        [("session", at(5), "5", "item-5"), ("session", at(3), "13", "item-13"), ("session", at(5), "5", "item-5")],
    )
    known.noted("bureau:case-a", "detective", [("long_term_knowledge", at(6), "6", "item-6")])
    known.noted("bureau:case-a", "informant", [("session", at(7), "7", "item-7")])
    assert known.beyond_newest(KEY, 0) == [("2", "item-2"), ("13", "item-13"), ("4", "item-4"), ("5", "item-5")]
    assert known.beyond_newest(KEY, 2) == [("2", "item-2"), ("13", "item-13")]


def test_deletes_in_the_space_or_the_whole_case_leave_the_list() -> None:
    known = KnownCards()
    other = ("bureau:case-b", "detective", "session")
    known.read(KEY, [(at(1), "1", "item-1"), (at(2), "2", "item-2"), (at(3), "3", "item-3")])
    known.read(
        other, [(at(1), "1", "item-1"), (at(9), "9", "item-9")]
    )  # ids of another case are another list, whatever their value
    known.deleted("bureau:case-a", "informant", ["1"])
    assert known.beyond_newest(KEY, 0) == [("1", "item-1"), ("2", "item-2"), ("3", "item-3")]
    known.deleted("bureau:case-a", "detective", ["2"])
    assert known.beyond_newest(KEY, 0) == [("1", "item-1"), ("3", "item-3")]
    known.deleted("bureau:case-a", None, ["1", "3"])  # an erase names no space
    assert known.beyond_newest(KEY, 0) == [] and known.beyond_newest(other, 0) == [("1", "item-1"), ("9", "item-9")]


def test_an_erased_case_leaves_nothing_not_even_its_id() -> None:
    known = KnownCards()
    other = ("bureau:case-b", "detective", "session")
    for key in (KEY, other):
        known.needs_full_read(key)
        known.read(key, [(at(1), "1", "item-1")])
    known.forget("bureau:case-a")
    assert known.user_ids() == {"bureau:case-b"}
    assert known.needs_full_read(KEY)  # starts afresh


def test_the_cases_kept_are_bounded_and_the_least_recently_trimmed_reads_the_store_again(monkeypatch) -> None:
    from bureau.memory import known_cards

    monkeypatch.setattr(known_cards, "CASE_CAPACITY", 2)
    known = KnownCards()
    keys = [(f"case:{name}", "detective", "session") for name in ("a", "b", "c")]
    for key in keys:
        assert known.needs_full_read(key)
        known.read(key, [(at(1), "11", "item-11")])
    assert known.user_ids() == {"case:b", "case:c"}  # "a" was trimmed least recently: dropped
    assert known.needs_full_read(keys[0])  # and simply read again
    assert not known.needs_full_read(keys[2])
