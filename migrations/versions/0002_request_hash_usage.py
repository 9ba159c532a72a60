"""request hash (regenerate detection, de-duplication) and the backend's usage of the original answer

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("cache_entries") as batch:
        batch.add_column(sa.Column("request_hash", sa.String(64), nullable=True))
        batch.add_column(sa.Column("usage", sa.JSON, nullable=True))
        batch.create_index("ix_cache_entries_session_request", ["tenant", "session_id", "request_hash"])


def downgrade() -> None:
    with op.batch_alter_table("cache_entries") as batch:
        batch.drop_index("ix_cache_entries_session_request")
        batch.drop_column("usage")
        batch.drop_column("request_hash")
