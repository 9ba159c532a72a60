"""cache entries and events

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cache_entries",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("cache_id", sa.String(32), nullable=False),
        sa.Column("tenant", sa.String(128), nullable=False),
        sa.Column("session_id", sa.String(256), nullable=True),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("context_fingerprint", sa.String(64), nullable=False),
        sa.Column("system_prompt_version", sa.String(64), nullable=False),
        sa.Column("intent_domain", sa.String(64), nullable=False),
        sa.Column("tags", sa.JSON, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sa.Column("request_text", sa.Text, nullable=False),
        sa.Column("answer_text", sa.Text, nullable=False),
        sa.Column("key_facts", sa.JSON, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("ttl_s", sa.Float, nullable=False),
        sa.Column("hit_count", sa.Integer, nullable=False),
        sa.Column("feedback_score", sa.Float, nullable=False),
        sa.Column("saved_tokens", sa.Integer, nullable=False),
        sa.Column("answer_tokens", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ready_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_hit_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_cache_entries_cache_id", "cache_entries", ["cache_id"], unique=True)
    for column in ("tenant", "session_id", "context_fingerprint", "system_prompt_version", "intent_domain", "state",
                   "updated_at"):
        op.create_index(f"ix_cache_entries_{column}", "cache_entries", [column])
    op.create_index("ix_cache_entries_state_created", "cache_entries", ["state", "created_at"])
    op.create_table(
        "cache_events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("cache_id", sa.String(32), nullable=True),
        sa.Column("tenant", sa.String(128), nullable=True),
        sa.Column("detail", sa.JSON, nullable=False),
    )
    for column in ("at", "kind", "cache_id"):
        op.create_index(f"ix_cache_events_{column}", "cache_events", [column])


def downgrade() -> None:
    op.drop_table("cache_events")
    op.drop_table("cache_entries")
