"""How the gateway drives embedded seekdb through pyobvector: one reused connection, and a cheap answer to
an empty query. Each fixes a cost measured on the interrogation path (docs/performance.md); neither changes
what a statement returns."""

from __future__ import annotations

import functools
import re
from typing import Any

from sqlalchemy import create_engine
from sqlalchemy.pool import StaticPool

# A quoted SQL literal: a vector ("[0.0123,…]", 512 numbers, twice in every search), a user id, a type.
_LITERAL = re.compile(r"'(?:[^'\\]|\\.|'')*'")


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
    _describe_empty_results_cheaply()
    shared = create_engine(engine.url, creator=engine.pool._creator, poolclass=StaticPool)
    shared.update_execution_options(seekdb_server=server)
    client.engine = shared
    engine.dispose()


def _describe_empty_results_cheaply() -> None:
    """pyobvector's embedded cursor names the columns of a query that returned no rows by parsing the whole
    statement with sqlglot: for a vector search (the board's, while the board is empty) that is 12 KB of
    vector literals tokenised in Python, 4 ms of every question. The column list is the same with every
    literal blanked, so the blanked statement is parsed instead, once per statement shape."""
    from pyobvector.client import seekdb_engine

    describe = seekdb_engine._description_from_select
    if getattr(describe, "blanks_literals", False):
        return

    @functools.lru_cache(maxsize=256)
    def describe_shape(shape: str) -> list[tuple[Any, ...]]:
        return describe(shape)

    def describe_blanked(sql: str) -> list[tuple[Any, ...]]:
        return describe_shape(blank_literals(sql))

    describe_blanked.blanks_literals = True  # type: ignore[attr-defined]
    describe_blanked.original = describe  # type: ignore[attr-defined]
    seekdb_engine._description_from_select = describe_blanked


def blank_literals(sql: str) -> str:
    """The statement with every quoted literal emptied: its shape, whatever it searched for."""
    return _LITERAL.sub("''", sql)
