"""The concurrency checker (`tests/chaos.py`, issue 32): random mixes of every command fired at once at a live
server, and at two `bureau serve` over one data directory (one embedded store, one SQLite ledger), each batch's
history checked against the case's invariants.

`make test` runs it bounded, with a fixed seed: `CHAOS_BATCHES` batches (default below) per test. `make chaos`
runs it for `CHAOS_SECONDS` per test with a seed of its own (`CHAOS_SEED` repeats a run) and prints the
figures recorded in docs/faults.md; the history of every batch that broke a rule is kept as JSON in
`CHAOS_HISTORIES` (default: under the server's data directory).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from chaos import Checker, Figures
from live_server import LiveServer

BOUNDED_BATCHES = {"one server": 10, "two servers": 6}
# A seed names a whole plan (tests/chaos.py, Mix): these two plan several batches of 2 or 4 resets, an erase,
# and night-ferry cases with promotions, at one server 10 batches, at two 6.
DEFAULT_SEEDS = {"one server": 32, "two servers": 43}


def setting(name: str) -> str | None:
    return os.environ.get(name) or None


def run_settings(fleet: str) -> tuple[int, int | None, float | None]:
    """(seed, batches, seconds): bounded, with the fixed seed, unless `make chaos` set the environment (a run
    for a time draws a seed of its own, printed so that `CHAOS_SEED` can repeat it)."""
    seconds = float(s) if (s := setting("CHAOS_SECONDS")) else None
    batches = int(b) if (b := setting("CHAOS_BATCHES")) else None
    if seconds is None and batches is None:
        batches = BOUNDED_BATCHES[fleet]
    if chosen := setting("CHAOS_SEED"):
        seed = int(chosen)
    elif seconds is None:
        seed = DEFAULT_SEEDS[fleet]
    else:
        seed = random.SystemRandom().randrange(10**6)
    return seed, batches, seconds


def run(fleet: str, servers: list[LiveServer]) -> Figures:
    seed, batches, seconds = run_settings(fleet)
    print(f"[chaos] {fleet}: seed {seed}, batches {batches}, seconds {seconds}")
    lease_s = float(servers[0].env["BUREAU_PUBLICATION_LEASE_S"])
    histories = setting("CHAOS_HISTORIES")
    kept = Path(histories) / f"{fleet.replace(' ', '-')}-{seed}" if histories else None
    checker = Checker([s.url for s in servers], servers[0].data_dir, seed, lease_s, kept=kept)
    figures = checker.run(batches, seconds)
    print(f"[chaos] {fleet}, seed {seed}:\n{figures.table()}")
    return figures


@pytest.fixture(scope="module")
def second_server(live_server: LiveServer) -> Iterator[LiveServer]:
    """A second process on the live server's data directory: it attaches to the same embedded seekdb and
    shares the SQLite ledger (docs/faults.md, two processes on one data directory)."""
    server = LiveServer(live_server.data_dir).start()
    yield server
    server.stop()


def test_random_mixes_of_commands_at_one_server_keep_every_invariant(live_server: LiveServer) -> None:
    figures = run("one server", [live_server])
    assert figures.histories >= 1 and sum(figures.fired.values()) > 0
    broken = [f"batch {n}: {v}" for n, v in figures.violations]
    assert not broken, "\n".join(broken)


def test_random_mixes_of_commands_at_two_instances_over_one_store_and_one_ledger_keep_every_invariant(
    live_server: LiveServer, second_server: LiveServer
) -> None:
    figures = run("two servers", [live_server, second_server])
    assert figures.histories >= 1 and sum(figures.fired.values()) > 0
    broken = [f"batch {n}: {v}" for n, v in figures.violations]
    assert not broken, "\n".join(broken)
