"""The gateway's litestar app: the cached OpenAI-compatible endpoint, admin API and operations surface.

Resources (store, semantic cache, upstream client, metrics) are created in the
lifespan hook and reach handlers through dependency injection; nothing is global.
"""
from __future__ import annotations

import asyncio
import gc
import logging
import time
from contextlib import asynccontextmanager

from litestar import Litestar, Request, Response, Router, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.openapi import OpenAPIConfig
from redis.exceptions import RedisError
from sqlalchemy.exc import SQLAlchemyError

from gateway.admin import ADMIN_HANDLERS
from gateway.auth import authenticate, operator_guard
from gateway.cache.promotion import PromotionConfig
from gateway.cache import SemanticCache
from gateway.cache.breaker import dependency_of
from gateway.chat import ChatServices, chat_completions
from gateway.dashboard import DASHBOARD_HANDLERS
from gateway.errors import GatewayError
from gateway.logs import RequestContextMiddleware
from gateway.metrics import GatewayMetrics
from gateway.passthrough import passthrough
from gateway.ratelimit import RateLimiter
from gateway.settings import Settings
from gateway.tracing import Tracing
from gateway.store import CacheStore, StoreConfig, open_store
from gateway.routing import ReplicaSet, open_backends
from gateway.upstream import Upstream
from validator.alignment import align, posseg

log = logging.getLogger("semcache.gateway")
EXPIRY_SWEEP_S = 30.0
FULL_CATCH_UP_S = 300.0       # a full index/database comparison (the incremental catch-up runs more often)
TIMELINE_FLUSH_S = 5.0        # the dashboard's counts reach the events table this often


# ---- resources ----------------------------------------------------------------
def open_cache_store(settings: Settings) -> CacheStore:
    config = StoreConfig(ready_delay_s=settings.ready_delay_s, max_entries=settings.max_entries,
                         feedback_floor=settings.feedback_floor,
                         feedback_max_score=settings.feedback_max_score, index_dir=settings.data_dir / "index",
                         M=settings.hnsw_m, ef_construction=settings.hnsw_ef_construction,
                         ef_search=settings.hnsw_ef_search)
    config.ttl_s.update(settings.ttl_s)
    database = settings.database_url.get_secret_value() if settings.database_url else None
    redis_url = settings.redis_url.get_secret_value() if settings.redis_url else None
    return open_store(database, redis_url, settings.data_dir, config, migrate=settings.migrate_on_start,
                      redis_prefix=settings.redis_prefix)


async def store_upkeep(store: CacheStore, settings: Settings, metrics: GatewayMetrics | None = None) -> None:
    """pending -> ready on time, index catch-up, TTL sweeps and index checkpoints, off the request path."""
    last_checkpoint = last_sweep = last_catch_up = last_full = last_timeline = time.monotonic()
    failing = False
    while True:
        await asyncio.sleep(0.5)
        try:
            await asyncio.to_thread(store.promote_due)
            # events lost while Redis was down (here or on another replica) reach the index from the database
            if time.monotonic() - last_catch_up >= settings.index_catch_up_s:
                full = time.monotonic() - last_full >= FULL_CATCH_UP_S
                changes = await asyncio.to_thread(store.catch_up, full)
                last_catch_up = time.monotonic()
                if full:
                    last_full = last_catch_up
                if changes.get("added") or changes.get("removed") or changes.get("rescoped"):
                    log.info("index caught up with the database", extra={"fields": changes})
                    if metrics is not None:
                        for action in ("added", "removed", "rescoped"):
                            if changes.get(action):
                                metrics.index_catch_up.labels(action).inc(changes[action])
            # search already hides expired entries; the sweep only marks them, so it need not run often
            if time.monotonic() - last_sweep >= EXPIRY_SWEEP_S:
                await asyncio.to_thread(store.expire)
                last_sweep = time.monotonic()
            if metrics is not None and time.monotonic() - last_timeline >= TIMELINE_FLUSH_S:
                last_timeline = time.monotonic()
                await asyncio.to_thread(metrics.timeline.flush, store)
            if time.monotonic() - last_checkpoint >= settings.index_checkpoint_s:
                await asyncio.to_thread(store.checkpoint)
                last_checkpoint = time.monotonic()
            if failing:
                log.warning("cache upkeep works again")
                failing = False
        except Exception as exc:              # a database blip must not stop the upkeep loop
            if not failing:                   # once per outage, not every half second
                log.warning("cache upkeep failed; retrying every 0.5 s: %s", exc.__class__.__name__,
                            exc_info=exc if dependency_of(exc) is None else None)
            failing = True


