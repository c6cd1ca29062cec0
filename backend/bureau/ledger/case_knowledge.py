"""The snapshot's maintained state: the who-knows-what matrix and each role's latest answer, kept in the
ledger as the record grows, so reading them costs the same at 10 000 questions as at none.

Every change is written in the transaction of the command that causes it: an interrogation applies its one
step; a reset and an erase forget the rows. Erasing a card (its entries lose their text) and a case older than
this state mark the case as not folded, and its next read (an operator's, whose grant reads the record) folds
its interrogations again: the fold reads the questions, which an erasure's grant may not open. A step is the
game's (`StepOf`, handed in by each call that may step or fold: the cells need the scenario's key facts, which
the ledger does not know; the ledger holds no game code between calls). A latest answer's text is the body of
the record entry it points at, opened with that body's own key: it has no ciphertext of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, update
from sqlalchemy.orm import Session

from bureau.ledger.models import CaseRow, KnowledgeCellRow, LatestAnswerRow, table
from bureau.ledger.record import INTERROGATION, AnyRow, Reader, RecordEntry, open_bodies, read_bodies, read_entries
from bureau.ledger.transactions import CaseMissingError, Repository, aware
from bureau.vault.grants import Grant


@dataclass(frozen=True, slots=True)
class AnswerStep:
    """What one interrogation adds: the cells its answer speaks to, and the role's new latest answer
    (`summary`: content-free; `answer`: the text)."""

    role: str
    cells: dict[str, str]
    summary: dict[str, Any]
    answer: str


@dataclass(frozen=True, slots=True)
class LatestAnswer:
    role: str
    entry_id: int
    summary: dict[str, Any]
    answer: str  # "" once dropped (a cited card was erased), or without a grant that reads the record
    asked_at: datetime


@dataclass(frozen=True, slots=True)
class KnowledgeState:
    knowledge: dict[str, dict[str, str]] = field(default_factory=dict)
    answers: dict[str, LatestAnswer] = field(default_factory=dict)


_answer_table, _cell_table = table(LatestAnswerRow), table(KnowledgeCellRow)
_answers, _cells = _answer_table.c, _cell_table.c
ROLE_CELLS = select(_cells.fact_id, _cells.cell).where(
    _cells.case_id == bindparam("case_id"), _cells.role == bindparam("role")
)
INSERT_CELL = insert(_cell_table)
UPDATE_CELL = (  # bind names other than the columns': an UPDATE reserves those for its SET clause
    update(_cell_table)
    .where(
        _cells.case_id == bindparam("b_case_id"),
        _cells.role == bindparam("b_role"),
        _cells.fact_id == bindparam("b_fact_id"),
    )
    .values(cell=bindparam("b_cell"))
)
HAS_ANSWER = select(_answers.role).where(_answers.case_id == bindparam("case_id"), _answers.role == bindparam("role"))
INSERT_ANSWER = insert(_answer_table)
UPDATE_ANSWER = (
    update(_answer_table)
    .where(_answers.case_id == bindparam("b_case_id"), _answers.role == bindparam("b_role"))
    .values(
        entry_id=bindparam("b_entry_id"),
        summary=bindparam("b_summary"),
        answer=bindparam("b_answer"),
        asked_at=bindparam("b_asked_at"),
    )
)
LATEST_ANSWERS = select(_answers.role, _answers.entry_id, _answers.summary, _answers.asked_at).where(
    _answers.case_id == bindparam("case_id")
)
CELLS = select(_cells.role, _cells.fact_id, _cells.cell).where(_cells.case_id == bindparam("case_id"))

# The game's step for one interrogation entry of the record (None: the entry names no role): a value each call
# that steps or folds a case's maintained state is given, for that case's scenario.
StepOf = Callable[[RecordEntry], AnswerStep | None]


def apply_step(session: Session, case_id: str, entry_id: int, asked_at: datetime, step: AnswerStep) -> None:
    """One interrogation committed: its cells replace the role's old ones, its answer the role's last. The
    role's rows read once, then only what changed written (no ORM objects: this runs in every question's
    commit)."""
    key = {"case_id": case_id, "role": step.role}
    held: dict[str, str] = {fact_id: cell for fact_id, cell in session.execute(ROLE_CELLS, key)}
    added = [{**key, "fact_id": fact_id, "cell": cell} for fact_id, cell in step.cells.items() if fact_id not in held]
    changed = [
        {**key, "fact_id": fact_id, "cell": cell}
        for fact_id, cell in step.cells.items()
        if fact_id in held and held[fact_id] != cell
    ]
    if added:
        session.execute(INSERT_CELL, added)
    if changed:
        session.execute(UPDATE_CELL, [{f"b_{name}": value for name, value in cell.items()} for cell in changed])
    answer = {**key, "entry_id": entry_id, "summary": step.summary, "answer": "", "asked_at": asked_at}
    if session.execute(HAS_ANSWER, key).first() is None:
        session.execute(INSERT_ANSWER, answer)
    else:
        session.execute(UPDATE_ANSWER, {f"b_{name}": value for name, value in answer.items()})


def forget_knowledge(session: Session, case_id: str) -> None:
    """A reset or an erase: the case has asked nothing."""
    session.execute(delete(KnowledgeCellRow).where(KnowledgeCellRow.case_id == case_id))
    session.execute(delete(LatestAnswerRow).where(LatestAnswerRow.case_id == case_id))


def refold_knowledge(session: Session, case_id: str, step_of: StepOf, grant: Grant) -> None:
    """Fold every interrogation of the record again, once, into fresh rows (the questions opened through
    `grant`). For the two changes a single step cannot express: a case older than the maintained state, and
    an entry that lost its text."""
    forget_knowledge(session, case_id)
    session.flush()
    knowledge: dict[str, dict[str, str]] = {}
    latest: dict[str, tuple[RecordEntry, AnswerStep]] = {}
    for entry in read_entries(session, case_id, kind=INTERROGATION, grant=grant):
        step = step_of(entry)
        if step is not None:
            knowledge.setdefault(step.role, {}).update(step.cells)
            latest[step.role] = (entry, step)
    session.add_all(
        KnowledgeCellRow(case_id=case_id, role=role, fact_id=fact_id, cell=cell)
        for role, cells in knowledge.items()
        for fact_id, cell in cells.items()
    )
    session.add_all(
        LatestAnswerRow(
            case_id=case_id,
            role=role,
            entry_id=entry.id,
            summary=step.summary,
            answer="",
            asked_at=entry.created_at,
        )
        for role, (entry, step) in latest.items()
    )
    session.flush()


@dataclass(frozen=True, slots=True)
class KnowledgeRows:
    """The maintained state as stored: its latest answers' texts still sealed (a view opens them together with
    its other texts, in one vault statement)."""

    answers: list[AnyRow]
    cells: list[AnyRow]
    bodies: dict[int, str]  # entry id -> its sealed body


def read_knowledge_rows(reader: Reader, case_id: str) -> KnowledgeRows:
    """A handful of rows per role, whatever the record's length; each latest answer's text is its entry's body
    (one more read of at most one entry per role)."""
    answers = list(reader.execute(LATEST_ANSWERS, {"case_id": case_id}))
    bodies = read_bodies(reader, case_id, [row.entry_id for row in answers])
    cells = list(reader.execute(CELLS, {"case_id": case_id}))
    return KnowledgeRows(answers, cells, bodies)


def knowledge_state(rows: KnowledgeRows, opened: dict[int, dict[str, Any]]) -> KnowledgeState:
    """The matrix and latest answers from their rows and the opened bodies (by entry id; {} what did not open)."""
    answers = {
        row.role: LatestAnswer(
            row.role,
            row.entry_id,
            dict(row.summary),
            str(opened.get(row.entry_id, {}).get("answer", "")),
            aware(row.asked_at),
        )
        for row in rows.answers
    }
    # A role that was asked has a row of the matrix, even when no answer of it spoke to a fact.
    knowledge: dict[str, dict[str, str]] = {role: {} for role in answers}
    for cell in rows.cells:
        knowledge.setdefault(cell.role, {})[cell.fact_id] = cell.cell
    return KnowledgeState(knowledge, answers)


def read_knowledge(reader: Reader, case_id: str, grant: Grant | None) -> KnowledgeState:
    """The maintained state as it is, its latest answers' texts opened through `grant`."""
    rows = read_knowledge_rows(reader, case_id)
    ids = list(rows.bodies)
    return knowledge_state(rows, dict(zip(ids, open_bodies(grant, [rows.bodies[i] for i in ids]), strict=True)))


