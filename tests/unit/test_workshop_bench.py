"""The workshop benchmark's own logic (bench/room.py, bench/workshop.py): its schedule, its arguments, and how
it counts errors and lags from what the room recorded. No server and nothing timed: the benchmark itself is
run by `make bench-workshop`."""

from __future__ import annotations

import argparse
import importlib
import itertools
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench_module(name: str) -> ModuleType:
    """A module of bench/, imported as its scripts import each other (bench/ on the path)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return importlib.import_module(name)


room = bench_module("room")
workshop = bench_module("workshop")

WINDOW = (100.0, 160.0)


def plan(**changes: object) -> object:
    fields = {"port": 1, "players": 7, "passcode": "p", "warmup_s": 15.0, "window_s": 60.0, **changes}
    return room.Plan(**fields)


def test_the_schedule_is_open_loop_a_question_every_interval_the_same_for_the_same_seed() -> None:
    chosen = plan()
    actions = room.schedule(chosen)
    assert actions == room.schedule(plan())
    assert actions != room.schedule(plan(seed=37))
    assert [a.at for a in actions] == sorted(a.at for a in actions)
    for player in range(chosen.players):
        asked = [a for a in actions if a.player == player and a.kind == "question"]
        assert [a.n for a in asked] == list(range(len(asked)))
        assert all(0 <= a.at < chosen.play_s for a in asked)
        gaps = [b.at - a.at for a, b in itertools.pairwise(asked)]
        assert all(abs(gap - chosen.interval_s) <= 2 * chosen.jitter_s + 1e-9 for gap in gaps)
        published = [a for a in actions if a.player == player and a.kind == "publish"]
        assert [a.n for a in published] == [n for n in range(len(asked)) if n % 10 == 9]
        assert all(p.at == pytest.approx(asked[p.n].at + chosen.interval_s / 2) for p in published)
    first = sorted(min(a.at for a in actions if a.player == p) for p in range(chosen.players))
    assert first[-1] - first[0] > chosen.interval_s / 2  # phases spread over the interval, not all at once


def test_each_player_asks_every_role_every_preset_question_before_repeating_one() -> None:
    presets = ["q1", "q2", "q3", "q4"]
    for player in range(5):
        pairs = [room.question(player, n, presets) for n in range(12)]
        assert len(set(pairs)) == 12
        assert room.question(player, 12, presets) == pairs[0]


def test_the_arguments(tmp_path: Path) -> None:
    assert workshop.parse_players("50,10,10, 25") == [10, 25, 50]
    with pytest.raises(argparse.ArgumentTypeError):
        workshop.parse_players("0,10")
    with pytest.raises(argparse.ArgumentTypeError):
        workshop.parse_checkout(str(tmp_path))
    (tmp_path / "backend" / "bureau").mkdir(parents=True)
    (tmp_path / "backend" / "bureau" / "__init__.py").write_text("")
    checkout = workshop.parse_checkout(f"today={tmp_path}")
    assert (checkout.label, checkout.path, checkout.backend) == ("today", tmp_path, tmp_path / "backend")
    assert workshop.parse_checkout(str(tmp_path)).label == ""


def outcome(kind: str, due: float, took_s: float, status: int) -> object:
    return room.Outcome(0, kind, due, due, due + took_s if status else 0.0, status)


def test_errors_are_counted_by_kind_in_the_window_and_outside_it() -> None:
    commits = {
        1: workshop.Commit("a", "case.created", 90.0, True),
        2: workshop.Commit("a", "answer.completed", 110.0, False),  # the console's only
        3: workshop.Commit("a", "retrieval.completed", 110.0, True),
        4: workshop.Commit("a", "retrieval.completed", 120.0, True),
        5: workshop.Commit("b", "retrieval.completed", 120.0, True),  # another case's
    }
    stage = room.ScreenLog(0, "stage", "a", frames=[(1, 91.0, 91.0), (3, 110.05, 110.02), (3, 111.0, 111.0)])
    stage.closed, stage.drops = 200.0, [(130.0, "ended by the server")]
    console = room.ScreenLog(0, "console", "a", frames=[(1, 91.0, 91.0), (2, 110.2, 110.1), (3, 110.3, 110.1)])
    console.closed = 115.0  # closed before event 4 was committed: not missed
    outcomes = [
        outcome("question", 101.0, 0.04, 200),
        outcome("question", 102.0, 3.5, 200),  # later than the interval
        outcome("question", 103.0, 0.01, 503),
        outcome("question", 104.0, 0.0, 0),  # no answer by the deadline
        outcome("publish", 105.0, 0.0, -1),  # a transport error
        outcome("console snapshot", 50.0, 0.01, 500),  # before the window
    ]
    log = room.RoomLog(80.0, WINDOW, outcomes, [stage, console], ["a"], 1.0, 0.0)
    inside, outside = workshop.error_counts(log, commits, interval_s=3.0)
    expected = {"late": 1, "non-2xx": 1, "no answer": 1, "transport": 1, "stream drop": 1}
    assert inside == Counter({**expected, "frame missed": 1, "frame repeated": 1})  # event 4 / event 3
    assert outside == Counter({"non-2xx": 1})
    assert workshop.lags_ms(log, commits, "stage", "retrieval.completed") == pytest.approx([50.0, 1000.0])
    assert workshop.lags_ms(log, commits, "stage", "retrieval.completed", arrival=True) == pytest.approx([20.0, 1000])
    assert workshop.lags_ms(log, commits, "console", "answer.completed") == pytest.approx([200.0])
