"""Role answers: each role's latest answer and its matrix row, written in the interrogation's transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from bureau.ledger.models import RoleAnswerRow


@dataclass(frozen=True, slots=True)
class RoleAnswerRecord:
    case_id: str
    role: str
    answer: dict[str, Any]
    # The matrix cells this answer settles; merged over the role's earlier ones.
    knowledge: dict[str, str]
    updated_at: datetime


def store_role_answer(session: Session, record: RoleAnswerRecord) -> None:
    row = session.get(RoleAnswerRow, (record.case_id, record.role))
    if row is None:
        session.add(
            RoleAnswerRow(
                case_id=record.case_id,
                role=record.role,
                answer=record.answer,
                knowledge=dict(record.knowledge),
                updated_at=record.updated_at,
            )
        )
        return
    row.answer = record.answer
    row.knowledge = {**row.knowledge, **record.knowledge}
    row.updated_at = record.updated_at


def role_answers(session: Session, case_id: str) -> list[RoleAnswerRecord]:
    rows = session.scalars(select(RoleAnswerRow).where(RoleAnswerRow.case_id == case_id).order_by(RoleAnswerRow.role))
    return [RoleAnswerRecord(r.case_id, r.role, dict(r.answer), dict(r.knowledge), r.updated_at) for r in rows]


def forget_role_answers(session: Session, case_id: str) -> None:
    session.execute(delete(RoleAnswerRow).where(RoleAnswerRow.case_id == case_id))
