"""A throwaway PostgreSQL cluster (Debian's postgresql) for the ledger tests that run on it too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers import PostgresCluster


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    cluster = PostgresCluster()
    if not cluster.available:
        pytest.skip("PostgreSQL server binaries not installed (.ci/run installs Debian's postgresql)")
    cluster.start()
    try:
        yield cluster.url
    finally:
        cluster.stop()
