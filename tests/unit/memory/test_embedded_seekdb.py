"""The gateway's adjustments to pyobvector's embedded seekdb driver, over the real store."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
import sqlglot
from pyobvector.client import seekdb_engine

from bureau.api.deps import Services
from bureau.memory.embedded_seekdb import blank_literals
from bureau.memory.types import CardDraft
from bureau.scope.keys import board_scope, readable_scopes, role_scope


def test_blank_literals_empties_every_quoted_literal() -> None:
    sql = "SELECT a, 'x' AS b FROM t WHERE u = 'it''s' AND v = 'a\\'b' ORDER BY d(e, '[0.1,0.2]') LIMIT 3"
    assert blank_literals(sql) == "SELECT a, '' AS b FROM t WHERE u = '' AND v = '' ORDER BY d(e, '') LIMIT 3"


async def test_an_empty_search_is_described_without_parsing_its_vectors(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The board of a new case is empty: its search returns no rows, so the driver describes the statement.
    What it parses is the statement's shape (no vector), and it names the same columns the original would."""
    if services.gateway.backend_name != "seekdb-embedded":
        pytest.skip("only embedded seekdb describes an empty result by parsing it")
    case = "t" + secrets.token_hex(8)
    await services.gateway.write(
        role_scope(case, "detective"), CardDraft(content="The vault code is 7319.", topic="vault", kind="secret")
    )
    described: list[str] = []
    parsed: list[str] = []
    patched = seekdb_engine._description_from_select
    parse_one = sqlglot.parse_one

    def recording_describe(sql: str) -> Any:
        described.append(sql)
        return patched(sql)

    def recording_parse(sql: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(sql)
        return parse_one(sql, *args, **kwargs)

    monkeypatch.setattr(seekdb_engine, "_description_from_select", recording_describe)
    monkeypatch.setattr(sqlglot, "parse_one", recording_parse)
    found = await services.gateway.search(readable_scopes(case, "detective"), "What is the vault code?", 10)

    assert [c.card.space for c in found] == ["detective"]  # the board had nothing
    assert described, "the board's empty search was not described"
    assert all("[" not in sql for sql in parsed), "a vector literal was parsed"
    for sql in described:
        assert patched(sql) == patched.original(sql)
    assert await services.gateway.list(board_scope(case)) == []