async def cache_recovery(cache: SemanticCache) -> None:
    """The cache comes back by itself: an open breaker closes as soon as its dependencies answer again."""
    while True:
        await asyncio.sleep(0.5)
        try:
            await cache.probe()
        except Exception:
            log.exception("cache recovery probe failed")


# ---- dependencies -------------------------------------------------------------
def provide_upstream(state: State) -> ReplicaSet:
    return state.upstream


def provide_settings(state: State) -> Settings:
    return state.settings


def provide_metrics(state: State) -> GatewayMetrics:
    return state.metrics


def provide_cache(state: State) -> SemanticCache:
    return state.cache


def provide_limiter(state: State) -> RateLimiter:
    return state.limiter


def provide_tracing(state: State) -> Tracing:
    return state.tracing


def provide_chat(state: State) -> ChatServices:
    return state.chat


@get("/v1/models", summary="List models (passed through from the backend)")
async def list_models(request: Request, upstream: ReplicaSet, settings: Settings) -> Response:
    authenticate(request, settings)
    request_id = request.scope.get("state", {}).get("request_id", "")
    response = await upstream.send("GET", "/v1/models", upstream.headers(request_id, None,
                                                                           request.headers.get("authorization")))
    content = await response.aread()
    await response.aclose()
    return Response(content=content, status_code=response.status_code if response.status_code < 500 else 502,
                    media_type=response.headers.get("content-type", "application/json"))


@get("/healthz", summary="Liveness: the process is up")
async def healthz() -> dict:
    return {"status": "ok"}


@get("/readyz", summary="Readiness: 200 while the backend answers (status ready, or degraded when the cache "
                          "is bypassed), 503 when it does not")
async def readyz(upstream: ReplicaSet, state: State) -> Response:
    """Each dependency on its own: the gateway serves (by forwarding) as long as the backend answers, so a
    database or Redis outage is `degraded`, not unready; the breaker says whether requests use the cache."""
    backend, health = await asyncio.gather(upstream.ready(), asyncio.to_thread(state.store.health))
    replicas = upstream.snapshot() if len(upstream.replicas) > 1 else None
    breaker = state.cache.breaker.snapshot()
    store = health["database"] and health["redis"] is not False
    cache_ok = store and breaker["state"] == "closed"
    status = ("ready" if cache_ok else "degraded") if backend else "not_ready"
    return Response(content={"status": status, "backend": backend, "database": health["database"],
                             "redis": health["redis"], "store": store,
                             "cache": "ok" if cache_ok else "bypassed" if breaker["state"] == "open" else "degraded",
                             "breaker": breaker, "backend_name": upstream.name,
                             **({"replicas": replicas} if replicas else {})},
                    status_code=200 if backend else 503)


@get("/metrics", media_type="text/plain; version=0.0.4", summary="Prometheus metrics", guards=[operator_guard])
async def metrics_endpoint(metrics: GatewayMetrics, upstream: ReplicaSet) -> bytes:
    text = metrics.render()
    if upstream.embedded:       # one scrape target in the embedded default: append the engine's metrics
        response = await upstream.send("GET", "/metrics", {"x-request-id": "metrics"})
        text += await response.aread()
        await response.aclose()
    return text


# ---- errors ---------------------------------------------------------------------
def _gateway_error(_: Request, exc: GatewayError) -> Response:
    return Response(content=exc.body(), status_code=exc.status, headers=exc.headers)


def _http_error(_: Request, exc: HTTPException) -> Response:
    codes = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}
    kind = "invalid_request_error" if exc.status_code < 500 else "server_error"
    return _gateway_error(_, GatewayError(exc.status_code, str(exc.detail), kind,
                                          code=codes.get(exc.status_code, str(exc.status_code))))


def _store_error(_: Request, exc: Exception) -> Response:
    """The database or Redis failed outside the chat path (feedback, admin): a 503, not a 500."""
    log.warning("cache store unavailable: %s", exc.__class__.__name__)
    return _gateway_error(_, GatewayError(503, f"the cache store is unavailable ({exc.__class__.__name__}); "
                                               "retry later", "server_error", code="store_unavailable"))


def _internal_error(_: Request, exc: Exception) -> Response:
    log.error("unhandled error", exc_info=exc)
    return _gateway_error(_, GatewayError(500, "internal error in the gateway", "server_error"))


def warm_segmenter() -> None:
    posseg().lcut("预热分词器")
    align("warm the lexicon", "wram the lexicon")       # the typo lexicon and its table of slips, built once


