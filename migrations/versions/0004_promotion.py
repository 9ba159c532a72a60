"""promotion by evidence: an entry's promotion state and the evidence for it

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("cache_entries") as batch:
        batch.add_column(sa.Column("promotion", sa.String(16), nullable=True))
        batch.add_column(sa.Column("evidence", sa.JSON, nullable=True))
    op.create_index("ix_cache_entries_promotion", "cache_entries", ["promotion"])


def downgrade() -> None:
    op.drop_index("ix_cache_entries_promotion", table_name="cache_entries")
    with op.batch_alter_table("cache_entries") as batch:
        batch.drop_column("evidence")
        batch.drop_column("promotion")
