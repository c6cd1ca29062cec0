"""limits shared by every instance: passcode failures, live stream slots, usage counters

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "passcode_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("failed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_passcode_failures_key", "passcode_failures", ["key_hash", "failed_at"])
    op.create_table(
        "stream_slots",
        sa.Column("session_key", sa.String(length=64), nullable=False),
        sa.Column("slot", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("owner", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("session_key", "slot"),
    )
    op.create_table(
        "usage_counters",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("used", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("usage_counters")
    op.drop_table("stream_slots")
    op.drop_index("ix_passcode_failures_key", table_name="passcode_failures")
    op.drop_table("passcode_failures")
