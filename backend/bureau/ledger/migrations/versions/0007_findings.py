"""findings: corroborated knowledge and its support mapping (keyed pseudonyms only)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "findings",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("case_id", sa.String(length=64), nullable=False),
        sa.Column("claim_hash", sa.String(length=64), nullable=False),
        sa.Column("slot", sa.String(length=64), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("public_card_id", sa.String(length=32), nullable=True),
        sa.Column("claim", sa.Text(), nullable=False),
        sa.Column("support", sa.Integer(), nullable=False),
        sa.Column("leave_one_out", sa.Integer(), nullable=False),
        sa.Column("min_support", sa.Integer(), nullable=False),
        sa.Column("contradictions", sa.Integer(), nullable=False),
        sa.Column("trust", sa.String(length=16), nullable=False),
        sa.Column("review_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("promoted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("withdrawn_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("case_id", "slot", name="uq_finding_slot"),
    )
    op.create_index("ix_findings_case", "findings", ["case_id", "created_at"])
    op.create_table(
        "finding_support",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("finding_id", sa.String(length=32), nullable=False),
        sa.Column("case_id", sa.String(length=64), nullable=False),
        sa.Column("card", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["finding_id"], ["findings.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_finding_support_case_card", "finding_support", ["case_id", "card"])
    op.create_index("ix_finding_support_finding_id", "finding_support", ["finding_id"])


def downgrade() -> None:
    op.drop_index("ix_finding_support_finding_id", table_name="finding_support")
    op.drop_index("ix_finding_support_case_card", table_name="finding_support")
    op.drop_table("finding_support")
    op.drop_index("ix_findings_case", table_name="findings")
    op.drop_table("findings")
