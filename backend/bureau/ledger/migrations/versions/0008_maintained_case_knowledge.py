"""the snapshot's maintained state: case_knowledge, case_latest_answers, cases.knowledge_folded; the record's
length (cases.record_entries, counted here once); an index for the newest record entry of one kind

Existing cases are marked not folded (`knowledge_folded` false): the matrix's cells need the scenario's key
facts, which live in the game, above the ledger, so a migration cannot compute them. Each such case is folded
once, on its first snapshot read, under its row lock (`ledger/case_knowledge.py: KnowledgeRepository.case_knowledge`).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Existing rows get false (fold on first read); the application writes true for every new case. A plain
    # ADD COLUMN, never a batch copy of `cases`: on SQLite that drops the table, and the foreign keys'
    # ON DELETE CASCADE would take every case's record with it.
    op.add_column("cases", sa.Column("knowledge_folded", sa.Boolean(), server_default=sa.false(), nullable=False))
    # The record's length, counted once here; the application keeps it from now on.
    op.add_column("cases", sa.Column("record_entries", sa.Integer(), server_default="0", nullable=False))
    cases, record = (
        sa.table("cases", sa.column("id"), sa.column("record_entries")),
        sa.table("case_record", sa.column("case_id")),
    )
    counted = sa.select(sa.func.count()).where(record.c.case_id == cases.c.id).scalar_subquery()
    op.execute(cases.update().values(record_entries=counted))
    op.create_table(
        "case_knowledge",
        sa.Column("case_id", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("fact_id", sa.String(length=64), nullable=False),
        sa.Column("cell", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("case_id", "role", "fact_id"),
    )
    op.create_table(
        "case_latest_answers",
        sa.Column("case_id", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("entry_id", sa.Integer(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("asked_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("case_id", "role"),
    )
    op.create_index("ix_case_record_case_kind", "case_record", ["case_id", "kind", "id"])


def downgrade() -> None:
    op.drop_index("ix_case_record_case_kind", table_name="case_record")
    op.drop_table("case_latest_answers")
    op.drop_table("case_knowledge")
    op.drop_column("cases", "record_entries")
    op.drop_column("cases", "knowledge_folded")
