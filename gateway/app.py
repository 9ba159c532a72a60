"""The gateway's litestar app: the cached OpenAI-compatible endpoint, admin API and operations surface.

Resources (store, semantic cache, upstream client, metrics) are created in the
lifespan hook and reach handlers through dependency injection; nothing is global.
"""
from __future__ import annotations

import asyncio
import logging
import time
from contextlib import asynccontextmanager

from litestar import Litestar, Request, Response, get
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.openapi import OpenAPIConfig

from gateway.admin import ADMIN_HANDLERS
from gateway.auth import authenticate
from gateway.cache import SemanticCache
from gateway.chat import chat_completions
from gateway.errors import GatewayError
from gateway.logs import RequestContextMiddleware
from gateway.metrics import GatewayMetrics
from gateway.settings import Settings
from gateway.store import CacheStore, StoreConfig, open_store
from gateway.upstream import Upstream, open_upstream

log = logging.getLogger("semcache.gateway")
EXPIRY_SWEEP_S = 30.0


# ---- resources ----------------------------------------------------------------
def open_cache_store(settings: Settings) -> CacheStore:
    config = StoreConfig(ready_delay_s=settings.ready_delay_s, max_entries=settings.max_entries,
                         feedback_floor=settings.feedback_floor, index_dir=settings.data_dir / "index",
                         M=settings.hnsw_m, ef_construction=settings.hnsw_ef_construction,
                         ef_search=settings.hnsw_ef_search)
    config.ttl_s.update(settings.ttl_s)
    database = settings.database_url.get_secret_value() if settings.database_url else None
    redis_url = settings.redis_url.get_secret_value() if settings.redis_url else None
    return open_store(database, redis_url, settings.data_dir, config, redis_prefix=settings.redis_prefix)


async def store_upkeep(store: CacheStore, settings: Settings) -> None:
    """pending -> ready on time, TTL sweeps and index checkpoints, off the request path."""
    last_checkpoint = last_sweep = time.monotonic()
    while True:
        await asyncio.sleep(0.5)
        try:
            await asyncio.to_thread(store.promote_due)
            # search already hides expired entries; the sweep only marks them, so it need not run often
            if time.monotonic() - last_sweep >= EXPIRY_SWEEP_S:
                await asyncio.to_thread(store.expire)
                last_sweep = time.monotonic()
            if time.monotonic() - last_checkpoint >= settings.index_checkpoint_s:
                await asyncio.to_thread(store.checkpoint)
                last_checkpoint = time.monotonic()
        except Exception:                     # a database blip must not stop the upkeep loop
            log.exception("cache upkeep failed")


# ---- dependencies -------------------------------------------------------------
def provide_upstream(state: State) -> Upstream:
    return state.upstream


def provide_settings(state: State) -> Settings:
    return state.settings


def provide_metrics(state: State) -> GatewayMetrics:
    return state.metrics


def provide_cache(state: State) -> SemanticCache:
    return state.cache


@get("/v1/models", summary="List models (passed through from the backend)")
async def list_models(request: Request, upstream: Upstream, settings: Settings) -> Response:
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


@get("/readyz", summary="Readiness: the backend answers and the store is ready")
async def readyz(upstream: Upstream, state: State) -> Response:
    backend = await upstream.ready()
    store = await asyncio.to_thread(state.store.ready)
    ok = backend and store
    return Response(content={"status": "ready" if ok else "not_ready", "backend": backend, "store": store,
                             "backend_name": upstream.name}, status_code=200 if ok else 503)


@get("/metrics", media_type="text/plain; version=0.0.4", summary="Prometheus metrics")
async def metrics_endpoint(metrics: GatewayMetrics, upstream: Upstream) -> bytes:
    text = metrics.render()
    if upstream.embedded:       # one scrape target in the embedded default: append the engine's metrics
        response = await upstream.send("GET", "/metrics", {"x-request-id": "metrics"})
        text += await response.aread()
        await response.aclose()
    return text


# ---- errors ---------------------------------------------------------------------
def _gateway_error(_: Request, exc: GatewayError) -> Response:
    return Response(content=exc.body(), status_code=exc.status)


def _http_error(_: Request, exc: HTTPException) -> Response:
    codes = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}
    kind = "invalid_request_error" if exc.status_code < 500 else "server_error"
    return _gateway_error(_, GatewayError(exc.status_code, str(exc.detail), kind,
                                          code=codes.get(exc.status_code, str(exc.status_code))))


def _internal_error(_: Request, exc: Exception) -> Response:
    log.error("unhandled error", exc_info=exc)
    return _gateway_error(_, GatewayError(500, "internal error in the gateway", "server_error"))


# ---- app --------------------------------------------------------------------------
def create_app(settings: Settings | None = None, upstream: Upstream | None = None) -> Litestar:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: Litestar):
        app.state.store = await asyncio.to_thread(open_cache_store, settings)
        app.state.cache = await asyncio.to_thread(
            SemanticCache.build, app.state.store, app.state.metrics, settings.embedding_model, settings.model_dir,
            settings.risk_policy, settings.search_k, settings.duplicate_window_s,
            settings.cache_mode, settings.thresholds)
        app.state.upstream = upstream or await open_upstream(settings)
        upkeep = asyncio.create_task(store_upkeep(app.state.store, settings))
        log.info("gateway ready", extra={"fields": {"backend": app.state.upstream.name,
                                                    "indexed_entries": len(app.state.store.index)}})
        try:
            yield
        finally:
            upkeep.cancel()
            await asyncio.gather(upkeep, return_exceptions=True)
            await app.state.cache.drain()
            await app.state.upstream.aclose()
            await asyncio.to_thread(app.state.store.close)

    return Litestar(
        route_handlers=[chat_completions, list_models, healthz, readyz, metrics_endpoint, *ADMIN_HANDLERS],
        dependencies={"upstream": Provide(provide_upstream, sync_to_thread=False),
                      "settings": Provide(provide_settings, sync_to_thread=False),
                      "metrics": Provide(provide_metrics, sync_to_thread=False),
                      "cache": Provide(provide_cache, sync_to_thread=False)},
        lifespan=[lifespan],
        middleware=[RequestContextMiddleware],
        exception_handlers={GatewayError: _gateway_error, HTTPException: _http_error, Exception: _internal_error},
        request_max_body_size=settings.max_body_bytes,
        state=State({"settings": settings, "metrics": GatewayMetrics(), "started": time.monotonic()}),
        openapi_config=OpenAPIConfig(title="semcache gateway", version="0.1.0", path="/schema"),
        logging_config=None,          # JSON logging is configured by `semcache serve`
    )
