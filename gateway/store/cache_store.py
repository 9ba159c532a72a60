"""The cache: durable rows in SQL, hot copies and events in Redis (or in-process), vectors in HNSW.

Lifecycle: an entry is written `pending`; `promote_due` makes it `ready` once
`ready_delay_s` has passed without a regenerate or negative feedback from its
session; only ready, unexpired entries above the feedback floor are searchable.
Every change that affects search is published, so each replica's index follows.
"""
from __future__ import annotations

import functools
import logging
import math
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
from sqlalchemy import Engine, bindparam, func, insert, or_, select, update
from sqlalchemy.orm import sessionmaker

from gateway.index import CandidatePool, EntryTags, SearchFilter, VectorIndex
from gateway.scopes import scope_of
from gateway.store.models import CacheEntry, CacheEvent, CacheVote

log = logging.getLogger("semcache.store")
EVICT_CHECK_S = 1.0          # writes check the max_entries limit at most this often (the check counts rows)
POOLED = ("candidate", "shadow")   # promotion states whose entries other sessions search for evidence
SYNC_OVERLAP_S = 10.0        # catch-up re-reads rows changed this long before its last sync: commit lag, clock skew

DEFAULT_TTL_S = {"realtime": 60.0, "medical_legal": 0.0, "chitchat": 86_400.0, "customer_support": 86_400.0,
                 "travel_planning": 7 * 86_400.0, "code_qa": 30 * 86_400.0, "doc_rewrite": 7 * 86_400.0,
                 "product_recommendation": 3 * 86_400.0, "other": 86_400.0}


@dataclass
class StoreConfig:
    ready_delay_s: float = 30.0
    max_entries: int = 100_000
    feedback_floor: float = -2.0
    feedback_max_score: float = 2.0      # positive feedback stops adding here: nobody can pin an entry
    ttl_s: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_TTL_S))
    index_dir: Path | None = None
    dim: int = 384
    M: int = 16
    ef_construction: int = 200
    ef_search: int = 128


@dataclass
class NewEntry:
    tenant: str
    session_id: str | None
    vector: np.ndarray
    tags: dict
    answer_text: str
    system_prompt_version: str
    context_fingerprint: str
    key_facts: dict = field(default_factory=dict)
    scope: str = "session"
    request_text: str = ""
    answer_tokens: int = 0
    state: str = "pending"
    cache_id: str | None = None           # chosen by the caller when it must be announced before the write
    request_hash: str | None = None
    usage: dict | None = None
    promotion: str | None = None          # "candidate": other sessions' matches are gathered as evidence


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _aware(value: datetime | None) -> datetime | None:
    # SQLite hands back naive datetimes; everything here is UTC
    return value.replace(tzinfo=timezone.utc) if value is not None and value.tzinfo is None else value


def entry_dict(row: CacheEntry) -> dict:
    return {"cache_id": row.cache_id, "seq": row.seq, "tenant": row.tenant, "session_id": row.session_id,
            "scope": row.scope, "context_fingerprint": row.context_fingerprint,
            "system_prompt_version": row.system_prompt_version, "intent_domain": row.intent_domain,
            "tags": row.tags, "answer_text": row.answer_text, "key_facts": row.key_facts, "state": row.state,
            "ttl_s": row.ttl_s, "hit_count": row.hit_count, "feedback_score": row.feedback_score,
            "saved_tokens": row.saved_tokens, "answer_tokens": row.answer_tokens,
            "request_hash": row.request_hash, "usage": row.usage, "request_text": row.request_text,
            "promotion": row.promotion, "evidence": row.evidence,
            "created_at": _aware(row.created_at).isoformat(),
            "ready_at": _aware(row.ready_at).isoformat() if row.ready_at else None,
            "last_hit_at": _aware(row.last_hit_at).isoformat() if row.last_hit_at else None}


_TABLE = CacheEntry.__table__
_INSERTED = [c.key for c in _TABLE.columns if c.key != "seq"]
_INSERT = insert(_TABLE).returning(_TABLE.c.seq)      # built once: it is compiled once

_BY_SEQ = select(_TABLE).where(_TABLE.c.seq.in_(bindparam("seqs", expanding=True)))

# pending -> ready in one statement: the rows come back whole for the index and the hot copies
_PROMOTE = (update(_TABLE).where(_TABLE.c.seq.in_(
    select(_TABLE.c.seq).where(_TABLE.c.state == "pending", _TABLE.c.created_at <= bindparam("cutoff"))
    .with_for_update(skip_locked=True).scalar_subquery()))
    .values(state="ready", ready_at=bindparam("now"), updated_at=bindparam("now")).returning(*_TABLE.c))


