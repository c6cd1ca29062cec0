"""Deployment-wide limits in the ledger: two `Ledger` objects over one database stand for two instances."""

from __future__ import annotations

import asyncio

from bureau.answering.role_voice.budget import CallBudget
from bureau.config import Settings
from bureau.ledger.repository import Ledger


async def test_passcode_failures_are_counted_for_every_instance_and_never_store_the_address(engine) -> None:
    a, b = Ledger(engine), Ledger(engine)
    for ledger in (a, b, a):
        await ledger.limits.record_failure("203.0.113.7")
    count, oldest = await b.limits.recent_failures("203.0.113.7", 300)
    assert count == 3 and oldest is not None
    assert (await a.limits.recent_failures("203.0.113.8", 300))[0] == 0
    assert (await a.limits.recent_failures("203.0.113.7", 0.0))[0] == 0  # outside the window
    with engine.connect() as connection:
        stored = connection.exec_driver_sql("SELECT key_hash FROM passcode_failures").scalars().all()
    assert stored and all("203.0.113" not in key for key in stored)
    await b.limits.clear_failures("203.0.113.7")
    assert (await a.limits.recent_failures("203.0.113.7", 300))[0] == 0


async def test_stream_slots_cap_a_session_across_instances_and_expire_with_a_dead_one(engine) -> None:
    a, b = Ledger(engine), Ledger(engine)
    claims = await asyncio.gather(
        *(ledger.limits.claim_stream_slot("s1", 4, name, 30) for ledger, name in [(a, "a"), (b, "b")] * 3)
    )
    assert sorted(c for c in claims if c is not None) == [0, 1, 2, 3]
    assert claims.count(None) == 2  # six tries, cap four, whichever instance asked
    assert await a.limits.claim_stream_slot("s2", 4, "a", 30) == 0  # another session has its own cap
    held_by_b = [slot for slot, name in zip(claims, ["a", "b"] * 3, strict=True) if name == "b" and slot is not None]
    await a.limits.release_stream_slot("s1", held_by_b[0], "a")  # not A's lease: nothing released
    assert await a.limits.claim_stream_slot("s1", 4, "a", 30) is None
    await b.limits.release_stream_slot("s1", held_by_b[0], "b")
    assert await a.limits.claim_stream_slot("s1", 4, "a", 30) == held_by_b[0]
    # Instance B dies (no renewals): its leases run out and others may take the slots.
    assert await b.limits.claim_stream_slot("s3", 1, "b", 30) == 0
    assert await a.limits.claim_stream_slot("s3", 1, "a", 30) is None
    await b.limits.renew_stream_slots("b", -1)  # as if its last renewal was long ago
    assert await a.limits.claim_stream_slot("s3", 1, "a", 30) == 0


async def test_the_model_request_budget_is_spent_once_for_the_whole_deployment(engine) -> None:
    settings = Settings(_env_file=None, llm_request_budget=5)
    budgets = [CallBudget(settings, slot_wait_s=0.1, degraded_after=3, shared=Ledger(engine).limits) for _ in range(2)]
    taken = await asyncio.gather(*(budgets[n % 2].take() for n in range(12)))
    assert taken.count(True) == 5  # not 5 per instance
    assert await Ledger(engine).limits.budget_used("llm_requests") == 5
    assert all(budget.exhausted for budget in budgets)
