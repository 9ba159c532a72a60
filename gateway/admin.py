"""Feedback (clients) and the admin API (bearer SEMCACHE_ADMIN_TOKEN): invalidate, warm up, promote, inspect."""
from __future__ import annotations

import asyncio
import time
from pathlib import PurePosixPath

from litestar import Request, delete, get, post
from litestar.datastructures import State
from litestar.params import Parameter

from gateway.auth import admin_guard, authenticate, caller_id, client_scope
from gateway.scopes import scoped_session
from gateway.cache import SemanticCache
from gateway.cache.decision import cached_messages, current_user_text, voter_id
from gateway.cache.warmup import MAX_WARMUP_ENTRIES, check_entry, warm_all
from gateway.errors import GatewayError, invalid
from gateway.metrics import GatewayMetrics
from gateway.ratelimit import RateLimiter
from gateway.settings import Settings
from gateway.routing import ReplicaSet
from gateway.timeline import entry_events
from gateway.validation import check_text_id, decode_json_object, header_text, is_cache_id

SIGNALS = ("regenerate", "negative", "positive")
INVALIDATE_KEYS = ("cache_id", "session_id", "tenant", "intent_domain", "system_prompt_version")
ENTRY_FILTERS = ("tenant", "state", "session_id", "scope", "intent_domain", "system_prompt_version", "promotion")
PROMOTION_STATES = ("candidate", "shadow", "promoted", "demoted", "rejected", "manual")
MAX_OFFSET = 10**9
MAX_QUERY_CHARS = 200


def _not_found(cache_id: str) -> GatewayError:
    return GatewayError(404, f"no cache entry {cache_id[:64]!r}", code="entry_not_found")


@post("/v1/feedback", status_code=200, summary="Feedback on an answer: regenerate, negative or positive")
async def feedback(request: Request, settings: Settings, cache: SemanticCache, metrics: GatewayMetrics,
                   limiter: RateLimiter) -> dict:
    tenant = authenticate(request, settings)
    await limiter.enforce(request, "feedback")
    body = decode_json_object(await request.body())
    cache_id, signal = body.get("cache_id"), body.get("signal")
    if not isinstance(cache_id, str) or not cache_id:
        raise invalid("'cache_id' is required: the X-Cache-Id of the answer", "cache_id", code="missing")
    if signal not in SIGNALS:
        raise invalid(f"'signal' must be one of {list(SIGNALS)}, got {signal!r}", "signal")
    if not is_cache_id(cache_id):                          # ids are 32 hex digits: this one names no entry
        raise _not_found(cache_id)
    session = header_text(request.headers.get("x-session-id")) or body.get("session_id")
    if session is not None and not isinstance(session, str):
        raise invalid("'session_id' must be a string", "session_id")
    if session:
        session = check_text_id(session[:256], "session_id")      # as chat requests' session ids are kept
    scope = client_scope(request, settings, tenant)
    session = scoped_session(scope, session or None)
    await cache.written(cache_id)                         # its answer may have been sent a moment ago
    entry = await asyncio.to_thread(cache.store.get, cache_id)
    if entry is None or entry["tenant"] != tenant:        # another tenant's entry does not exist for this caller
        raise _not_found(cache_id)
    voter = voter_id(caller_id(request, settings), tenant, None if scope else session)
    updated = await asyncio.to_thread(cache.store.feedback, cache_id, signal, session, voter=voter)
    if updated is None:
        raise _not_found(cache_id)
    if updated["counted"]:
        metrics.feedback.labels(signal, "explicit").inc()
        if signal != "positive" and entry["hit_count"] > 0:
            metrics.polluted(signal, "explicit", entry.get("intent_domain"))
    if updated.get("demoted"):
        metrics.promotions.labels("demoted").inc()
    return {"cache_id": cache_id, "signal": signal, "feedback_score": updated["feedback_score"],
            "state": updated["state"], "counted": updated["counted"], "promotion": updated["promotion"]}


@delete("/admin/sessions/{session_id:path}", guards=[admin_guard], status_code=200,
        summary="Invalidate every entry of a session (admin)")
async def delete_session(session_id: PurePosixPath, cache: SemanticCache, tenant: str | None = None) -> dict:
    # a path, not one segment: the session ids of a tenant with several keys hold a '/' (k<hex>/<id>)
    session_id = str(session_id).lstrip("/")
    await cache.settle()           # answers still being written count
    check_text_id(session_id, "session_id")
    if tenant:
        check_text_id(tenant, "tenant")
    count = await asyncio.to_thread(cache.store.invalidate, session_id=session_id, tenant=tenant, reason="admin")
    return {"session_id": session_id, "invalidated": count}