@functools.cache
def _duplicate_query(no_session: bool, same_answer: bool):
    """The write's duplicate check, built once per form (a bound NULL would never match `= :session_id`)."""
    query = select(CacheEntry.cache_id).where(
        CacheEntry.tenant == bindparam("tenant"), CacheEntry.request_hash == bindparam("request_hash"),
        CacheEntry.session_id.is_(None) if no_session else CacheEntry.session_id == bindparam("session_id"),
        CacheEntry.scope == bindparam("scope"), CacheEntry.state != "invalid")
    if same_answer:
        query = query.where(CacheEntry.answer_text == bindparam("answer_text"))
    return query.limit(1)


def _columns(row: CacheEntry) -> dict:
    """A new row's values by column, for a Core insert (the database numbers `seq`)."""
    return {key: getattr(row, key) for key in _INSERTED}


def _tags(row) -> EntryTags:
    return EntryTags(row.tenant, row.session_id, row.scope, row.intent_domain, row.system_prompt_version)


def _pooled(row) -> bool:
    return row.promotion in POOLED and row.scope == "session"


class CacheStore:
    def __init__(self, engine: Engine, hot, config: StoreConfig):
        self.engine = engine
        self.hot = hot
        self.config = config
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self.index = (VectorIndex.load(config.index_dir) if config.index_dir else None) or self._new_index()
        self.pool = CandidatePool(config.dim, config.M, config.ef_construction, config.ef_search)
        self._lock = threading.Lock()
        self._evict_checked, self._live_estimate = 0.0, 0      # see _inserted
        self._sync_lock = threading.Lock()
        self.synced_at: float | None = None     # unix time of the last sync with the database (see catch_up)
        self.hot.subscribe(self._on_event)
        if hasattr(self.hot, "on_reconnect"):
            self.hot.on_reconnect(self._after_reconnect)
        self._pool_loaded = False
        self.replay()

    # ---- index maintenance -------------------------------------------------
    def replay(self) -> int:
        """Bring the index up to the database from the index's checkpoint (all rows for a new index).
        Returns the number of rows looked at."""
        return self._sync(self.index.checkpoint_at or None)

    def catch_up(self, full: bool = False) -> dict:
        """Replay rows changed since the last sync (minus an overlap), or all rows (`full`): events lost while
        Redis was down, or published by a replica that could not reach it, reach this index this way, and rows
        whose state changed (invalidated, sunk below the floor, expired, rescoped) are applied, not only new
        ones. Ready, above the floor and with a TTL <=> indexed. Returns the changes made."""
        since = None if full or self.synced_at is None else self.synced_at - SYNC_OVERLAP_S
        changes: dict = {}
        self._sync(since, changes)
        return changes

    def _after_reconnect(self) -> None:
        try:
            changes = self.catch_up()
            log.info("redis event channel back: index caught up", extra={"fields": changes})
        except Exception as exc:
            log.warning("index catch-up after the redis reconnect failed: %s", exc.__class__.__name__)

    def _sync(self, since: float | None, changes: dict | None = None, progress=None) -> int:
        changes = {} if changes is None else changes
        with self._sync_lock:
            started = time.time()
            with self.sessions() as db:
                query = select(CacheEntry.seq, CacheEntry.state, CacheEntry.feedback_score, CacheEntry.ttl_s,
                               CacheEntry.scope)
                if since is not None:
                    query = query.where(CacheEntry.updated_at >= datetime.fromtimestamp(since, timezone.utc))
                rows = db.execute(query).all()
            floor = self.config.feedback_floor
            want = {r.seq: r for r in rows if r.state == "ready" and r.feedback_score >= floor and r.ttl_s > 0}
            index = self.index
            stale = [r.seq for r in rows if r.seq not in want and r.seq in index]
            if since is None:                    # every row was read: labels without a row go too
                seen = {r.seq for r in rows}
                stale += [label for label in index.labels() if label not in seen]
            for seq in stale:
                index.remove(seq)
            missing = [seq for seq in want if seq not in index]
            added = 0
            for i in range(0, len(missing), 1000):
                with self.sessions() as db:
                    full_rows = db.execute(select(
                        CacheEntry.seq, CacheEntry.state, CacheEntry.vector, CacheEntry.tenant, CacheEntry.session_id,
                        CacheEntry.scope, CacheEntry.intent_domain, CacheEntry.system_prompt_version,
                        CacheEntry.feedback_score).where(CacheEntry.seq.in_(missing[i:i + 1000]))).all()
                full_rows = [r for r in full_rows if r.state == "ready" and r.feedback_score >= floor]
                if full_rows:
                    index.add_many([r.seq for r in full_rows],
                                   np.stack([np.frombuffer(r.vector, dtype=np.float32) for r in full_rows]),
                                   [_tags(r) for r in full_rows])
                    added += len(full_rows)
                if progress:
                    progress(min(i + 1000, len(missing)), len(missing))
            rescoped = 0
            for r in want.values():
                if r.seq in index and index.scope_of(r.seq) not in (None, r.scope):
                    index.set_scope(r.seq, r.scope)
                    rescoped += 1
            pooled = self._sync_pool(since if self._pool_loaded else None)
            self._pool_loaded = True
            self.synced_at = started
        changes.update({"added": added, "removed": len(stale), "rescoped": rescoped, "rows": len(rows),
                        "pooled": pooled})
        return len(rows)

    def _sync_pool(self, since: float | None) -> int:
        """The promotion pool follows the database like the index: searchable candidates and shadow-promoted
        entries <=> pooled. It is not checkpointed, so the first sync of a process reads every pooled row."""
        with self.sessions() as db:
            query = select(CacheEntry.seq, CacheEntry.state, CacheEntry.feedback_score, CacheEntry.ttl_s,
                           CacheEntry.scope, CacheEntry.promotion)
            query = query.where(CacheEntry.updated_at >= datetime.fromtimestamp(since, timezone.utc)) \
                if since is not None else query.where(CacheEntry.promotion.in_(POOLED))
            rows = db.execute(query).all()
        floor = self.config.feedback_floor
        want = {r.seq for r in rows if r.state == "ready" and r.feedback_score >= floor and r.ttl_s > 0 and _pooled(r)}
        for r in rows:
            if r.seq not in want:
                self.pool.remove(r.seq)
        if since is None:
            for label in self.pool.labels():
                if label not in want:
                    self.pool.remove(label)
        missing = [seq for seq in want if seq not in self.pool]
        for i in range(0, len(missing), 1000):
            with self.sessions() as db:
                for r in db.execute(select(CacheEntry.seq, CacheEntry.vector, CacheEntry.tenant, CacheEntry.session_id,
                                           CacheEntry.scope, CacheEntry.intent_domain, CacheEntry.system_prompt_version)
                                    .where(CacheEntry.seq.in_(missing[i:i + 1000]))).all():
                    self.pool.add(r.seq, np.frombuffer(r.vector, dtype=np.float32), _tags(r))
        return len(missing)

    def _new_index(self) -> VectorIndex:
        c = self.config
        return VectorIndex(c.dim, M=c.M, ef_construction=c.ef_construction, ef_search=c.ef_search)

    def rebuild_index(self, progress=None) -> int:
        """A new index from every row, saved. `progress(done, total)`: entries to index, after each batch."""
        self.index = self._new_index()
        self.index.checkpoint_at = 0.0
        count = self._sync(None, progress=progress)
        self.checkpoint()
        return count

    def checkpoint(self) -> None:
        if self.config.index_dir:
            # the index holds every change before the last sync (and events since): a restart replays from
            # there, with an overlap (replay is idempotent), so changes it never heard of are not skipped
            synced = self.synced_at if self.synced_at is not None else time.time()
            self.index.save(self.config.index_dir, synced - SYNC_OVERLAP_S)

    def _on_event(self, event: dict) -> None:
        kind = event["kind"]
        if kind == "ready":
            vector = np.asarray(event["vector"], dtype=np.float32)
            tags = EntryTags(event["tenant"], event["session_id"], event["scope"], event["intent_domain"],
                             event["system_prompt_version"])
            self.index.add(event["seq"], vector, tags)
            if event.get("promotion") in POOLED and tags.scope == "session":
                self.pool.add(event["seq"], vector, tags)
        elif kind == "remove":
            for seq in event["seqs"]:
                self.index.remove(seq)
                self.pool.remove(seq)
        elif kind == "scope":
            self.index.set_scope(event["seq"], event["scope"])
            if event.get("promotion") is not None or event["scope"] == "global":
                self._place_in_pool(event["seq"], event.get("promotion"), event["scope"])

    def _place_in_pool(self, seq: int, promotion: str | None, scope: str) -> None:
        if promotion in POOLED and scope == "session" and seq in self.index:
            with self.sessions() as db:
                row = db.execute(select(CacheEntry.seq, CacheEntry.vector, CacheEntry.tenant, CacheEntry.session_id,
                                        CacheEntry.scope, CacheEntry.intent_domain, CacheEntry.system_prompt_version)
                                 .where(CacheEntry.seq == seq)).first()
            if row is not None:
                self.pool.add(seq, np.frombuffer(row.vector, dtype=np.float32), _tags(row))
        else:
            self.pool.remove(seq)

    # ---- writes ------------------------------------------------------------
    def write(self, new: NewEntry) -> str:
        """Insert an entry and return its id. The same request (hash) in the same session is written once:
        a second write returns the live entry's id instead."""
        if np.asarray(new.vector).shape != (self.config.dim,):
            raise ValueError(f"vector has shape {np.asarray(new.vector).shape}; this store holds {self.config.dim}-d "
                             "vectors (the embedding model changed? run `semcache index rebuild` after migrating)")
        with self._lock:
            # the check and the insert: one connection, one commit; a Core insert, not an ORM flush, since
            # nothing here needs the unit of work and it took half the write's CPU (docs/benchmarks.md)
            with self.engine.begin() as db:
                existing = self._live_duplicate(db, new) if new.request_hash else None
                if existing:
                    return existing
                row = self._new_row(new)
                row.seq = db.execute(_INSERT, _columns(row)).scalar_one()
            self._inserted(row)
            return row.cache_id

    @staticmethod
    def _live_duplicate(db, new: NewEntry) -> str | None:
        """A live entry for the same request in the same session: any, for a fresh answer (concurrent
        misses write once); one with the same answer, for a warm-up (re-running it is idempotent)."""
        keys = {"tenant": new.tenant, "session_id": new.session_id, "request_hash": new.request_hash,
                "scope": new.scope, "answer_text": new.answer_text}
        return db.scalar(_duplicate_query(new.session_id is None, new.state != "pending"), keys)

    def _new_row(self, new: NewEntry) -> CacheEntry:
        now = _now()
        domain = new.tags.get("intent_domain", "other")
        return CacheEntry(cache_id=new.cache_id or uuid.uuid4().hex, tenant=new.tenant, session_id=new.session_id, scope=new.scope,
                         context_fingerprint=new.context_fingerprint,
                         system_prompt_version=new.system_prompt_version, intent_domain=domain, tags=new.tags,
                         vector=np.asarray(new.vector, dtype=np.float32).tobytes(), request_text=new.request_text,
                         answer_text=new.answer_text, key_facts=new.key_facts, state=new.state,
                         ttl_s=self.config.ttl_s.get(domain, DEFAULT_TTL_S["other"]), hit_count=0,
                         feedback_score=0.0, saved_tokens=0, answer_tokens=new.answer_tokens, created_at=now,
                         ready_at=now if new.state == "ready" else None, updated_at=now,
                         request_hash=new.request_hash, usage=new.usage, promotion=new.promotion)

    def _inserted(self, row: CacheEntry) -> None:
        if row.state == "ready":
            self._publish_ready([row])
        # the limit check counts every live row: it runs when this process's estimate passes the limit, and
        # at most every EVICT_CHECK_S otherwise (other replicas' writes), not on every write
        self._live_estimate += 1
        if self._live_estimate > self.config.max_entries or time.monotonic() - self._evict_checked >= EVICT_CHECK_S:
            self.evict_over_limit()

    def promote_due(self, now: datetime | None = None) -> list[str]:
        """pending -> ready for entries whose delay has passed."""
        now = now or _now()
        cutoff = now - timedelta(seconds=self.config.ready_delay_s)
        with self.engine.begin() as db:
            # several workers or replicas promote: on PostgreSQL each takes only rows no other is promoting
            due = db.execute(_PROMOTE, {"cutoff": cutoff, "now": now}).all()
            if due:
                db.execute(insert(CacheEvent.__table__), [{"at": now, "kind": "ready", "cache_id": r.cache_id,
                                                          "tenant": r.tenant, "detail": {}} for r in due])
        self._publish_ready(due)
        return [r.cache_id for r in due]

    def _publish_ready(self, rows: list[CacheEntry]) -> None:
        rows = [r for r in rows if r.ttl_s > 0]
        if not rows:
            return
        # this replica's index first (applied locally before Redis), then the hot copies, all in one exchange;
        # Redis is best effort: a replica that misses the event finds the row in its next catch-up
        events = [{"kind": "ready", "seq": r.seq, "vector": np.frombuffer(r.vector, np.float32),
                   "tenant": r.tenant, "session_id": r.session_id, "scope": r.scope, "intent_domain": r.intent_domain,
                   "system_prompt_version": r.system_prompt_version, "promotion": r.promotion} for r in rows]
        puts = [(r.cache_id, entry_dict(r), r.ttl_s) for r in rows]
        try:
            self.hot.announce(events, puts)
        except Exception as exc:
            log.warning("ready entries not published (other replicas catch up from the database): %s",
                        exc.__class__.__name__, extra={"fields": {"entries": len(rows),
                                                                  "error": exc.__class__.__name__}})

    def _announce(self, event: dict) -> None:
        try:
            self.hot.publish(event)
        except Exception as exc:
            log.warning("cache event not published (other replicas catch up from the database): %s",
                        exc.__class__.__name__, extra={"fields": {"kind": event.get("kind"),
                                                                  "error": exc.__class__.__name__}})

    def _hot_call(self, what: str, fn, *args) -> None:
        try:
            fn(*args)
        except Exception as exc:
            log.warning("hot store %s failed: %s", what, exc.__class__.__name__,
                        extra={"fields": {"error": exc.__class__.__name__}})

    def feedback(self, cache_id: str, signal: str, session_id: str | None = None,
                 voter: str | None = None) -> dict | None:
        """regenerate / negative lower the score, positive raises it (up to `feedback_max_score`). With a `voter` (a user: API key and session), each voter counts
        once per entry, so one user alone can neither sink an entry others are served below the floor nor pin
        it; the result then says `counted`. A negative from the entry's own session drops it at once: a
        pending answer never becomes ready, a session-scoped one stops being served to that session."""
        delta = {"positive": 1.0, "negative": -1.0, "regenerate": -1.0}[signal]
        now = _now()
        with self.sessions.begin() as db:
            row = db.scalar(select(CacheEntry).where(CacheEntry.cache_id == cache_id))
            if row is None:
                return None
            if voter is not None:
                seen = db.scalar(select(CacheVote.id).where(CacheVote.cache_id == cache_id, CacheVote.voter == voter))
                if seen is not None:
                    return {**entry_dict(row), "counted": False}
                db.add(CacheVote(cache_id=cache_id, voter=voter, signal=signal, at=now))
            row.feedback_score = min(row.feedback_score + delta, max(row.feedback_score, self.config.feedback_max_score))
            row.updated_at = now
            # a pending answer's id has only been shown to the client it was written for: its regenerate or
            # negative drops it (with or without a session); a ready one only for its own session
            own = session_id is not None and session_id == row.session_id
            if signal in ("negative", "regenerate") and (
                    (row.state == "pending" and (session_id is None or own)) or (own and row.scope == "session")):
                row.state = "invalid"
            drop = row.state == "invalid" or row.feedback_score < self.config.feedback_floor
            db.add(CacheEvent(at=now, kind="feedback", cache_id=cache_id, tenant=row.tenant,
                              detail={"signal": signal, "score": row.feedback_score}))
            demoted = signal != "positive" and self._demote_on_signal(db, row, signal, now)
            snapshot = entry_dict(row)
        if drop:
            self._publish_remove([row.seq], [cache_id])
        elif demoted:
            self._publish_promotion(snapshot)
        result = {**snapshot, "counted": True, "demoted": demoted}
        return result

    @staticmethod
    def _demote_on_signal(db, row: CacheEntry, signal: str, now: datetime) -> bool:
        """One negative signal from anyone: a promoted or shadow entry leaves the global pool, flagged
        `demoted`; a candidate is `rejected` (it never crosses users). Manual promotions stay an admin's call."""
        if row.promotion not in ("candidate", "shadow", "promoted"):
            return False
        before = row.promotion
        row.promotion = "rejected" if before == "candidate" else "demoted"
        row.scope = "session"
        row.evidence = {**(row.evidence or {}), "last": {"state": row.promotion, "why": f"signal:{signal}",
                                                         "at": now.isoformat()}}
        db.add(CacheEvent(at=now, kind="promotion", cache_id=row.cache_id, tenant=row.tenant,
                          detail={"from": before, "to": row.promotion, "signal": signal}))
        return True

    def invalidate(self, *, cache_id: str | None = None, session_id: str | None = None, tenant: str | None = None,
                   intent_domain: str | None = None, system_prompt_version: str | None = None,
                   context_fingerprint: str | None = None, reason: str = "admin") -> int:
        conditions = [getattr(CacheEntry, name) == value for name, value in (
            ("cache_id", cache_id), ("session_id", session_id), ("tenant", tenant), ("intent_domain", intent_domain),
            ("system_prompt_version", system_prompt_version), ("context_fingerprint", context_fingerprint))
            if value is not None]
        if not conditions:
            raise ValueError("invalidate needs at least one of cache_id, session_id, tenant, intent_domain, "
                             "system_prompt_version, context_fingerprint")
        now = _now()
        with self.sessions.begin() as db:
            rows = db.execute(select(CacheEntry.seq, CacheEntry.cache_id).where(
                CacheEntry.state != "invalid", *conditions)).all()
            if rows:
                db.execute(update(CacheEntry).where(CacheEntry.seq.in_([r.seq for r in rows]))
                           .values(state="invalid", updated_at=now))
                db.add(CacheEvent(at=now, kind="invalidate", tenant=tenant, cache_id=cache_id,
                                  detail={"reason": reason, "count": len(rows),
                                          **{k: v for k, v in (("session_id", session_id),
                                                                ("intent_domain", intent_domain),
                                                                ("system_prompt_version", system_prompt_version))
                                             if v is not None}}))
        if rows:
            self._publish_remove([r.seq for r in rows], [r.cache_id for r in rows])
        return len(rows)

    def _publish_remove(self, seqs: list[int], cache_ids: list[str]) -> None:
        self._announce({"kind": "remove", "seqs": seqs})
        self._hot_call("delete", self.hot.delete, cache_ids)     # best effort: a stale copy expires with its TTL

    def promote_scope(self, cache_id: str, scope: str = "global") -> bool:
        """By hand (admin): into the tenant's global pool (`manual`) or back to its session (`demoted`)."""
        return self.set_promotion(cache_id, "manual" if scope == "global" else "demoted", scope,
                                  {"by": "admin"}) is not None

    def set_promotion(self, cache_id: str, promotion: str | None, scope: str | None = None,
                      note: dict | None = None) -> dict | None:
        """Change an entry's promotion state (and scope); `note` is kept in its evidence as `last`."""
        now = _now()
        with self.sessions.begin() as db:
            row = db.scalar(select(CacheEntry).where(CacheEntry.cache_id == cache_id))
            if row is None:
                return None
            before = row.promotion
            row.promotion, row.updated_at = promotion, now
            if scope is not None:
                row.scope = scope
            if note is not None:
                row.evidence = {**(row.evidence or {}), "last": {**note, "state": promotion, "at": now.isoformat()}}
            db.add(CacheEvent(at=now, kind="promotion", cache_id=cache_id, tenant=row.tenant,
                              detail={"from": before, "to": promotion, "scope": row.scope, **(note or {})}))
            snapshot = entry_dict(row)
        self._publish_promotion(snapshot)
        return snapshot

    def _publish_promotion(self, entry: dict) -> None:
        self._announce({"kind": "scope", "seq": entry["seq"], "scope": entry["scope"], "promotion": entry["promotion"]})
        if entry["state"] == "ready":
            self._hot_call("put", self.hot.put, entry["cache_id"], entry, entry["ttl_s"])

    def search_pool(self, vector: np.ndarray, where: SearchFilter, k: int = 5,
                    min_score: float | None = None) -> list[tuple[dict, float]]:
        """Promotion candidates of other sessions (ready, unexpired, above the floor), best first; with
        `min_score`, only those at least that close (see `search`)."""
        hits = self.pool.search(np.asarray(vector, dtype=np.float32), k + 1, where)
        by_seq = {seq: score for seq, score in hits if min_score is None or score >= min_score}
        if not by_seq:
            return []
        rows = self._rows_by_seq(list(by_seq))
        now = time.time()
        out = [(entry_dict(r), by_seq[r.seq]) for r in rows
               if r.state == "ready" and r.feedback_score >= self.config.feedback_floor and r.promotion in POOLED
               and r.session_id != where.session_id and _aware(r.ready_at).timestamp() + r.ttl_s > now]
        return sorted(out, key=lambda pair: -pair[1])[:k]

    def add_evidence(self, cache_id: str, session_id: str, item: dict, *, min_sessions: int, mode: str,
                     max_sessions: int = 32, min_clients: int = 1) -> dict | None:
        """Record that `session_id` matched the entry through every gate, and whether its own answer agreed
        (`item["agree"]`). A candidate with `min_sessions` agreeing sessions, none disagreeing, no negative
        vote and no negative signal on any of those sessions' own answers is promoted: `shadow` (measured,
        not served) or, with mode `auto`, `promoted` into the tenant's global pool. A shadow entry counts
        what it would have served. `min_clients`: distinct client scopes (gateway/auth.py) among the writer's and
        the agreeing sessions. Returns {"promotion", "changed"}, or None for an unknown entry."""
        now = _now()
        with self.sessions.begin() as db:
            row = db.scalar(select(CacheEntry).where(CacheEntry.cache_id == cache_id).with_for_update())
            if row is None or row.promotion not in POOLED:
                return None if row is None else {"promotion": row.promotion, "changed": False}
            evidence = dict(row.evidence or {})
            sessions = dict(evidence.get("sessions") or {})
            if session_id != row.session_id and (session_id in sessions or len(sessions) < max_sessions):
                sessions[session_id] = {**item, "at": now.isoformat()}
            evidence["sessions"] = sessions
            if row.promotion == "shadow":
                evidence["would_hit"] = int(evidence.get("would_hit", 0)) + 1
                key = "shadow_agree" if item.get("agree") else "shadow_disagree"
                evidence[key] = int(evidence.get(key, 0)) + 1
            before = row.promotion
            agreeing = [s for s in sessions.values() if s.get("agree")]
            disagreeing = len(sessions) - len(agreeing)
            clients = {scope_of(s) for s, v in sessions.items() if v.get("agree")} | {scope_of(row.session_id)}
            if disagreeing:
                row.promotion = "rejected"
                evidence["last"] = {"state": "rejected", "why": "an answer disagreed", "at": now.isoformat()}
            elif len(agreeing) >= min_sessions and len(clients) >= min_clients and row.feedback_score >= 0 \
                    and mode in ("shadow", "auto") \
                    and not self._negative_evidence(db, cache_id, [s.get("entry") for s in agreeing]):
                target = "promoted" if mode == "auto" else "shadow"
                if target != row.promotion:
                    row.promotion = target
                    evidence["last"] = {"state": target, "why": f"{len(agreeing)} sessions agreed",
                                        "at": now.isoformat()}
                    if target == "promoted":
                        row.scope = "global"
            row.evidence, row.updated_at = evidence, now
            changed = row.promotion != before
            if changed:
                db.add(CacheEvent(at=now, kind="promotion", cache_id=cache_id, tenant=row.tenant,
                                  detail={"from": before, "to": row.promotion, "sessions": len(sessions)}))
            snapshot = entry_dict(row)
        if changed:
            self._publish_promotion(snapshot)
        return {"promotion": snapshot["promotion"], "changed": changed}

    @staticmethod
    def _negative_evidence(db, cache_id: str, own_entries: list[str | None]) -> bool:
        """A negative vote on the entry, or a negative signal on an agreeing session's own answer."""
        if db.scalar(select(CacheVote.id).where(CacheVote.cache_id == cache_id,
                                                CacheVote.signal != "positive").limit(1)) is not None:
            return True
        own = [e for e in own_entries if e]
        if not own:
            return False
        return db.scalar(select(CacheEntry.seq).where(CacheEntry.cache_id.in_(own), or_(
            CacheEntry.state == "invalid", CacheEntry.feedback_score < 0)).limit(1)) is not None

    def record_hit(self, cache_id: str, saved_tokens: int) -> None:
        now = _now()
        with self.sessions.begin() as db:
            db.execute(update(CacheEntry).where(CacheEntry.cache_id == cache_id).values(
                hit_count=CacheEntry.hit_count + 1, last_hit_at=now, saved_tokens=CacheEntry.saved_tokens + saved_tokens))
            db.add(CacheEvent(at=now, kind="hit", cache_id=cache_id, detail={"saved_tokens": saved_tokens}))

    # ---- upkeep ------------------------------------------------------------
    def expire(self, now: datetime | None = None) -> int:
        """Ready entries past their TTL become invalid."""
        now = now or _now()
        with self.sessions() as db:
            rows = db.execute(select(CacheEntry.seq, CacheEntry.cache_id, CacheEntry.ready_at, CacheEntry.ttl_s)
                              .where(CacheEntry.state == "ready")).all()
        expired = [r for r in rows if _aware(r.ready_at).timestamp() + r.ttl_s <= now.timestamp()]
        if expired:
            with self.sessions.begin() as db:
                db.execute(update(CacheEntry).where(CacheEntry.seq.in_([r.seq for r in expired]))
                           .values(state="invalid", updated_at=now))
            self._publish_remove([r.seq for r in expired], [r.cache_id for r in expired])
        return len(expired)

    def eviction_priority(self, row, now: float) -> float:
        """LRU weighted by hit rate and feedback: the lowest goes first."""
        last = _aware(row.last_hit_at or row.ready_at or row.created_at).timestamp()
        age_h = max(now - _aware(row.created_at).timestamp(), 1.0) / 3600
        hit_rate = row.hit_count / age_h
        return last + 3600 * math.log1p(hit_rate) + 1800 * row.feedback_score

    def evict_over_limit(self) -> int:
        with self.sessions() as db:
            live = db.scalar(select(func.count()).select_from(CacheEntry).where(CacheEntry.state != "invalid"))
            self._evict_checked, self._live_estimate = time.monotonic(), min(live, self.config.max_entries)
            if live <= self.config.max_entries:
                return 0
            rows = db.execute(select(CacheEntry.seq, CacheEntry.cache_id, CacheEntry.last_hit_at,
                                     CacheEntry.ready_at, CacheEntry.created_at, CacheEntry.hit_count,
                                     CacheEntry.feedback_score).where(CacheEntry.state != "invalid")).all()
        now = time.time()
        victims = sorted(rows, key=lambda r: self.eviction_priority(r, now))[:live - self.config.max_entries]
        with self.sessions.begin() as db:
            db.execute(update(CacheEntry).where(CacheEntry.seq.in_([r.seq for r in victims]))
                       .values(state="invalid", updated_at=_now()))
            db.add(CacheEvent(at=_now(), kind="evict", detail={"count": len(victims)}))
        self._publish_remove([r.seq for r in victims], [r.cache_id for r in victims])
        return len(victims)

    # ---- reads -------------------------------------------------------------
    def cached(self, cache_id: str) -> dict | None:
        """The serving path: the hot copy (Redis or in-process), else the database."""
        return self.hot.get(cache_id) or self.get(cache_id)

    def get(self, cache_id: str) -> dict | None:
        with self.sessions() as db:
            row = db.scalar(select(CacheEntry).where(CacheEntry.cache_id == cache_id))
            return entry_dict(row) if row is not None else None

    def _rows_by_seq(self, seqs: list[int]) -> list:
        """Whole rows (read-only, as Core rows: the request path has no use for ORM objects) of these entries."""
        with self.engine.connect() as db:
            return db.execute(_BY_SEQ, {"seqs": seqs}).all()

    def find_exact(self, tenant: str, request_hash: str, limit: int = 5) -> list[dict]:
        """Ready, unexpired entries of the tenant for exactly these messages (any session), newest first: the
        same messages asked with other parameters (model, max_tokens) have answers of their own."""
        with self.sessions() as db:
            rows = db.scalars(select(CacheEntry).where(
                CacheEntry.tenant == tenant, CacheEntry.request_hash == request_hash, CacheEntry.state == "ready",
                CacheEntry.feedback_score >= self.config.feedback_floor).order_by(CacheEntry.seq.desc())
                .limit(limit)).all()
        now = time.time()
        return [entry_dict(r) for r in rows if _aware(r.ready_at).timestamp() + r.ttl_s > now]

    def search(self, vector: np.ndarray, where: SearchFilter, k: int = 10,
               min_score: float | None = None) -> list[tuple[dict, float]]:
        """Ready, unexpired entries above the feedback floor that pass the filter, best first. With `min_score`,
        only the index's hits at or above it are read from the database (a caller that has no use for the
        others does not pay a round trip and a row decode for each)."""
        hits = self.nearest(vector, where, k)
        return self.entries([(seq, score) for seq, score in hits if min_score is None or score >= min_score])

    def nearest(self, vector: np.ndarray, where: SearchFilter, k: int = 10) -> list[tuple[int, float]]:
        """The index's (seq, cosine) hits that pass the filter, without reading the database."""
        return self.index.search(np.asarray(vector, dtype=np.float32), k, where)

    def entries(self, hits: list[tuple[int, float]]) -> list[tuple[dict, float]]:
        """The ready, unexpired entries above the feedback floor among index hits, best first."""
        by_seq = dict(hits)
        if not by_seq:
            return []
        rows = self._rows_by_seq(list(by_seq))
        now = time.time()
        out = []
        for row in rows:
            if row.state != "ready" or row.feedback_score < self.config.feedback_floor:
                continue
            if _aware(row.ready_at).timestamp() + row.ttl_s <= now:
                continue
            out.append((entry_dict(row), by_seq[row.seq]))
        return sorted(out, key=lambda pair: -pair[1])

    def list_entries(self, tenant: str | None = None, state: str | None = None, limit: int = 100,
                     offset: int = 0, text: str | None = None, **filters: str | None) -> list[dict]:
        """Newest first. `filters`: session_id, scope, intent_domain, system_prompt_version, request_hash;
        `text`: the request or the answer contains it (case-insensitive)."""
        allowed = {"session_id", "scope", "intent_domain", "system_prompt_version", "request_hash", "promotion"}
        unknown = set(filters) - allowed
        if unknown:
            raise ValueError(f"unknown filter(s) {sorted(unknown)}; use {sorted(allowed)}")
        with self.sessions() as db:
            query = select(CacheEntry).order_by(CacheEntry.seq.desc()).limit(limit).offset(offset)
            if text:
                pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                query = query.where(or_(CacheEntry.request_text.ilike(pattern, escape="\\"),
                                        CacheEntry.answer_text.ilike(pattern, escape="\\")))
            for name, value in (("tenant", tenant), ("state", state), *filters.items()):
                if value:
                    query = query.where(getattr(CacheEntry, name) == value)
            return [entry_dict(r) for r in db.scalars(query).all()]

    # ---- per-session memory (regenerate and "that's wrong" detection) ----------
    def last_turn(self, tenant: str, session_id: str) -> dict | None:
        return self.hot.get(f"turn:{tenant}:{session_id}")

    def remember_turn(self, tenant: str, session_id: str, record: dict, ttl_s: float = 86_400.0) -> None:
        self.hot.put(f"turn:{tenant}:{session_id}", record, ttl_s)

    def promotion_counts(self, tenant: str | None = None) -> dict:
        """Live entries by promotion state (candidate, shadow, promoted, ...); evidence totals of shadow ones."""
        with self.sessions() as db:
            query = select(CacheEntry.promotion, func.count()).where(CacheEntry.promotion.is_not(None),
                                                                     CacheEntry.state != "invalid")
            if tenant:
                query = query.where(CacheEntry.tenant == tenant)
            return dict(db.execute(query.group_by(CacheEntry.promotion)).all())

    def stats(self) -> dict:
        with self.sessions() as db:
            by_state = dict(db.execute(select(CacheEntry.state, func.count()).group_by(CacheEntry.state)).all())
            hits = db.scalar(select(func.coalesce(func.sum(CacheEntry.hit_count), 0)))
            saved = db.scalar(select(func.coalesce(func.sum(CacheEntry.saved_tokens), 0)))
        return {"entries": by_state, "indexed": len(self.index), "hits": int(hits), "saved_tokens": int(saved),
                "promotion": self.promotion_counts(), "pooled": len(self.pool)}

    def health(self) -> dict:
        """{"database": bool, "redis": bool, or None without Redis}: each dependency asked on its own."""
        try:
            with self.engine.connect() as connection:
                connection.exec_driver_sql("SELECT 1")
            database = True
        except Exception:
            database = False
        redis = self.hot.ready() if getattr(self.hot, "remote", False) else None
        return {"database": database, "redis": redis}

    def ready(self) -> bool:
        health = self.health()
        return health["database"] and health["redis"] is not False

    def close(self) -> None:
        self.checkpoint()
        self.hot.close()
        self.engine.dispose()
