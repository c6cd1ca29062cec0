"""the case's generation: a token every reset replaces, checked by every command's commit

Existing cases get the empty generation, which is also what their cards carry (they were written before
generations existed): nothing of theirs changes until their next reset.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN (never a batch copy of `cases`: its foreign keys cascade, see 0008).
    op.add_column("cases", sa.Column("generation", sa.String(length=32), server_default="", nullable=False))


def downgrade() -> None:
    op.drop_column("cases", "generation")
