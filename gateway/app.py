"""The gateway's litestar app: an OpenAI-compatible proxy with the operations surface.

Resources (upstream client, metrics) are created in the lifespan hook and
reach handlers through dependency injection; nothing is global.
"""
from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from litestar import Litestar, Request, Response, get, post
from litestar.datastructures import State
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.openapi import OpenAPIConfig
from litestar.response import Stream

from gateway.errors import GatewayError
from gateway.logs import RequestContextMiddleware
from gateway.metrics import GatewayMetrics
from gateway.settings import Settings
from gateway.store import CacheStore, StoreConfig, open_store
from gateway.upstream import HOP_HEADERS, Upstream, open_upstream
from gateway.validation import decode_json_object, session_id, validate_chat

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
    return open_store(database, redis_url, settings.data_dir, config)


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


def authenticate(request: Request, settings: Settings) -> str:
    """The tenant: from the API key when keys are configured (never from a header), else 'default'."""
    if not settings.api_keys:
        return "default"
    scheme, _, key = request.headers.get("authorization", "").partition(" ")
    tenant = settings.api_keys.get(key.strip()) if scheme.lower() == "bearer" else None
    if tenant is None:
        raise GatewayError(401, "a valid API key is required: send 'Authorization: Bearer <key>'",
                           code="invalid_api_key")
    return tenant


def admin_guard(connection, _handler) -> None:
    settings: Settings = connection.app.state.settings
    token = settings.admin_token.get_secret_value() if settings.admin_token else ""
    scheme, _, given = connection.headers.get("authorization", "").partition(" ")
    if not token or scheme.lower() != "bearer" or given.strip() != token:
        raise GatewayError(401, "the admin API needs 'Authorization: Bearer <SEMCACHE_ADMIN_TOKEN>'"
                           + ("" if token else " (no admin token is configured)"), code="invalid_admin_token")


# ---- helpers --------------------------------------------------------------------
def _note(request: Request, **fields) -> None:
    request.scope.setdefault("state", {}).update(fields)     # picked up by the access log


def _cache_policy(request: Request) -> tuple[str, str]:
    directives = {d.strip().lower() for d in request.headers.get("cache-control", "").split(",") if d.strip()}
    if "no-cache" in directives:
        return "BYPASS", "client:no-cache"
    if "no-store" in directives:
        return "MISS", "client:no-store"
    return "MISS", "no_entry"


def _passthrough_headers(response: httpx.Response) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.lower() not in HOP_HEADERS and k.lower() != "date"
            and k.lower() != "server" and not k.lower().startswith("x-cache")}


async def _upstream_error(response: httpx.Response, metrics: GatewayMetrics) -> Response:
    """4xx from the backend passes through with its body; 5xx becomes a 502."""
    content = await response.aread()
    await response.aclose()
    if response.status_code < 500:
        return Response(content=content, status_code=response.status_code,
                        media_type=response.headers.get("content-type", "application/json"))
    metrics.upstream_errors.labels("status_5xx").inc()
    raise GatewayError(502, f"the backend failed with HTTP {response.status_code}", "upstream_error",
                       code="upstream_error")


