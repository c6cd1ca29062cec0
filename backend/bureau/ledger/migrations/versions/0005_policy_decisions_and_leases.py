"""memory-policy audit trail and maintenance leases

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "policy_decisions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("case_id", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=24), nullable=False),
        sa.Column("code", sa.String(length=48), nullable=False),
        sa.Column("detail", sa.String(length=120), nullable=False),
        sa.Column("memory_type", sa.String(length=32), nullable=False),
        sa.Column("creator", sa.String(length=16), nullable=False),
        sa.Column("space", sa.String(length=16), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("policy_decisions", schema=None) as batch_op:
        batch_op.create_index("ix_policy_decisions_case", ["case_id", "id"], unique=False)
    op.create_table(
        "maintenance_leases",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("maintenance_leases")
    with op.batch_alter_table("policy_decisions", schema=None) as batch_op:
        batch_op.drop_index("ix_policy_decisions_case")
    op.drop_table("policy_decisions")
