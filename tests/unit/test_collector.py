"""The serving process's garbage collector after start-up (bootstrap/collector.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from bureau.bootstrap.collector import THRESHOLDS, settle_after_reopen, settle_after_start


@pytest.fixture
def restored_collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_what_start_up_left_alive_is_never_walked_again_and_collections_come_less_often(
    restored_collector: None,
) -> None:
    made_at_start = [{"start-up": i} for i in range(1000)]
    settle_after_start()
    assert gc.get_freeze_count() >= len(made_at_start)
    assert all(o is not made_at_start for o in gc.get_objects())  # frozen: no collection walks it
    assert gc.get_threshold() == THRESHOLDS and THRESHOLDS[0] > 700
    made_later = [{"later": 1}]
    assert any(o is made_later for o in gc.get_objects())  # new objects are collected as before


class _Client:
    """Stands for a store client: objects in a reference cycle, frozen at start-up."""

    def __init__(self) -> None:
        self.me = self


def test_a_client_replaced_after_start_up_is_collected_at_the_reopen(restored_collector: None) -> None:
    client = _Client()
    gone = weakref.ref(client)
    settle_after_start()
    del client
    gc.collect()
    assert gone() is not None  # frozen: a collection never frees it
    settle_after_reopen()
    assert gone() is None
    assert gc.get_freeze_count() > 0 and gc.get_threshold() == THRESHOLDS
