"""feedback votes: one per voter and entry

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cache_votes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cache_id", sa.String(32), nullable=False),
        sa.Column("voter", sa.String(64), nullable=False),
        sa.Column("signal", sa.String(16), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("cache_id", "voter", name="uq_cache_votes_entry_voter"),
    )
    op.create_index("ix_cache_votes_cache_id", "cache_votes", ["cache_id"])


def downgrade() -> None:
    op.drop_index("ix_cache_votes_cache_id", table_name="cache_votes")
    op.drop_table("cache_votes")
