"""How the gateway drives embedded seekdb through pyobvector: one reused connection. It fixes a cost
measured on the interrogation path (docs/performance.md) and changes nothing a statement returns."""

from __future__ import annotations

from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool


def share_one_connection(memory: Any) -> None:
    """Embedded seekdb: one connection for every statement. pyobvector builds its embedded engine without a
    pool, so each statement opened a connection (running the MySQL dialect's `SET NAMES` round trip) and
    closing it closed the embedded client's connection too: about a seventh of the memory worker's time.
    Safe because every store call of a gateway runs on its one worker thread. A remote server keeps
    pyobvector's own connection pool."""
    client = getattr(memory.storage.vector_store, "obvector", None)
    if client is None:
        return  # PowerMem's sqlite store
    engine = client.engine
    server = engine.get_execution_options().get("seekdb_server")
    if server is None:
        return
    shared = create_engine(engine.url, creator=engine.pool._creator, poolclass=StaticPool)
    shared.update_execution_options(seekdb_server=server)
    client.engine = shared
    engine.dispose()
