"""The memory policy through the gateway over the real store (PowerMem + embedded seekdb): every
type × creator × path on write, retention, and the read policy (expiry with purge, validation now)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

import pytest

from bureau.api.deps import Services
from bureau.memory.gateway import MemoryGateway
from bureau.memory.types import CardDraft
from bureau.scope.content_policy import ContentPolicy
from bureau.scope.memory_policy import EXPIRED, FAILED_VALIDATION, MemoryPolicyError
from bureau.scope.memory_policy import WritePath as P
from bureau.scope.vocabulary import CreatedBy as C
from bureau.scope.vocabulary import MemoryType as T
from bureau.vault import Grant
from helpers import grant_of
from policy_table import ALLOWED, CLEAN, COMBINATIONS, key_for


@pytest.fixture
def gateway(services: Services) -> MemoryGateway:
    return services.gateway


def fresh_case() -> str:
    return "p" + secrets.token_hex(8)


async def own(services: Services, case_id: str, space: str) -> Grant:
    return await grant_of(services, case_id, reads=[space], writes=[space])


async def test_the_gateway_applies_the_table_to_every_write(gateway: MemoryGateway, services: Services) -> None:
    """Allowed writes persist; forbidden ones raise before anything reaches the store."""
    case = fresh_case()
    scope = await own(services, case, "detective")
    persisted = 0
    for memory_type, creator, path in COMBINATIONS:
        draft = CardDraft(
            content=f"{CLEAN} ({memory_type}, {creator}, {path})",
            topic="policy",
            kind="note",
            memory_type=memory_type,
            created_by=creator,
            path=path,
            key=key_for(memory_type),
        )
        if (memory_type, creator, path) in ALLOWED:
            card = await gateway.write(scope, draft)
            persisted += 1
            assert (card.memory_type, card.created_by, card.key) == (memory_type, creator, key_for(memory_type))
            assert card.owner == scope.write_scope().key
        else:
            with pytest.raises(MemoryPolicyError):
                await gateway.write(scope, draft)
    stored = await gateway.list(scope)
    assert len(stored) == persisted == len(ALLOWED)
    await gateway.erase_case(case)


async def test_short_lived_types_get_their_configured_retention(gateway: MemoryGateway, services: Services) -> None:
    scope = await own(services, fresh_case(), "suspect")
    before = datetime.now(UTC)
    session = await gateway.write(
        scope,
        CardDraft("I was asked: where?", "session", "note", T.SESSION, created_by=C.SYSTEM, path=P.SYSTEM),
    )
    knowledge = await gateway.write(scope, CardDraft(CLEAN, "courier", "note"))
    assert session.expires_at is not None
    expected = before + gateway.retention.by_name["session"]
    assert abs((session.expires_at - expected).total_seconds()) < 5
    assert knowledge.expires_at is None
    await gateway.erase_case(scope.case_id)


async def test_expired_records_are_invisible_and_purged_on_read(gateway: MemoryGateway, services: Services) -> None:
    scope = await own(services, fresh_case(), "informant")
    past = datetime.now(UTC) - timedelta(seconds=1)
    expired = await gateway.write(scope, CardDraft("The vault code is 7319.", "vault", "secret", expires_at=past))
    live = await gateway.write(scope, CardDraft("The vault is behind the painting.", "vault", "secret"))
    retrieval = await gateway.retrieve(scope, "What is the vault code?", 10)
    assert [c.card.id for c in retrieval.candidates] == [live.id]
    assert [(e.card.id, e.reason) for e in retrieval.excluded if e.card] == [(expired.id, EXPIRED)]
    # purged: not even the raw store has it any more
    where = scope.write_scope()
    raw = gateway.runner.client().get_all(user_id=where.user_id, agent_id=where.agent_id, limit=100)["results"]
    assert {str(r["id"]) for r in raw} == {live.id}
    assert await gateway.list(scope) == [live]
    await gateway.erase_case(scope.case_id)


async def test_a_record_failing_a_pattern_added_later_is_excluded_at_read_time(
    gateway: MemoryGateway, services: Services
) -> None:
    scope = await own(services, fresh_case(), "informant")
    card = await gateway.write(scope, CardDraft("The courier's codename is Nightjar.", "courier", "secret"))
    question = "What is the courier's codename?"
    assert [c.card.id for c in await gateway.search(scope, question, 10)] == [card.id]
    original = gateway.screening
    gateway.screening = ContentPolicy.with_patterns([r"\bnightjar\b"])
    try:
        retrieval = await gateway.retrieve(scope, question, 10)
    finally:
        gateway.screening = original
    assert retrieval.candidates == []
    assert [(e.card.id, e.reason) for e in retrieval.excluded if e.card] == [(card.id, FAILED_VALIDATION)]
    assert await gateway.list(scope) == [card]  # still stored (the operator can see and delete it)
    await gateway.erase_case(scope.case_id)


def test_only_a_card_that_is_never_evidence_may_be_indexed_by_another_text() -> None:
    with pytest.raises(ValueError, match="indexed by its own content"):
        CardDraft("The vault code is 7319.", "vault", "secret", index_text="What is the vault code?")
    session = CardDraft("I was asked: where?", "session", "note", T.SESSION, index_text="where?")
    assert session.indexed_by == "where?"
