"""the same messages in any session of the tenant: an index for `find_exact` (exact mode, and the drafts a
semantic MISS takes from another session's answer)

Revision ID: 0005
Revises: 0004
"""
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_cache_entries_tenant_request", "cache_entries", ["tenant", "request_hash"])


def downgrade() -> None:
    op.drop_index("ix_cache_entries_tenant_request", table_name="cache_entries")
