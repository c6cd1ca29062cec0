"""Fixtures shared by the unit tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from bureau.ledger.database import create_ledger_engine, migrate


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    """A real, migrated SQLite ledger of its own (two `Ledger` objects over it stand for two instances)."""
    engine = create_ledger_engine(f"sqlite:///{tmp_path / 'bureau.db'}")
    migrate(engine)
    yield engine
    engine.dispose()
