"""Migration 0008 (the snapshot's maintained state) on SQLite and on PostgreSQL: a ledger at 0007 holding a
case with interrogations (sealed bodies) is migrated; the case is marked not folded, and its first read folds
the whole record once into exactly what the reference fold gives; the new index serves the newest entry of
one kind; the record's length is counted once into the case row."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from bureau.game.knowledge import answer_view, fold_knowledge, latest_answers, step_of
from bureau.game.scenario_schema import load_builtin_scenarios
from bureau.ledger.database import create_ledger_engine, migrate
from bureau.ledger.models import CaseRow
from bureau.ledger.repository import Ledger
from bureau.scope.keys import case_scopes
from bureau.scope.vocabulary import Purpose
from bureau.vault import Vault
from bureau.vault.opening import VaultLocation, create_vault
from legacy_sealing import seal_v1

SCENARIO = load_builtin_scenarios()[("safe-combination", "en")]


@pytest.fixture(params=["sqlite", "postgresql"])
def old_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """A fresh database at revision 0007 (on PostgreSQL, its own database in the session's cluster)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'bureau.db'}"
    else:
        server = make_url(request.getfixturevalue("postgres_url"))
        name = "migration_" + os.urandom(4).hex()
        admin = create_engine(server, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text(f"CREATE DATABASE {name}"))
        admin.dispose()
        url = server.set(database=name).render_as_string(hide_password=False)
    engine = create_ledger_engine(url)
    migrate(engine, revision="0007")
    yield engine
    engine.dispose()


def trace(role: str, cited: list[tuple[str, str, str]], certainty: str = "known") -> dict[str, object]:
    """A trace as an interrogation writes it: hits (card, space, topic), the cited ones, the certainty."""
    hits = [{"card_id": card, "space": space, "topic": topic, "score": 0.9} for card, space, topic in cited]
    return {"role": role, "hits": hits, "evidence": [card for card, _, _ in cited], "certainty": certainty}


def old_case(engine: Engine) -> str:
    """A case as 0007 knew it: the case row, its key in `case_keys`, four interrogations with bodies sealed
    under that key (`sealed:v1:`), written as the old code wrote them."""
    case_id = "migr" + os.urandom(6).hex()
    key = os.urandom(32)
    asked = [
        ("informant", "What is the safe combination?", "It is 4-1-7.", [("c1", "informant", "safe_combination")]),
        ("suspect", "Where is the safe hidden?", "I do not know.", []),
        ("detective", "What time was the break-in?", "Near midnight.", [("c2", "bulletin_board", "break_in_timeline")]),
        (
            "suspect",
            "What is your alibi for the night of the break-in?",
            "The opera.",
            [("c3", "suspect", "suspect_alibi")],
        ),
    ]
    now = datetime.now(UTC)
    with Session(engine) as session, session.begin():
        session.execute(
            text(
                "INSERT INTO cases (id, scenario_id, language, status, version, created_at, updated_at)"
                " VALUES (:id, 'safe-combination', 'en', 'active', 5, :now, :now)"
            ),
            {"id": case_id, "now": now},
        )
        session.execute(
            text("INSERT INTO case_keys (case_id, key, created_at) VALUES (:id, :key, :now)"),
            {"id": case_id, "key": key, "now": now},
        )
        for number, (role, question, answer, cited) in enumerate(asked):
            body = seal_v1(key, case_id, json.dumps({"question": question, "answer": answer}))
            session.execute(
                text(
                    "INSERT INTO case_record (case_id, kind, roles, audience, summary, body, created_at)"
                    " VALUES (:case, 'interrogation', :roles, :audience, :summary, :body, :at)"
                ),
                {
                    "case": case_id,
                    "roles": json.dumps([role]),
                    "audience": role,
                    "summary": json.dumps({"trace": trace(role, cited)}),
                    "body": body,
                    "at": now + timedelta(seconds=number),
                },
            )
    return case_id


async def bound_and_resealed(ledger: Ledger, vault: Vault, case_id: str) -> None:
    """What a start does with an old ledger (bootstrap/vault_binding.py), then the case's re-seal of its texts
    (no store rows here: game/reseal.py does those too)."""
    vault.adopt_case_keys(await ledger.vault_binding.keys_to_move())
    await ledger.vault_binding.bind_vault(vault.vault_id)
    await ledger.vault_binding.forget_case_keys()
    case = await ledger.cases.get_case(case_id)
    assert case is not None
    vault.compartmentalise(case_id, case.generation)
    grant = await vault.reseal_grant(case_id, case.generation)
    assert await ledger.resealing.reseal_texts(case_id, grant) == 4
    assert await ledger.resealing.reseal_texts(case_id, grant) == 0  # run again: nothing left to re-seal
    grant.close()
    vault.retire_legacy(case_id)


def test_an_old_case_is_marked_unfolded_and_folded_once_on_its_first_read(old_engine: Engine, tmp_path: Path) -> None:
    case_id = old_case(old_engine)
    migrate(old_engine)

    tables = inspect(old_engine).get_table_names()
    assert {"case_knowledge", "case_latest_answers"} <= set(tables)
    indexes = {ix["name"]: ix["column_names"] for ix in inspect(old_engine).get_indexes("case_record")}
    assert indexes["ix_case_record_case_kind"] == ["case_id", "kind", "id"]
    with Session(old_engine) as session:
        assert session.scalar(select(CaseRow.knowledge_folded).where(CaseRow.id == case_id)) is False
        assert session.scalar(text("SELECT count(*) FROM case_knowledge")) == 0
        assert session.scalar(select(CaseRow.record_entries).where(CaseRow.id == case_id)) == 4  # counted once

    ledger = Ledger(old_engine)
    steps = step_of(SCENARIO.key_facts)  # handed to each call that may fold
    vault = create_vault(
        VaultLocation(tmp_path / "vault", f"sqlite:///{tmp_path / 'vault' / 'vault.db'}", tmp_path / "vault" / "kek"),
        "v1",
    )

    async def read() -> None:
        await bound_and_resealed(ledger, vault, case_id)
        case = await ledger.cases.get_case(case_id)
        assert case is not None
        grant = await vault.grant(
            case_id, case.generation, Purpose.OPERATOR, reads=case_scopes(case_id, case.generation), record_reads=True
        )
        entries = await ledger.record.interrogations(case_id, grant)
        assert len(entries) == 4
        maintained = await ledger.knowledge.case_knowledge(case_id, grant, steps)
        assert maintained.knowledge == fold_knowledge(SCENARIO.key_facts, entries)
        assert maintained.knowledge["suspect"] == {"safe_location": "unknown", "alibi": "own_memory"}
        assert {r: answer_view(a) for r, a in maintained.answers.items()} == latest_answers(entries)
        assert maintained.answers["suspect"].answer == "The opera."
        _, newest, total = await ledger.cases.record_page(case_id, None, 2, grant)
        assert [e.id for e in newest] == [entries[3].id, entries[2].id] and total == 4
        last = (await ledger.cases.case_view(case_id, grant=grant, steps=steps)).last_interrogation
        assert last is not None and last.body["answer"] == "The opera."
        grant.close()

    asyncio.run(read())
    with Session(old_engine) as session:
        assert session.scalar(select(CaseRow.knowledge_folded).where(CaseRow.id == case_id)) is True
        stored = session.scalars(text("SELECT answer FROM case_latest_answers")).all()
        bodies = session.scalars(text("SELECT body FROM case_record")).all()
        keys_left = session.scalar(text("SELECT count(*) FROM case_keys"))
    # No copy of an answer beside the record; every body re-sealed under a key of its own; no key in the ledger.
    assert stored == ["", "", ""]
    assert bodies and all(b.startswith("sealed:v2:") for b in bodies) and keys_left == 0
    vault.close()


def test_a_new_case_is_maintained_from_its_start(old_engine: Engine) -> None:
    migrate(old_engine)
    ledger = Ledger(old_engine)

    async def create() -> str:
        case_id = "newc" + os.urandom(6).hex()
        await ledger.cases.create_case(case_id, "safe-combination", "en")
        return case_id

    case_id = asyncio.run(create())
    with Session(old_engine) as session:
        assert session.scalar(select(CaseRow.knowledge_folded).where(CaseRow.id == case_id)) is True
