"""the vault: the ledger names the vault that holds its keys; sealed texts name their items

`ledger_meta` holds the id of the vault this ledger is bound to (stamped once; a data dir whose vault is missing or
another refuses to start). `case_record.body_item` and `findings.claim_item` name the vault item that seals the
text beside them, so a reset or a card erasure can destroy those keys without reading the texts; a cleanup task
may name an item whose key is still to be destroyed. `case_keys` stays, emptied once its keys have moved into
the vault (bootstrap/vault_binding.py).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ledger_meta",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("value", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    # Plain ADD COLUMNs (never a batch copy: the tables' foreign keys cascade, see 0008).
    op.add_column("case_record", sa.Column("body_item", sa.String(length=48), nullable=True))
    op.add_column("findings", sa.Column("claim_item", sa.String(length=48), nullable=True))
    op.add_column("cleanup_tasks", sa.Column("item", sa.String(length=48), nullable=True))


def downgrade() -> None:
    op.drop_column("cleanup_tasks", "item")
    op.drop_column("findings", "claim_item")
    op.drop_column("case_record", "body_item")
    op.drop_table("ledger_meta")
