"""A SQLite connection opened while its file refused writes is read-only for life (SQLite falls back
silently). The ledger's and the vault's engines replace such connections once the file accepts writes again,
so a fault that is gone leaves no command failing behind it (docs/faults.md, "The ledger locked, read-only or
full"). Needs root and `chattr` on ext4, as tests/faults/test_ledger_faults.py does."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import OperationalError

import bureau.sqlite_files
from bureau.ledger.database import create_ledger_engine
from bureau.vault.store import VaultStore
from filesystems import immutable

HELD = 3  # connections opened at once during the fault, so the pool keeps several of them


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Path]:
    """A WAL database with a table, kept open by another connection so its WAL file stays on disk (the fault
    covers both files, as under a running server)."""
    path = tmp_path / "x.db"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as keeper:
        keeper.execute("PRAGMA journal_mode=WAL")
        keeper.execute("CREATE TABLE notes (n INTEGER)")
        assert (tmp_path / "x.db-wal").exists()
        yield path


def open_during_the_fault(engine: Engine) -> None:
    """Several connections opened (and read through) while the files refuse writes, then pooled."""
    held = [engine.connect() for _ in range(HELD)]
    for connection in held:
        assert connection.execute(text("SELECT count(*) FROM notes")).scalar() is not None  # reads still work
        connection.rollback()
    for connection in held:
        connection.close()


def write(engine: Engine, n: int) -> None:
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO notes VALUES (:n)"), {"n": n})


def refusals(engine: Engine, writes: int) -> list[OperationalError]:
    """The errors of `writes` writes, one after another, each on whichever connection the pool hands out."""
    refused = []
    for n in range(writes):
        try:
            write(engine, n)
        except OperationalError as exc:
            refused.append(exc)
    return refused


ENGINES: dict[str, Callable[[str], Engine]] = {
    "ledger": create_ledger_engine,
    "vault": lambda url: VaultStore(url).engine,
}


@pytest.mark.parametrize("make_engine", ENGINES.values(), ids=ENGINES.keys())
def test_connections_opened_during_a_read_only_fault_are_replaced_once_it_is_gone(
    database: Path, make_engine: Callable[[str], Engine]
) -> None:
    engine = make_engine(f"sqlite:///{database}")
    try:
        with immutable(database, database.with_name(database.name + "-wal")):
            open_during_the_fault(engine)
            with pytest.raises(OperationalError):
                write(engine, 0)  # the fault itself is still refused
        for n in range(1, 2 * HELD + 2):  # every pooled connection has its turn, none refuses
            write(engine, n)
        with engine.connect() as connection:
            assert connection.execute(text("SELECT count(*) FROM notes")).scalar() == 2 * HELD + 1
    finally:
        engine.dispose()


def test_without_the_guard_such_a_connection_refuses_writes_for_good(database: Path) -> None:
    """The control: the same moves on a plain engine leave a connection that refuses every write after the
    fault is gone, so the test above would fail without the guard."""
    engine = create_engine(f"sqlite:///{database}", connect_args={"check_same_thread": False})
    try:
        with immutable(database, database.with_name(database.name + "-wal")):
            open_during_the_fault(engine)
        refused = refusals(engine, 2 * HELD + 1)
        assert refused
        for exc in refused:
            assert getattr(exc.orig, "sqlite_errorcode", 0) & 0xFF == bureau.sqlite_files.SQLITE_READONLY
    finally:
        engine.dispose()


def test_a_connection_that_refuses_a_write_is_dropped_when_the_open_saw_no_fault(
    database: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault that came and went while SQLite opened the file: the checks around the open saw writable files.
    The connection's first write is refused (SQLITE_READONLY), and the pool never hands it out again."""
    monkeypatch.setattr(bureau.sqlite_files, "writable", lambda _files: True)
    engine = create_ledger_engine(f"sqlite:///{database}")
    try:
        with immutable(database, database.with_name(database.name + "-wal")):
            open_during_the_fault(engine)
        assert 0 < len(refusals(engine, 2 * HELD + 1)) <= HELD  # each stale connection refuses once, then is gone
        for n in range(2 * HELD):
            write(engine, n)
    finally:
        engine.dispose()