@post("/admin/invalidate", guards=[admin_guard], status_code=200,
      summary="Invalidate entries by cache_id, session_id, tenant, intent_domain or system_prompt_version (admin)")
async def invalidate(request: Request, cache: SemanticCache) -> dict:
    await cache.settle()           # answers still being written count
    body = decode_json_object(await request.body())
    unknown = set(body) - set(INVALIDATE_KEYS)
    if unknown:
        raise invalid(f"unknown key(s) {sorted(unknown)}; use any of {list(INVALIDATE_KEYS)}", sorted(unknown)[0])
    given = {k: v for k, v in body.items() if v is not None}
    if not given:
        raise invalid(f"give at least one of {list(INVALIDATE_KEYS)}", code="missing")
    bad = [k for k, v in given.items() if not isinstance(v, str) or not v]
    if bad:
        raise invalid(f"'{bad[0]}' must be a non-empty string", bad[0])
    for key, value in given.items():
        check_text_id(value, key)
    if "cache_id" in given and not is_cache_id(given["cache_id"]):
        return {"invalidated": 0, "where": given}          # no entry has that id: nothing to look up
    count = await asyncio.to_thread(lambda: cache.store.invalidate(**given, reason="admin"))
    return {"invalidated": count, "where": given}


@post("/admin/warmup", guards=[admin_guard], status_code=200, summary="Write known-good answers ready (admin)")
async def warmup(request: Request, cache: SemanticCache, settings: Settings) -> dict:
    body = decode_json_object(await request.body())
    entries = body.get("entries")
    if not isinstance(entries, list) or not entries:
        raise invalid("'entries' must be a non-empty list of {messages, answer, session_id?, tenant?, scope?}",
                      "entries")
    if len(entries) > MAX_WARMUP_ENTRIES:
        raise invalid(f"at most {MAX_WARMUP_ENTRIES} entries per call; send the rest in another", "entries")
    items = [check_entry(item, i, settings.max_messages, settings.max_cache_message_chars)
             for i, item in enumerate(entries)]
    results = await asyncio.to_thread(warm_all, cache.pipeline, items)
    return {"ids": [r["cache_id"] for r in results], "results": results,
            "written": sum(1 for r in results if r["cache_id"])}


async def _set_scope(cache_id: str, scope: str, action: str, cache: SemanticCache, metrics: GatewayMetrics) -> dict:
    await cache.settle()           # answers still being written count
    if not is_cache_id(cache_id) or not await asyncio.to_thread(cache.store.promote_scope, cache_id, scope):
        raise _not_found(cache_id)
    metrics.promotions.labels(action).inc()
    entry = await asyncio.to_thread(cache.store.get, cache_id)
    return {"cache_id": cache_id, "scope": entry["scope"], "state": entry["state"]}


@post("/admin/entries/{cache_id:str}/promote", guards=[admin_guard], status_code=200,
      summary="Promote an entry to the tenant's global pool (admin)")
async def promote(cache_id: str, cache: SemanticCache, metrics: GatewayMetrics) -> dict:
    return await _set_scope(cache_id, "global", "promote", cache, metrics)


@post("/admin/entries/{cache_id:str}/demote", guards=[admin_guard], status_code=200,
      summary="Take an entry out of the tenant's global pool, back to its own session (admin)")
async def demote(cache_id: str, cache: SemanticCache, metrics: GatewayMetrics) -> dict:
    return await _set_scope(cache_id, "session", "demote", cache, metrics)


@get("/admin/entries/{cache_id:str}/events", guards=[admin_guard],
     summary="An entry's history: ready, hits, feedback, invalidation (admin)")
async def get_entry_events(cache_id: str, cache: SemanticCache) -> dict:
    await cache.settle()           # answers still being written count
    if not is_cache_id(cache_id):
        raise _not_found(cache_id)
    events = await asyncio.to_thread(entry_events, cache.store, cache_id)
    # an entry evicted since keeps its history; an id with neither names nothing, as GET /admin/entries/{id}
    if not events and await asyncio.to_thread(cache.store.get, cache_id) is None:
        raise _not_found(cache_id)
    return {"cache_id": cache_id, "events": events}


