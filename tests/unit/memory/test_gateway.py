"""The memory gateway over real PowerMem + embedded seekdb, each call under a real grant of the real vault:
scope isolation, the re-check, the compartments' keys and bases, concurrency."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time

import numpy as np
import pytest

from bureau.api.deps import Services
from bureau.memory.embedders import cosine
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft
from bureau.vault import Grant
from helpers import grant_of, write_row_past_the_gateway
from planted_bugs import drop_the_space_filter, skip_the_recheck

SECRET = "The vault code is 7319."
QUESTION = "What is the vault code?"
SPACES = ("detective", "informant", "suspect", "bulletin_board")


def fresh_case() -> str:
    return "t" + secrets.token_hex(8)


@pytest.fixture
def gateway(services: Services) -> MemoryGateway:
    return services.gateway


async def space(services: Services, case_id: str, *spaces: str) -> Grant:
    """Read and write these spaces of a case (a store-level test's case: keys of its own, generation "")."""
    return await grant_of(services, case_id, reads=spaces, writes=spaces[:1])


async def write_secret(gateway: MemoryGateway, grant: Grant, text: str = SECRET):
    return await gateway.write(grant, CardDraft(content=text, topic="vault", kind="secret"))


async def test_same_case_same_space_hits(gateway: MemoryGateway, services: Services) -> None:
    informant = await space(services, fresh_case(), "informant")
    card = await write_secret(gateway, informant)
    found = await gateway.search(informant, QUESTION, 10)
    assert [c.card.id for c in found] == [card.id]
    assert found[0].card.content == SECRET


async def test_other_space_of_same_case_misses(gateway: MemoryGateway, services: Services) -> None:
    case = fresh_case()
    await write_secret(gateway, await space(services, case, "informant"))
    assert await gateway.search(await space(services, case, "detective", "bulletin_board"), QUESTION, 10) == []


async def test_same_space_of_other_case_misses(gateway: MemoryGateway, services: Services) -> None:
    await write_secret(gateway, await space(services, fresh_case(), "informant"))
    assert await gateway.search(await space(services, fresh_case(), "informant"), QUESTION, 10) == []


async def test_get_and_delete_with_wrong_scope_find_and_change_nothing(
    gateway: MemoryGateway, services: Services
) -> None:
    case, other = fresh_case(), fresh_case()
    owner = await space(services, case, "informant")
    card = await write_secret(gateway, owner)
    wrong = [
        await space(services, case, "detective"),
        await space(services, case, "bulletin_board"),
        await space(services, other, "informant"),
    ]
    for grant in wrong:
        assert await gateway.get(grant, card.id) is None
        assert await gateway.delete(grant, card.id) is False
    assert await gateway.get(owner, card.id) == card
    assert await gateway.delete(owner, card.id) is True
    assert await gateway.get(owner, card.id) is None


async def test_malformed_card_ids_are_simply_absent(gateway: MemoryGateway, services: Services) -> None:
    grant = await space(services, fresh_case(), "informant")
    for bad in ("", "abc", "-1", "1" * 40, "12; DROP TABLE"):
        assert await gateway.get(grant, bad) is None


async def test_scores_are_cosine_similarities(gateway: MemoryGateway, services: Services) -> None:
    grant = await space(services, fresh_case(), "informant")
    await write_secret(gateway, grant)
    [found] = await gateway.search(grant, QUESTION, 10)
    embedder = services.gateway.embedder
    expected = cosine(embedder.embed_query(QUESTION), embedder.embed_query(SECRET))
    assert found.score == pytest.approx(expected, abs=1e-3)


async def test_the_stages_listing_is_the_rows_and_the_board_from_one_statement(
    gateway: MemoryGateway, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stage counts every space's cards (ids and metadata) and shows the board's (opened): `listing` gives
    what `rows` and `list_spaces` give, from one store statement where they make two."""
    from bureau.scope.keys import space_scope
    from bureau.scope.vocabulary import Purpose

    case = fresh_case()
    await write_secret(gateway, await space(services, case, "informant"))
    await write_secret(gateway, await space(services, case, "bulletin_board"), "The board says the vault code is 7319.")
    stage = await services.vault.grant(
        case,
        "",
        Purpose.STAGE,
        reads=[space_scope(case, "bulletin_board", "")],
        lists=[space_scope(case, name, "") for name in SPACES],
    )
    nearest = gateway.runner.nearest
    statements = 0
    if nearest is not None:
        real_rows = nearest.rows

        def counted(*args, **kwargs):
            nonlocal statements
            statements += 1
            return real_rows(*args, **kwargs)

        monkeypatch.setattr(nearest, "rows", counted)
    facts, cards = await gateway.listing(stage)
    one_call = statements
    assert (facts, cards) == (await gateway.rows(stage), await gateway.list_spaces(stage))
    assert [len(facts[name]) for name in SPACES] == [0, 1, 0, 1]
    assert [card.content for card in cards["bulletin_board"]] == ["The board says the vault code is 7319."]
    assert set(cards) == {"bulletin_board"}  # the informant's card is counted, never opened
    if nearest is not None:
        assert (one_call, statements - one_call) == (1, 2)


async def test_foreign_rows_from_a_store_filter_bug_are_dropped_and_counted(
    gateway: MemoryGateway, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = fresh_case()
    await write_secret(gateway, await space(services, case, "informant"))
    drop_the_space_filter(gateway, monkeypatch)
    before = gateway.foreign_hits_dropped
    assert await gateway.search(await space(services, case, "detective"), QUESTION, 10) == []
    assert gateway.foreign_hits_dropped == before + 1


async def test_rows_of_one_space_answered_for_another_are_dropped_and_counted(
    gateway: MemoryGateway, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement answers every space of a question at once: a part's rows filed under the other part (a
    bug in reading the parts) must not reach either space."""
    nearest = gateway.runner.nearest
    if nearest is None:
        pytest.skip("one search per space on this backend")
    case = fresh_case()
    await write_secret(gateway, await space(services, case, "informant"))
    await write_secret(gateway, await space(services, case, "bulletin_board"), "The board says the vault code is 7319.")
    real_nearest = nearest.search

    def swapped(queries, limit):
        own, board = real_nearest(queries, limit)
        return [board, own]

    monkeypatch.setattr(nearest, "search", swapped)
    before = gateway.foreign_hits_dropped
    assert await gateway.search(await space(services, case, "informant", "bulletin_board"), QUESTION, 10) == []
    assert gateway.foreign_hits_dropped >= before + 2


async def test_with_the_filter_and_the_recheck_both_gone_nothing_foreign_opens(
    gateway: MemoryGateway, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The third wall alone: the statement forgets the filter and the re-check is switched off; the row of
    another compartment comes back, locked (no key in the request), and scores like noise in the basis asked."""
    case = fresh_case()
    secret = await write_secret(gateway, await space(services, case, "informant"))
    drop_the_space_filter(gateway, monkeypatch)
    skip_the_recheck(monkeypatch)
    before = gateway.locked_rows_seen
    retrieval = await gateway.retrieve(await space(services, case, "detective"), QUESTION, 10)
    assert retrieval.candidates == [] and retrieval.excluded == []
    assert gateway.locked_rows_seen == before + 1
    # The presenter act reports it: its space and its score in the detective's basis, nothing else.
    act = await gateway.retrieve(await space(services, case, "detective"), QUESTION, 10, unfiltered=True)
    [locked] = act.locked
    assert locked.space == "informant" and abs(locked.score) < 0.25
    assert secret.id not in {c.card.id for c in act.candidates}


async def test_the_unfiltered_act_finds_what_the_ordinary_search_finds_in_every_space_it_reads(
    gateway: MemoryGateway, services: Services
) -> None:
    """Each part of the act's statement meets every row of the case, the role's own among the board part's: a
    row asked for under two compartments opens under its own (the answer must be the ordinary route's)."""
    case = fresh_case()
    own = await write_secret(gateway, await space(services, case, "informant"))
    board = await write_secret(
        gateway, await space(services, case, "bulletin_board"), "The board says the vault is shut."
    )
    await write_secret(gateway, await space(services, case, "suspect"), "The vault code is not 7319.")
    ordinary = await gateway.retrieve(await space(services, case, "informant", "bulletin_board"), QUESTION, 10)
    act = await gateway.retrieve(
        await space(services, case, "informant", "bulletin_board"), QUESTION, 10, unfiltered=True
    )
    assert {c.card.id for c in ordinary.candidates} == {own.id, board.id}
    assert [(c.card.id, c.card.content) for c in act.candidates] == [
        (c.card.id, c.card.content) for c in ordinary.candidates
    ]
    assert [row.space for row in act.locked] == ["suspect"]


async def test_with_the_filter_and_the_recheck_both_gone_a_role_still_finds_its_own_cards(
    gateway: MemoryGateway, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement without its filter hands the informant's row to the board's part of the search too, where
    it does not open: its own part must still open it (the grant's key lookups are by compartment and item). So
    must the presenter act's, whose parts all fetch every space."""
    case = fresh_case()
    secret = await write_secret(gateway, await space(services, case, "informant"))
    drop_the_space_filter(gateway, monkeypatch)
    skip_the_recheck(monkeypatch)
    for unfiltered in (False, True):
        grant = await space(services, case, "informant", "bulletin_board")  # a fresh request: no key loaded yet
        retrieval = await gateway.retrieve(grant, QUESTION, 10, unfiltered=unfiltered)
        assert [(c.card.id, c.card.space) for c in retrieval.candidates] == [(secret.id, "informant")], unfiltered


async def test_a_row_moved_into_another_space_neither_opens_nor_scores_there(
    gateway: MemoryGateway, services: Services
) -> None:
    """A bug (or a hand) moves the informant's row into the detective's space, markers and all: the row's text
    is sealed under the informant's item key and its vector is in the informant's basis."""
    case = fresh_case()
    secret = await write_secret(gateway, await space(services, case, "informant"))
    detective = await space(services, case, "detective")
    target = detective.write_scope()
    storage = gateway.runner.client().storage
    row = storage.vector_store.get(int(secret.id))
    metadata = {**(row.payload.get("metadata") or {}), "space": "detective", "scope_key": target.key}
    storage.update_memory(int(secret.id), {"metadata": metadata, "agent_id": "detective"}, user_id=target.user_id)
    moved = (await gateway.rows(detective))["detective"]
    assert [r.id for r in moved] == [secret.id]  # the store holds it under the detective now
    assert await gateway.get(detective, secret.id) is None
    retrieval = await gateway.retrieve(detective, QUESTION, 10)
    assert retrieval.candidates == [] and [c for c in retrieval.excluded if c.card] == []
    assert await gateway.list(detective) == []


async def test_an_unsealed_row_of_an_earlier_version_is_unreadable_never_plaintext(
    gateway: MemoryGateway, services: Services
) -> None:
    case = fresh_case()
    informant = await space(services, case, "informant")
    scope = informant.write_scope()
    vector = np.asarray(services.gateway.embedder.embed_query(SECRET))
    metadata = {"scope_key": scope.key, "case_id": case, "space": "informant", "generation": ""}
    metadata |= {
        "card_memory_type": "long_term_knowledge",
        "created_by": "operator",
        "topic": "vault",
        "kind": "secret",
    }
    write_row_past_the_gateway(gateway, scope.user_id, "informant", SECRET, vector, metadata)
    assert await gateway.list(informant) == []
    assert await gateway.search(informant, QUESTION, 10) == []


async def test_the_same_text_in_two_spaces_points_in_unrelated_directions(services: Services) -> None:
    """Each compartment's basis is its own: one text, two spaces, cosine about 0; within one space every
    cosine is the plaintext's."""
    case = fresh_case()
    detective, informant = await space(services, case, "detective"), await space(services, case, "informant")
    vectors = np.asarray(services.gateway.embedder.embed_documents([SECRET, QUESTION]))
    in_detective, in_informant = detective.rotate("detective", vectors), informant.rotate("informant", vectors)
    assert abs(float(in_detective[0] @ in_informant[0])) < 0.25
    assert float(in_detective[0] @ in_detective[1]) == pytest.approx(float(vectors[0] @ vectors[1]), abs=1e-9)


async def test_erase_case_removes_every_space_and_only_that_case(gateway: MemoryGateway, services: Services) -> None:
    case, neighbour = fresh_case(), fresh_case()
    for name in SPACES:
        await write_secret(gateway, await space(services, case, name))
    kept = await write_secret(gateway, await space(services, neighbour, "informant"))
    await gateway.erase_case(case)
    for name in SPACES:
        assert await gateway.list(await space(services, case, name)) == []
    assert await gateway.list(await space(services, neighbour, "informant")) == [kept]
    assert case not in await gateway.list_case_ids()


async def test_hundreds_of_concurrent_callers_neither_crash_nor_lose_writes(
    gateway: MemoryGateway, services: Services
) -> None:
    """Embedded seekdb crashes under concurrent threads; the gateway's single worker must serialise."""
    case = fresh_case()
    grants = [await space(services, case, name) for name in ("detective", "informant", "bulletin_board")]
    writes = [
        gateway.write(
            grants[i % 3],
            CardDraft(content=f"Ledger entry number {i} about crate {i * 7}.", topic="t", kind="note"),
        )
        for i in range(180)
    ]
    searches = [gateway.search(grants[i % 3], f"crate {i}", 5) for i in range(120)]
    results = await asyncio.gather(*writes, *searches)
    written = results[:180]
    assert len({card.id for card in written}) == 180
    for grant in grants:
        stored = await gateway.list(grant)
        assert len(stored) == 60
        assert all(card.space == grant.read_scopes[0].space and card.case_id == case for card in stored)
    assert await gateway.ping()


async def _behind_a_held_call(gateway: MemoryGateway, *calls) -> list:
    """Queue `calls` on the one memory worker while it is busy, in the given order, then let them run. They run
    in that order only if they share a lane (memory/worker_lanes.py): give it commands, not a screen's reads."""
    hold = threading.Event()
    executor = gateway.runner.executor
    blocker = executor.submit(hold.wait)  # stands for any call already running on the worker
    submit_in, queued = executor.submit_in, []

    def counted(lane, fn, *args):
        queued.append(fn)
        return submit_in(lane, fn, *args)

    executor.submit_in = counted
    tasks = []
    try:
        for call in calls:
            tasks.append(asyncio.ensure_future(call))
            deadline = time.monotonic() + 10
            while len(queued) < len(tasks):  # each call is on the worker's queue before the next is made
                assert time.monotonic() < deadline, "the call never reached the memory worker"
                await asyncio.sleep(0.001)
    finally:
        del executor.submit_in  # the executor's own method again
    hold.set()
    blocker.result(timeout=10)
    return await asyncio.gather(*tasks)


async def test_a_search_queued_before_an_erase_leaves_nothing_of_the_case_cached(
    gateway: MemoryGateway, services: Services
) -> None:
    case = fresh_case()
    card = await write_secret(gateway, await space(services, case, "detective"))
    reading = await space(services, case, "detective", "bulletin_board")
    found, _ = await _behind_a_held_call(gateway, gateway.search(reading, QUESTION, 10), gateway.erase_case(case))
    assert [c.card.id for c in found] == [card.id]  # the search ran first, and read the card
    assert case not in gateway.relevance_vector_cases()
    assert card.id not in gateway.relevance_feature_ids()
    await gateway.search(reading, QUESTION, 10)  # asked again after the erase
    assert case not in gateway.relevance_vector_cases()


async def test_a_search_queued_before_a_delete_leaves_the_card_uncached(
    gateway: MemoryGateway, services: Services
) -> None:
    case = fresh_case()
    informant = await space(services, case, "informant")
    card = await write_secret(gateway, informant)
    found, _ = await _behind_a_held_call(
        gateway, gateway.search(informant, QUESTION, 10), gateway.delete_many(informant, "informant", [card])
    )
    assert [c.card.id for c in found] == [card.id]
    assert card.id not in gateway.relevance_feature_ids()
    assert case not in gateway.relevance_vector_cases()
