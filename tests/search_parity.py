"""The gateway's own seekdb search against PowerMem's, card by card: shared by the embedded store's test and
the seekdb server's (tests/unit/memory/test_seekdb_search.py, tests/e2e/test_backends.py)."""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np
import pytest

from bureau.memory.gateway import MemoryGateway
from bureau.memory.seekdb_search import SpaceQuery
from bureau.memory.types import CardDraft
from bureau.scope.keys import space_scope
from bureau.scope.vocabulary import Purpose
from bureau.vault import Grant, Vault

CARDS = [
    "The vault code is 7319.",
    "Mrs Hale keeps the ledger in the blue cabinet.",
    "The night porter left by the east gate at midnight.",
    "Crate 44 holds forged passports.",
    "The safe combination is 12-7-33.",
    "Nobody saw the courier after the storm.",
]
QUESTIONS = [
    "What is the vault code?",
    "Where is the ledger kept?",
    "Who left at midnight?",
    "What is in crate 44?",
    "Who moved crate 91?",
]


def drafts(texts: list[str]) -> list[CardDraft]:
    return [CardDraft(content=text, topic="t", kind="k") for text in texts]


async def writing(vault: Vault, case: str, space: str) -> Grant:
    return await vault.grant(case, "", Purpose.CASE_SETUP, writes=[space_scope(case, space, "")])


async def case_with_cards(gateway: MemoryGateway, vault: Vault, filler: int = 0) -> str:
    """Six cards in the detective's space (and `filler` more), three on the board, six with the informant."""
    case = "t" + secrets.token_hex(8)
    await vault.create_case(case, "")
    await gateway.write_many(await writing(vault, case, "detective"), drafts(CARDS))
    notes = [f"Entry {i}: crate {i * 7} moved to bay {i % 13} by porter {i % 5}." for i in range(filler)]
    for start in range(0, filler, 500):
        await gateway.write_many(await writing(vault, case, "detective"), drafts(notes[start : start + 500]))
    await gateway.write_many(await writing(vault, case, "bulletin_board"), drafts(CARDS[:3]))
    await gateway.write_many(await writing(vault, case, "informant"), drafts(CARDS))
    return case


async def assert_search_matches_powermem(gateway: MemoryGateway, vault: Vault, case: str) -> None:
    """Same rows, same order, same cosine (PowerMem reports 1 - distance / 2), same metadata and text, for
    the detective's space and the board in one statement (each with the question in its own basis), and for
    the whole case (no agent, the detective's basis)."""
    nearest = gateway.runner.nearest
    assert nearest is not None
    storage = gateway.runner.client().storage
    spaces = [space_scope(case, space, "") for space in ("detective", "bulletin_board")]
    grant = await vault.grant(case, "", Purpose.OPERATOR, reads=spaces)

    def both(question: str) -> tuple[list[Any], list[Any]]:
        plain = np.asarray(gateway.embedder.embed_query(question))
        vectors = [grant.rotate(space, plain).tolist() for space in ("detective", "bulletin_board")]
        queries = [SpaceQuery(s.user_id, s.agent_id, v) for s, v in zip(spaces, vectors, strict=True)]
        queries.append(SpaceQuery(spaces[0].user_id, None, vectors[0]))
        ours = nearest.search(queries, 4)
        theirs = [
            storage.search_memories(query_embedding=q.vector, user_id=q.user_id, agent_id=q.agent_id, limit=4)
            for q in queries
        ]
        return ours, theirs

    for question in QUESTIONS:
        ours, theirs = await gateway.runner.run(both, question)
        assert [len(space) for space in ours] == [4, 3, 4]
        for mine, powermem in zip(ours, theirs, strict=True):
            assert [str(h.item["id"]) for h in mine] == [str(row["id"]) for row in powermem]
            for hit, row in zip(mine, powermem, strict=True):
                assert hit.cosine == pytest.approx(2 * row["score"] - 1, abs=1e-6)
                assert hit.item["metadata"] == {k: v for k, v in row["metadata"].items() if not k.startswith("_")}
                shown = (hit.item["memory"], hit.item["user_id"], hit.item["agent_id"])
                assert shown == (row["memory"], row["user_id"], row["agent_id"])
            assert [h.cosine for h in mine] == sorted((h.cosine for h in mine), reverse=True)
    grant.close()
