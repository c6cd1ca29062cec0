"""The gateway's own seekdb search (memory/seekdb_search.py) against PowerMem's, over the real store."""

from __future__ import annotations

import math
import secrets
from typing import Any

import numpy as np
import pytest
import sqlglot
from pyobvector.client import seekdb_engine

from bureau.api.deps import Services
from bureau.memory import owner_rows
from bureau.memory.scoped_calls import CASE_USER_PREFIX
from bureau.memory.seekdb_search import OWNER_INDEX, NearestCards, SpaceQuery, vector_text
from bureau.scope.keys import SPACES, board_scope, readable_scopes, role_scope
from helpers import grant_of
from search_parity import CARDS, assert_search_matches_powermem, case_with_cards


@pytest.fixture
def nearest(services: Services) -> NearestCards:
    found = services.gateway.runner.nearest
    if found is None:
        pytest.skip("the gateway searches through PowerMem on this backend")
    return found


async def on_worker(services: Services, fn: Any, *args: Any) -> Any:
    return await services.gateway.runner.run(fn, *args)


@pytest.mark.parametrize("filler", [0, 1200], ids=["six cards", "1206 cards"])
async def test_each_space_gets_what_powermem_s_search_returns(
    services: Services, nearest: NearestCards, filler: int
) -> None:
    """With 1 206 cards in the detective's space, its own top k still comes from its own part."""
    case = await case_with_cards(services.gateway, services.vault, filler)
    await assert_search_matches_powermem(services.gateway, services.vault, case)


async def test_one_statement_answers_both_spaces_of_a_question(
    services: Services, nearest: NearestCards, monkeypatch: pytest.MonkeyPatch
) -> None:
    if services.gateway.backend_name != "seekdb-embedded":
        pytest.skip("counts the embedded driver's statements")
    case = await case_with_cards(services.gateway, services.vault)
    statements: list[str] = []
    execute = seekdb_engine._SeekdbCursor.execute

    def counted(self: Any, operation: str, parameters: Any = None) -> None:
        statements.append(operation)
        execute(self, operation, parameters)

    monkeypatch.setattr(seekdb_engine._SeekdbCursor, "execute", counted)
    found = await services.gateway.retrieve(
        await grant_of(services, case, reads=["detective", "bulletin_board"]), "What is the vault code?", 5
    )
    assert {c.card.space for c in found.candidates} == {"detective", "bulletin_board"}
    assert len([s for s in statements if "cosine_distance" in s]) == 1


async def test_the_store_has_its_owner_index_and_asking_again_changes_nothing(
    services: Services, nearest: NearestCards
) -> None:
    """Every scoped statement filters on (user_id, agent_id); the gateway's start made sure of the index."""
    columns = (
        "SELECT column_name FROM information_schema.statistics WHERE table_schema = DATABASE() "
        f"AND table_name = %(table)s AND index_name = '{OWNER_INDEX}' ORDER BY seq_in_index"
    )
    table = {"table": services.settings.memory_collection}
    assert await on_worker(services, nearest.execute, columns, table) == [("user_id",), ("agent_id",)]
    await on_worker(services, nearest.ensure_owner_index)
    assert await on_worker(services, nearest.has_owner_index)
    assert len(await on_worker(services, nearest.execute, columns, table)) == 2


