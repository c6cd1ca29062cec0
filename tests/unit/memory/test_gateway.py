"""The memory gateway over real PowerMem + embedded seekdb: scope isolation, re-checks, concurrency."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from dataclasses import replace

import pytest

from bureau.api.deps import Services
from bureau.memory.embedders import cosine
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft
from bureau.scope.keys import MemoryScope, board_scope, readable_scopes, role_scope

SECRET = "The vault code is 7319."
QUESTION = "What is the vault code?"


def fresh_case() -> str:
    return "t" + secrets.token_hex(8)


@pytest.fixture
def gateway(services: Services) -> MemoryGateway:
    return services.gateway


async def write_secret(gateway: MemoryGateway, scope: MemoryScope, text: str = SECRET):
    return await gateway.write(scope, CardDraft(content=text, topic="vault", kind="secret"))


async def test_same_case_same_space_hits(gateway: MemoryGateway) -> None:
    case = fresh_case()
    card = await write_secret(gateway, role_scope(case, "informant", ""))
    found = await gateway.search([role_scope(case, "informant", "")], QUESTION, 10)
    assert [c.card.id for c in found] == [card.id]
    assert found[0].card.content == SECRET


async def test_other_space_of_same_case_misses(gateway: MemoryGateway) -> None:
    case = fresh_case()
    await write_secret(gateway, role_scope(case, "informant", ""))
    assert await gateway.search(readable_scopes(case, "detective", ""), QUESTION, 10) == []


async def test_same_space_of_other_case_misses(gateway: MemoryGateway) -> None:
    case_a, case_b = fresh_case(), fresh_case()
    await write_secret(gateway, role_scope(case_a, "informant", ""))
    assert await gateway.search([role_scope(case_b, "informant", "")], QUESTION, 10) == []


async def test_get_and_delete_with_wrong_scope_find_and_change_nothing(gateway: MemoryGateway) -> None:
    case, other = fresh_case(), fresh_case()
    owner = role_scope(case, "informant", "")
    card = await write_secret(gateway, owner)
    for wrong in (role_scope(case, "detective", ""), board_scope(case, ""), role_scope(other, "informant", "")):
        assert await gateway.get(wrong, card.id) is None
        assert await gateway.delete(wrong, card.id) is False
    assert await gateway.get(owner, card.id) == card
    assert await gateway.delete(owner, card.id) is True
    assert await gateway.get(owner, card.id) is None


async def test_malformed_card_ids_are_simply_absent(gateway: MemoryGateway) -> None:
    scope = role_scope(fresh_case(), "informant", "")
    for bad in ("", "abc", "-1", "1" * 40, "12; DROP TABLE"):
        assert await gateway.get(scope, bad) is None


async def test_scores_are_cosine_similarities(gateway: MemoryGateway, services: Services) -> None:
    scope = role_scope(fresh_case(), "informant", "")
    await write_secret(gateway, scope)
    [found] = await gateway.search([scope], QUESTION, 10)
    embedder = services.gateway._embedder
    expected = cosine(embedder.embed_query(QUESTION), embedder.embed_query(SECRET))
    assert found.score == pytest.approx(expected, abs=1e-3)


async def test_foreign_rows_from_a_store_filter_bug_are_dropped_and_counted(
    gateway: MemoryGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = fresh_case()
    await write_secret(gateway, role_scope(case, "informant", ""))
    nearest = gateway._life.nearest
    if nearest is not None:  # seekdb: the gateway's own statement (memory/seekdb_search.py)
        real_nearest = nearest.search

        def buggy_nearest(queries, limit):  # a statement that forgets the agent filter
            return real_nearest([replace(q, agent_id=None) for q in queries], limit)

        monkeypatch.setattr(nearest, "search", buggy_nearest)
    else:
        storage = gateway._life.client().storage
        real_search = storage.search_memories

        def buggy_search(**kwargs):  # a store that forgets the agent filter, as PowerMem does without agent_id
            kwargs["agent_id"] = None
            return real_search(**kwargs)

        monkeypatch.setattr(storage, "search_memories", buggy_search)
    before = gateway.foreign_hits_dropped
    found = await gateway.search([role_scope(case, "detective", "")], QUESTION, 10)
    assert found == []
    assert gateway.foreign_hits_dropped == before + 1


async def test_rows_of_one_space_answered_for_another_are_dropped_and_counted(
    gateway: MemoryGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement answers every space of a question at once: a part's rows filed under the other part (a
    bug in reading the parts) must not reach either space."""
    nearest = gateway._life.nearest
    if nearest is None:
        pytest.skip("one search per space on this backend")
    case = fresh_case()
    await write_secret(gateway, role_scope(case, "informant", ""))
    await write_secret(gateway, board_scope(case, ""), "The board says the vault code is 7319.")
    real_nearest = nearest.search

    def swapped(queries, limit):
        own, board = real_nearest(queries, limit)
        return [board, own]

    monkeypatch.setattr(nearest, "search", swapped)
    before = gateway.foreign_hits_dropped
    assert await gateway.search(readable_scopes(case, "informant", ""), QUESTION, 10) == []
    assert gateway.foreign_hits_dropped == before + 2