async def _wait_disconnect(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


# ---- handlers -------------------------------------------------------------------
@post("/v1/chat/completions", status_code=200, summary="Create a chat completion (OpenAI-compatible)")
async def chat_completions(request: Request, upstream: Upstream, settings: Settings,
                           metrics: GatewayMetrics) -> Response | Stream:
    started = time.perf_counter()
    tenant = authenticate(request, settings)
    raw = await request.body()
    body = decode_json_object(raw)
    validate_chat(body, settings.max_messages)
    session = session_id(request.headers, body)
    outcome, reason = _cache_policy(request)
    _note(request, tenant=tenant, session_id=session, cache=outcome, reason=reason)
    request_id = request.scope.get("state", {}).get("request_id", "")
    headers = upstream.headers(request_id, session, request.headers.get("authorization"), tenant_salt=tenant)
    try:
        response = await upstream.send("POST", "/v1/chat/completions", headers, raw)
    except GatewayError as exc:
        metrics.upstream_errors.labels("timeout" if exc.status == 504 else "connect").inc()
        raise
    if response.status_code >= 400:
        return await _upstream_error(response, metrics)
    cache_headers = {"X-Cache": outcome, "X-Cache-Reason": reason}

    def done() -> None:
        metrics.requests.labels(outcome).inc()
        metrics.latency.labels(outcome).observe(time.perf_counter() - started)

    if body.get("stream"):
        return Stream(_relay(response, metrics, done), media_type="text/event-stream",
                      headers={**cache_headers, "Cache-Control": "no-cache"})
    read = asyncio.ensure_future(response.aread())
    disconnect = asyncio.ensure_future(_wait_disconnect(request))
    finished, _ = await asyncio.wait({read, disconnect}, return_when=asyncio.FIRST_COMPLETED)
    if read not in finished:
        read.cancel()
        await asyncio.gather(read, return_exceptions=True)
        await response.aclose()            # the backend sees the disconnect and stops generating
        return Response(content=b"", status_code=499)
    disconnect.cancel()
    try:
        content = read.result()
    except httpx.TimeoutException:
        metrics.upstream_errors.labels("timeout").inc()
        raise GatewayError(504, "the backend did not finish in time", "upstream_error",
                           code="upstream_timeout") from None
    except httpx.TransportError as exc:
        metrics.upstream_errors.labels("connect").inc()
        raise GatewayError(502, f"the backend connection failed: {exc.__class__.__name__}", "upstream_error",
                           code="upstream_failed") from None
    finally:
        await response.aclose()
    done()
    return Response(content=content, status_code=response.status_code, media_type="application/json",
                    headers={**_passthrough_headers(response), **cache_headers})


async def _relay(response: httpx.Response, metrics: GatewayMetrics, done) -> AsyncIterator[bytes]:
    """SSE bytes from the backend, chunk by chunk; a client disconnect closes the upstream stream."""
    try:
        async for chunk in response.aiter_raw():
            yield chunk
        done()
    except httpx.HTTPError as exc:
        kind = "timeout" if isinstance(exc, httpx.TimeoutException) else "connect"
        metrics.upstream_errors.labels(kind).inc()
        error = GatewayError(504 if kind == "timeout" else 502, f"the backend stream broke: {exc.__class__.__name__}",
                             "upstream_error", code=f"upstream_{kind}")
        yield b"data: " + json.dumps(error.body()).encode() + b"\n\n"
    finally:
        await response.aclose()


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


@get("/admin/stats", guards=[admin_guard], summary="Gateway statistics (admin)")
async def admin_stats(state: State, metrics: GatewayMetrics, upstream: Upstream) -> dict:
    requests = {s.labels["cache"]: s.value for m in metrics.requests.collect() for s in m.samples
                if s.name.endswith("_total")}
    errors = {s.labels["kind"]: s.value for m in metrics.upstream_errors.collect() for s in m.samples
              if s.name.endswith("_total")}
    return {"uptime_s": round(time.monotonic() - state.started, 1), "backend": upstream.name,
            "requests": requests, "upstream_errors": errors, "cache": await asyncio.to_thread(state.store.stats)}


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
        app.state.upstream = upstream or await open_upstream(settings)
        upkeep = asyncio.create_task(store_upkeep(app.state.store, settings))
        log.info("gateway ready", extra={"fields": {"backend": app.state.upstream.name,
                                                    "indexed_entries": len(app.state.store.index)}})
        try:
            yield
        finally:
            upkeep.cancel()
            await asyncio.gather(upkeep, return_exceptions=True)
            await app.state.upstream.aclose()
            await asyncio.to_thread(app.state.store.close)

    return Litestar(
        route_handlers=[chat_completions, list_models, healthz, readyz, metrics_endpoint, admin_stats],
        dependencies={"upstream": Provide(provide_upstream, sync_to_thread=False),
                      "settings": Provide(provide_settings, sync_to_thread=False),
                      "metrics": Provide(provide_metrics, sync_to_thread=False)},
        lifespan=[lifespan],
        middleware=[RequestContextMiddleware],
        exception_handlers={GatewayError: _gateway_error, HTTPException: _http_error, Exception: _internal_error},
        request_max_body_size=settings.max_body_bytes,
        state=State({"settings": settings, "metrics": GatewayMetrics(), "started": time.monotonic()}),
        openapi_config=OpenAPIConfig(title="semcache gateway", version="0.1.0", path="/schema"),
        logging_config=None,          # JSON logging is configured by `semcache serve`
    )
