"""SQLAlchemy models of the cache database. Schema changes go through alembic (migrations/)."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, Float, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class CacheEntry(Base):
    __tablename__ = "cache_entries"

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)   # HNSW label, replay cursor
    cache_id: Mapped[str] = mapped_column(String(32), unique=True, index=True)
    tenant: Mapped[str] = mapped_column(String(128), index=True)
    session_id: Mapped[str | None] = mapped_column(String(256), index=True)
    scope: Mapped[str] = mapped_column(String(16), default="session")      # session | global
    context_fingerprint: Mapped[str] = mapped_column(String(64), index=True)
    system_prompt_version: Mapped[str] = mapped_column(String(64), index=True)
    intent_domain: Mapped[str] = mapped_column(String(64), index=True)
    tags: Mapped[dict] = mapped_column(JSON)
    vector: Mapped[bytes] = mapped_column(LargeBinary)                    # float32, unit norm
    request_text: Mapped[str] = mapped_column(Text, default="")          # JSON: context view and last turns
    answer_text: Mapped[str] = mapped_column(Text)
    key_facts: Mapped[dict] = mapped_column(JSON, default=dict)
    state: Mapped[str] = mapped_column(String(16), index=True)            # pending | ready | invalid
    ttl_s: Mapped[float] = mapped_column(Float)
    hit_count: Mapped[int] = mapped_column(Integer, default=0)
    feedback_score: Mapped[float] = mapped_column(Float, default=0.0)
    saved_tokens: Mapped[int] = mapped_column(Integer, default=0)
    answer_tokens: Mapped[int] = mapped_column(Integer, default=0)
    request_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)   # same messages = same hash
    usage: Mapped[dict | None] = mapped_column(JSON, nullable=True)     # the backend's usage, for HIT estimates
    # promotion by evidence (gateway/cache/promotion.py): None (not eligible) | candidate | shadow | promoted |
    # demoted | rejected | manual; `evidence` holds the sessions that matched it and how their answers agreed
    promotion: Mapped[str | None] = mapped_column(String(16), nullable=True, index=True)
    evidence: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ready_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_hit_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)

    __table_args__ = (Index("ix_cache_entries_state_created", "state", "created_at"),
                      Index("ix_cache_entries_session_request", "tenant", "session_id", "request_hash"),
                      Index("ix_cache_entries_tenant_request", "tenant", "request_hash"))


class CacheEvent(Base):
    """Hits, feedback and invalidations, for metrics and audit."""
    __tablename__ = "cache_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    kind: Mapped[str] = mapped_column(String(32), index=True)       # hit | feedback | invalidate | ready | evict
    cache_id: Mapped[str | None] = mapped_column(String(32), index=True, nullable=True)
    tenant: Mapped[str | None] = mapped_column(String(128), nullable=True)
    detail: Mapped[dict] = mapped_column(JSON, default=dict)


class CacheVote(Base):
    """One explicit or implicit feedback vote per voter (API key and session) and entry: repeating a signal
    changes nothing, so one user cannot sink or pin an entry that others are served."""
    __tablename__ = "cache_votes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    cache_id: Mapped[str] = mapped_column(String(32), index=True)
    voter: Mapped[str] = mapped_column(String(64))
    signal: Mapped[str] = mapped_column(String(16))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (UniqueConstraint("cache_id", "voter", name="uq_cache_votes_entry_voter"),)