def is_folded(session: Session, case_id: str) -> bool:
    return bool(session.scalar(select(CaseRow.knowledge_folded).where(CaseRow.id == case_id)))


def step_forward(session: Session, case: AnyRow, entry: RecordEntry, steps: StepOf | None) -> None:
    """An interrogation entry was appended to a case (`case`: its row as the command read it): apply its step
    (`steps`: the case scenario's, from the caller), in the same transaction. Without steps, the case is folded
    whole on its next read."""
    if not case.knowledge_folded:
        return  # folded whole on its next read
    if steps is None:
        session.execute(update(table(CaseRow)).where(table(CaseRow).c.id == case.id).values(knowledge_folded=False))
        return
    step = steps(entry)
    if step is not None:
        apply_step(session, case.id, entry.id, entry.created_at, step)


def fold_again(session: Session, case_id: str) -> None:
    """Entries of a case lost their text: its next read folds it again (it reads the questions)."""
    case = session.get(CaseRow, case_id)
    if case is not None:
        case.knowledge_folded = False


class KnowledgeRepository(Repository):
    """The maintained matrix and latest answers of a case (beneath the cases repository, which steps them in
    its own transactions)."""

    async def case_knowledge(self, case_id: str, grant: Grant, steps: StepOf) -> KnowledgeState:
        """The case's matrix and latest answers. A case not folded (older than the maintained state, or one of
        its entries lost its text) is folded once, here, with `steps` (its scenario's), under its row lock (two
        first reads fold it once; a command committing meanwhile waits)."""

        def read(session: Session) -> KnowledgeState | None:
            return read_knowledge(session, case_id, grant) if is_folded(session, case_id) else None

        found = await self.runner.read(read)
        if found is not None:
            return found

        def fold(session: Session) -> KnowledgeState:
            case = session.get(CaseRow, case_id, with_for_update=True)
            if case is None:
                raise CaseMissingError(case_id)
            if not case.knowledge_folded:
                refold_knowledge(session, case_id, steps, grant)
                case.knowledge_folded = True
            return read_knowledge(session, case_id, grant)

        return await self.runner.run(fold)
