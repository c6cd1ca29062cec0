"""case record replaces the last-trace slot; per-case sealing keys

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "case_record",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("case_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=24), nullable=False),
        sa.Column("roles", sa.JSON(), nullable=False),
        sa.Column("audience", sa.String(length=48), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_case_record_case", "case_record", ["case_id", "id"])
    op.create_table(
        "case_keys",
        sa.Column("case_id", sa.String(length=64), nullable=False),
        sa.Column("key", sa.LargeBinary(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("case_id"),
    )
    # The last traces carried no text (card ids, topics, scores), so they become record entries as they are,
    # with an empty sealed body: an old case keeps its last X-ray.
    last_traces = sa.table(
        "last_traces",
        sa.column("case_id", sa.String),
        sa.column("role", sa.String),
        sa.column("trace", sa.JSON),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    rows = op.get_bind().execute(sa.select(last_traces)).mappings().all()
    record = sa.table(
        "case_record",
        sa.column("case_id", sa.String),
        sa.column("kind", sa.String),
        sa.column("roles", sa.JSON),
        sa.column("audience", sa.String),
        sa.column("summary", sa.JSON),
        sa.column("body", sa.Text),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    if rows:
        op.bulk_insert(
            record,
            [
                {
                    "case_id": row["case_id"],
                    "kind": "interrogation",
                    "roles": [row["role"]],
                    "audience": row["role"],
                    "summary": {"trace": row["trace"]},
                    "body": "",
                    "created_at": row["created_at"],
                }
                for row in rows
            ],
        )
    op.drop_table("last_traces")


def downgrade() -> None:
    op.create_table(
        "last_traces",
        sa.Column("case_id", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("trace", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("case_id"),
    )
    op.drop_table("case_keys")
    op.drop_index("ix_case_record_case", table_name="case_record")
    op.drop_table("case_record")
