"""publication tombstones: an index for the maintenance sweep

An erased card's publication row stays as a tombstone (`state = 'erased'`; the column is a free string, so
the new state needs no change of its own). Tombstones accumulate until their case is reset or erased, and
the maintenance loop looks for rows to roll back every 5 s across cases: this index keeps that query from
scanning them.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_publications_state_lease", "publications", ["state", "lease_expires_at"])


def downgrade() -> None:
    op.drop_index("ix_publications_state_lease", table_name="publications")
