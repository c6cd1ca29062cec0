"""A throwaway PostgreSQL cluster (Debian's postgresql) for the ledger tests that run on it too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bureau.vault import Vault
from bureau.vault.opening import VaultLocation, create_vault
from servers import running_postgres


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    with running_postgres() as cluster:
        yield cluster.url


@pytest.fixture
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Vault]:
    """A vault of its own for a ledger test (the ledger never holds a key: it takes grants)."""
    where = tmp_path_factory.mktemp("ledger-vault")
    opened = create_vault(VaultLocation(where, f"sqlite:///{where / 'vault.db'}", where / "kek"), "ledger-test")
    yield opened
    opened.close()