# ---- app --------------------------------------------------------------------------
def create_app(settings: Settings | None = None, upstream: Upstream | ReplicaSet | None = None,
               tracing: Tracing | None = None) -> Litestar:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: Litestar):
        app.state.limiter = RateLimiter.from_settings(settings, app.state.metrics)
        app.state.store = await asyncio.to_thread(open_cache_store, settings)
        app.state.cache = await asyncio.to_thread(
            SemanticCache.build, app.state.store, app.state.metrics, settings.embedding_model, settings.model_dir,
            settings.risk_policy, settings.search_k, settings.duplicate_window_s,
            settings.cache_mode, settings.thresholds, settings.core_split()[1],
            settings.breaker_failures, settings.breaker_cooldown_s, settings.hit_sampled_requests,
            PromotionConfig(settings.promotion, settings.promotion_min_sessions,
                            settings.promotion_answer_similarity),
            encoder_backend=settings.encoder_backend, gate_k=settings.gate_k)
        if isinstance(upstream, Upstream):
            app.state.upstream = ReplicaSet([(upstream, 1.0)], metrics=app.state.metrics)
        else:
            app.state.upstream = upstream or await open_backends(settings, app.state.metrics)
        app.state.upstream.on_retry = lambda error: app.state.metrics.upstream_retries.labels(error).inc()
        app.state.tracing = tracing or Tracing.from_env()
        app.state.cache.pipeline.tracing = app.state.tracing
        app.state.chat = ChatServices(app.state.upstream, settings, app.state.metrics, app.state.cache,
                                      app.state.limiter, app.state.tracing)
        upkeep = asyncio.create_task(store_upkeep(app.state.store, settings, app.state.metrics))
        recovery = asyncio.create_task(cache_recovery(app.state.cache))
        health = asyncio.create_task(app.state.upstream.health_loop())
        app.state.upstream.bundled_now()              # ask now whether it is the bundled engine (early forward)
        # the Chinese segmenter loads its dictionary on first use (about 1.2 s): here, not in the first Chinese
        # request after each start (it made that request 3x slower in the replay), and before the freeze below
        await asyncio.to_thread(warm_segmenter)
        # everything loaded so far (models, tokenizers, modules) lives as long as the process: out of the
        # collector's sight, a full collection no longer walks it and stops every request for a tenth of a second
        gc.collect()
        gc.freeze()
        log.info("gateway ready", extra={"fields": {"backend": app.state.upstream.name,
                                                    "indexed_entries": len(app.state.store.index)}})
        try:
            yield
        finally:
            for task in (upkeep, recovery, health):
                task.cancel()
            await asyncio.gather(upkeep, recovery, health, return_exceptions=True)
            await app.state.cache.drain()
            await app.state.upstream.aclose()
            await app.state.limiter.aclose()
            await asyncio.to_thread(app.state.store.close)
            app.state.tracing.shutdown()           # flushes spans still batched
            gc.unfreeze()                          # an app started again in this process (tests) frees this one

    return Litestar(
        route_handlers=[chat_completions, list_models, healthz, readyz, metrics_endpoint, *ADMIN_HANDLERS,
                        *DASHBOARD_HANDLERS,
                        passthrough],
        dependencies={"upstream": Provide(provide_upstream, sync_to_thread=False),
                      "settings": Provide(provide_settings, sync_to_thread=False),
                      "metrics": Provide(provide_metrics, sync_to_thread=False),
                      "cache": Provide(provide_cache, sync_to_thread=False),
                      "limiter": Provide(provide_limiter, sync_to_thread=False),
                      "tracing": Provide(provide_tracing, sync_to_thread=False),
                      "chat": Provide(provide_chat, sync_to_thread=False)},
        lifespan=[lifespan],
        middleware=[RequestContextMiddleware],
        exception_handlers={GatewayError: _gateway_error, HTTPException: _http_error, SQLAlchemyError: _store_error,
                            RedisError: _store_error, Exception: _internal_error},
        request_max_body_size=settings.max_body_bytes,
        state=State({"settings": settings, "started": time.monotonic(),
                     "metrics": GatewayMetrics(settings.metrics_tenant_label, settings.metrics_tenant_cap)}),
        openapi_config=OpenAPIConfig(title="semcache gateway", version="0.1.0",
                                     openapi_router=Router("/schema", route_handlers=[], guards=[operator_guard])),
        logging_config=None,          # JSON logging is configured by `semcache serve`
    )


def app_from_env() -> Litestar:
    """The app factory of `semcache serve --workers N` (uvicorn imports it in each worker process): the
    settings come from SEMCACHE_* variables and the config file, where the CLI put its overrides."""
    from gateway.logs import configure_logging
    settings = Settings()
    configure_logging(settings.log_level)
    return create_app(settings)