async def test_erase_case_removes_every_space_and_only_that_case(gateway: MemoryGateway) -> None:
    case, neighbour = fresh_case(), fresh_case()
    for space in ("detective", "informant", "suspect", "bulletin_board"):
        await write_secret(gateway, MemoryScope(case, space, generation=""))
    kept = await write_secret(gateway, role_scope(neighbour, "informant", ""))
    await gateway.erase_case(case)
    for space in ("detective", "informant", "suspect", "bulletin_board"):
        assert await gateway.list(MemoryScope(case, space, generation="")) == []
    assert await gateway.list(role_scope(neighbour, "informant", "")) == [kept]
    assert case not in await gateway.list_case_ids()


async def test_hundreds_of_concurrent_callers_neither_crash_nor_lose_writes(gateway: MemoryGateway) -> None:
    """Embedded seekdb crashes under concurrent threads; the gateway's single worker must serialise."""
    case = fresh_case()
    scopes = [role_scope(case, "detective", ""), role_scope(case, "informant", ""), board_scope(case, "")]
    writes = [
        gateway.write(
            scopes[i % 3],
            CardDraft(content=f"Ledger entry number {i} about crate {i * 7}.", topic="t", kind="note"),
        )
        for i in range(180)
    ]
    searches = [gateway.search([scopes[i % 3]], f"crate {i}", 5) for i in range(120)]
    results = await asyncio.gather(*writes, *searches)
    written = results[:180]
    assert len({card.id for card in written}) == 180
    for scope in scopes:
        stored = await gateway.list(scope)
        assert len(stored) == 60
        assert all(card.space == scope.space and card.case_id == case for card in stored)
    assert await gateway.ping()


async def _behind_a_held_call(gateway: MemoryGateway, *calls) -> list:
    """Queue `calls` on the one memory worker while it is busy, in the given order, then let them run."""
    hold = threading.Event()
    blocker = gateway._life.executor.submit(hold.wait)  # stands for any call already running on the worker
    queue = gateway._life.executor._work_queue
    tasks = []
    for call in calls:
        tasks.append(asyncio.ensure_future(call))
        deadline = time.monotonic() + 10
        while queue.qsize() < len(tasks):  # each call is on the worker's queue before the next is made
            assert time.monotonic() < deadline, "the call never reached the memory worker"
            await asyncio.sleep(0.001)
    hold.set()
    blocker.result(timeout=10)
    return await asyncio.gather(*tasks)


async def test_a_search_queued_before_an_erase_leaves_nothing_of_the_case_cached(gateway: MemoryGateway) -> None:
    case = fresh_case()
    card = await write_secret(gateway, role_scope(case, "detective", ""))
    found, _ = await _behind_a_held_call(
        gateway, gateway.search(readable_scopes(case, "detective", ""), QUESTION, 10), gateway.erase_case(case)
    )
    assert [c.card.id for c in found] == [card.id]  # the search ran first, and read the card
    assert case not in gateway.relevance_vector_cases()
    assert card.id not in gateway.relevance_feature_ids()
    await gateway.search(readable_scopes(case, "detective", ""), QUESTION, 10)  # asked again after the erase
    assert case not in gateway.relevance_vector_cases()


async def test_a_search_queued_before_a_delete_leaves_the_card_uncached(gateway: MemoryGateway) -> None:
    case = fresh_case()
    scope = role_scope(case, "informant", "")
    card = await write_secret(gateway, scope)
    found, _ = await _behind_a_held_call(
        gateway, gateway.search([scope], QUESTION, 10), gateway.delete_many(scope, [card.id])
    )
    assert [c.card.id for c in found] == [card.id]
    assert card.id not in gateway.relevance_feature_ids()
    assert case not in gateway.relevance_vector_cases()