async def test_empty_spaces_and_no_slots_find_nothing(
    services: Services, nearest: NearestCards, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When no row comes back, the embedded driver names the columns by parsing the statement: the vectors
    are parameters, so it parses a few hundred characters, never 12 KB of numbers."""
    case = "t" + secrets.token_hex(8)
    vector = services.gateway.embedder.embed_query("anything")
    queries = [SpaceQuery(s.user_id, s.agent_id, vector) for s in readable_scopes(case, "suspect", "")]
    parsed: list[str] = []
    parse_one = sqlglot.parse_one

    def recording_parse(sql: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(sql)
        return parse_one(sql, *args, **kwargs)

    monkeypatch.setattr(sqlglot, "parse_one", recording_parse)
    assert await on_worker(services, nearest.search, queries, 5) == [[], []]
    assert parsed, "the driver no longer parses an empty result: this test has nothing to check"
    assert all("[" not in sql and len(sql) < 2000 for sql in parsed), "a vector reached the parser"
    assert await on_worker(services, nearest.search, queries, 0) == [[], []]
    assert await on_worker(services, nearest.search, [], 5) == []


async def test_an_owner_with_quotes_is_a_parameter_not_sql(services: Services, nearest: NearestCards) -> None:
    """Owner columns are bound: an id full of SQL matches nothing and runs nothing."""
    case = await case_with_cards(services.gateway, services.vault)
    vector = services.gateway.embedder.embed_query("What is the vault code?")
    hostile = SpaceQuery(f"{board_scope(case).user_id}' OR '1'='1", "x' OR 1=1 -- ", vector)
    assert await on_worker(services, nearest.search, [hostile], 5) == [[]]
    assert len(await services.gateway.list(await grant_of(services, case, reads=["detective"]))) == len(CARDS)


async def test_a_case_s_spaces_are_listed_as_powermem_lists_them_in_one_statement(
    services: Services, nearest: NearestCards, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same rows as PowerMem's list of each space, id, text, owner and metadata, without the vector, for
    every space of the case in one statement; 1 206 rows page by id with none skipped or repeated."""
    case = await case_with_cards(services.gateway, services.vault, filler=1200)
    client = services.gateway.runner.client()
    agents = list(SPACES)

    def both() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        ours = list(owner_rows.space_rows(nearest, role_scope(case, "detective").user_id, agents))
        theirs = [
            row for agent in agents for row in owner_rows.rows(client, role_scope(case, "detective").user_id, agent)
        ]
        return ours, theirs

    ours, theirs = await on_worker(services, both)
    assert len(ours) == 6 + 1200 + 3 + 6
    key = lambda row: int(row["id"])  # noqa: E731
    assert len({key(row) for row in ours}) == len(ours)
    for mine, powermem in zip(sorted(ours, key=key), sorted(theirs, key=key), strict=True):
        assert {k: mine[k] for k in ("memory", "user_id", "agent_id", "metadata")} == {
            k: powermem[k] for k in ("memory", "user_id", "agent_id", "metadata")
        }
        assert key(mine) == key(powermem)

    statements: list[str] = []
    execute = seekdb_engine._SeekdbCursor.execute

    def counted(self: Any, operation: str, parameters: Any = None) -> None:
        statements.append(operation)
        execute(self, operation, parameters)

    if services.gateway.backend_name == "seekdb-embedded":
        monkeypatch.setattr(seekdb_engine._SeekdbCursor, "execute", counted)
    other = await services.gateway.list_spaces(await grant_of(services, case, reads=["informant", "bulletin_board"]))
    assert {space: len(cards) for space, cards in other.items()} == {"informant": 6, "bulletin_board": 3}
    if statements:
        assert len(statements) == 1 and "embedding" not in statements[0]


async def test_an_owner_with_quotes_lists_nothing(services: Services, nearest: NearestCards) -> None:
    case = await case_with_cards(services.gateway, services.vault)
    user = f"{board_scope(case).user_id}' OR '1'='1"
    assert await on_worker(services, nearest.rows, user, ["detective", "x' OR 1=1 -- "], 0, 500) == []
    assert await on_worker(services, nearest.rows, board_scope(case).user_id, [], 0, 500) == []


def test_a_vector_is_written_so_that_it_reads_back_as_the_same_float32_and_only_if_finite() -> None:
    values = np.random.default_rng(36).standard_normal(512).astype(np.float32) / 20
    values[:4] = [0.1, -0.25, 1 / 3, 1e-8]
    text = vector_text(values.tolist())
    assert text.startswith("[") and text.endswith("]")
    read_back = np.array([float(part) for part in text[1:-1].split(",")], dtype=np.float32)
    assert read_back.tobytes() == values.tobytes()  # the very numbers the store compares, bit for bit
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="not finite"):
            vector_text([0.1, bad])


def test_only_plain_identifiers_are_accepted_from_the_store_configuration() -> None:
    class Store:
        collection_name, text_field, metadata_field, vector_field, primary_field = (
            "memories` WHERE 1=1 --",
            "document",
            "metadata",
            "embedding",
            "id",
        )

    with pytest.raises(ValueError, match="identifier"):
        NearestCards(Store())


async def test_the_owners_statement_names_every_owner_powermem_s_paged_scan_finds(
    services: Services, nearest: NearestCards
) -> None:
    """The retention sweep's list of cases in the store: one statement, where the paged scan read every row."""
    case = await case_with_cards(services.gateway, services.vault)
    scanned = await on_worker(services, owner_rows.owners, services.gateway.runner.client())
    named = await on_worker(services, nearest.owners)
    assert named == scanned
    assert f"{CASE_USER_PREFIX}{case}" in named
    assert case in await services.gateway.list_case_ids()