@get("/admin/entries", guards=[admin_guard], summary="List entries, newest first, with filters (admin)")
async def list_entries(request: Request, cache: SemanticCache) -> dict:
    await cache.settle()           # answers still being written count
    params = request.query_params
    unknown = set(params) - set(ENTRY_FILTERS) - {"limit", "offset", "q"}
    if unknown:
        raise invalid(f"unknown filter(s) {sorted(unknown)}; use {list(ENTRY_FILTERS)}, limit, offset")
    try:
        limit, offset = int(params.get("limit", 100)), int(params.get("offset", 0))
    except ValueError:
        raise invalid("'limit' and 'offset' must be integers") from None
    if not 1 <= limit <= 1000 or not 0 <= offset <= MAX_OFFSET:
        raise invalid(f"'limit' must be between 1 and 1000 and 'offset' between 0 and {MAX_OFFSET}")
    filters = {k: check_text_id(params.get(k), k) for k in ENTRY_FILTERS if params.get(k)}
    text = params.get("q") or ""
    if len(text) > MAX_QUERY_CHARS or "\x00" in text:
        raise invalid(f"'q' must be at most {MAX_QUERY_CHARS} characters of text", "q")
    entries = await asyncio.to_thread(lambda: cache.store.list_entries(limit=limit, offset=offset, text=text,
                                                                       **filters))
    return {"entries": entries, "count": len(entries), "limit": limit, "offset": offset}


@get("/admin/promotions", guards=[admin_guard],
     summary="Entries promoted by evidence, shadow-promoted, candidates, demoted or rejected, with evidence (admin)")
async def list_promotions(cache: SemanticCache, settings: Settings,
                          wanted: str = Parameter(query="state", default="shadow,promoted"),
                          tenant: str | None = None, limit: int = 100) -> dict:
    await cache.settle()           # answers still being written count
    states = [s.strip() for s in wanted.split(",") if s.strip()]
    bad = [s for s in states if s not in PROMOTION_STATES]
    if bad or not states:
        raise invalid(f"'state' must be a comma-separated list of {list(PROMOTION_STATES)}", "state")
    if not 1 <= limit <= 1000:
        raise invalid("'limit' must be between 1 and 1000", "limit")
    if tenant is not None:
        tenant = check_text_id(tenant, "tenant")

    def collect() -> list[dict]:
        found = []
        for s in states:
            found += cache.store.list_entries(tenant=tenant, limit=limit, promotion=s)
        return sorted(found, key=lambda e: -e["seq"])[:limit]
    entries = [{k: e[k] for k in ("cache_id", "tenant", "session_id", "scope", "state", "promotion", "evidence",
                                  "intent_domain", "hit_count", "feedback_score", "created_at")}
               | {"request": _last_user_turn(e), "answer": e["answer_text"][:500]}
               for e in await asyncio.to_thread(collect)]
    return {"mode": settings.promotion, "min_sessions": settings.promotion_min_sessions,
            "counts": await asyncio.to_thread(cache.store.promotion_counts, tenant), "entries": entries,
            "count": len(entries)}


def _last_user_turn(entry: dict) -> str:
    return current_user_text(cached_messages(entry))[:500]


@get("/admin/entries/{cache_id:str}", guards=[admin_guard], summary="One entry (admin)")
async def get_entry(cache_id: str, cache: SemanticCache) -> dict:
    await cache.settle()           # answers still being written count
    entry = await asyncio.to_thread(cache.store.get, cache_id) if is_cache_id(cache_id) else None
    if entry is None:
        raise _not_found(cache_id)
    return entry


@get("/admin/stats", guards=[admin_guard], summary="Cache and gateway statistics (admin)")
async def admin_stats(state: State, metrics: GatewayMetrics, upstream: ReplicaSet) -> dict:
    await state.cache.settle()           # answers still being written count
    errors = {s.labels["kind"]: s.value for m in metrics.upstream_errors.collect() for s in m.samples
              if s.name.endswith("_total")}
    return {"uptime_s": round(time.monotonic() - state.started, 1), "backend": upstream.name,
            **metrics.rates(), "decision_latency": metrics.decision_quantiles(), "upstream_errors": errors,
            "cache": await asyncio.to_thread(state.store.stats), "breaker": state.cache.breaker.snapshot(),
            "routing": upstream.policy, "replicas": upstream.snapshot(),
            "health": await asyncio.to_thread(state.store.health)}


ADMIN_HANDLERS = [feedback, delete_session, invalidate, warmup, promote, demote, list_entries, list_promotions,
                  get_entry, get_entry_events, admin_stats]
