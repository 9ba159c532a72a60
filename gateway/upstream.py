"""The OpenAI-compatible backend the gateway forwards to, over a pooled httpx transport.

Requests go straight to the transport (httpx's connection pool, with its
timeouts) rather than through `AsyncClient.send`: a proxy must not follow
redirects or keep cookies, and skipping that machinery halves the client's
per-request cost.

`SEMCACHE_BACKEND_URL=embedded` mounts the bundled engine's ASGI app in this
process behind the same client (see `open_upstream`, the one composition
point); any other value is a base URL such as http://backend:8001.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from typing import Callable
import secrets

import httpx

from gateway.asgi_transport import ASGILifespan, StreamingASGITransport
from gateway.errors import GatewayError
from gateway.settings import Settings, parse_size

log = logging.getLogger("semcache.gateway")

# the connection failed before any response byte: retried once (never a timeout, never after the headers)
RETRYABLE = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError, httpx.ConnectError)
HOP_HEADERS = {"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"}


class ShardedTransport(httpx.AsyncBaseTransport):
    """Several small httpx connection pools used round-robin.

    httpcore's pool scans every connection for every queued request, so one
    pool of 256 connections costs O(connections) per request under load (the
    gateway's CPU per request doubled at 32 concurrent requests); small shards
    keep that scan short.
    """

    def __init__(self, max_connections: int, per_shard: int = 8):
        shards = max(1, -(-max_connections // per_shard))
        limits = httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard)
        self.shards = [httpx.AsyncHTTPTransport(limits=limits, trust_env=False) for _ in range(shards)]
        self._next = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        shard = self.shards[self._next]
        self._next = (self._next + 1) % len(self.shards)
        return await shard.handle_async_request(request)

    async def aclose(self) -> None:
        for shard in self.shards:
            await shard.aclose()


def upstream_session_id(tenant: str | None, session_id: str) -> str:
    """The session id the backend sees: ASCII whatever the client sent (a header must be), and distinct per
    tenant, so two tenants' sessions of the same name never share the engine's session state."""
    return hashlib.sha256(f"{tenant or ''}\0{session_id}".encode()).hexdigest()[:32]


class Upstream:
    def __init__(self, transport: httpx.AsyncBaseTransport, base_url: str, timeout: httpx.Timeout,
                 api_key: str | None = None, auth_passthrough: bool = False, name: str = "upstream",
                 embedded: bool = False):
        self.transport = transport
        self.base_url = httpx.URL(base_url)
        self.timeout = timeout.as_dict()
        self._urls: dict[str, httpx.URL] = {}
        self.embedded = embedded
        self.api_key = api_key
        self.auth_passthrough = auth_passthrough
        self.name = name
        self.internal_token: str | None = None      # proves a trusted caller's internal fields to the engine
        self._exit_stack = contextlib.AsyncExitStack()
        self.on_retry: Callable[[str], None] | None = None     # counts retries (the app's metrics)

    def headers(self, request_id: str, session_id: str | None, client_auth: str | None,
                tenant_salt: str | None = None, trusted: bool = False) -> dict[str, str]:
        headers = {"content-type": "application/json", "x-request-id": request_id}
        if trusted and self.internal_token:
            headers["x-semcache-internal"] = self.internal_token
        if session_id:
            headers["x-session-id"] = upstream_session_id(tenant_salt, session_id)
        if tenant_salt:          # the tenant's hash: a backend (another company's, maybe) never sees its name
            headers["x-cache-salt"] = "sha256:" + hashlib.sha256(tenant_salt.encode()).hexdigest()[:32]
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        elif self.auth_passthrough and client_auth:    # as received: the server decoded the bytes as Latin-1
            headers["authorization"] = client_auth if client_auth.isascii() else client_auth.encode("latin-1")
        return headers

    async def send(self, method: str, path: str, headers: dict[str, str], body: bytes | None = None,
                   query: bytes = b"") -> httpx.Response:
        """Send and return once the status and headers are in; the body is read by the caller."""
        url = self._urls.get(path)
        if url is None:
            url = self.base_url.copy_with(path=self.base_url.path.rstrip("/") + path)
            if len(self._urls) < 64:       # the gateway's own routes; client-chosen passthrough paths are not kept
                self._urls[path] = url
        if query:
            url = url.copy_with(query=query)
        request = httpx.Request(method, url, headers=headers, content=body, extensions={"timeout": self.timeout})
        try:
            try:
                return await self.transport.handle_async_request(request)
            except RETRYABLE as exc:
                if self.embedded:
                    raise
                # no response byte came back: most likely a pooled keep-alive connection that the upstream
                # closed just as it was reused. Sending the request again once is safe and usually works.
                log.info("upstream connection failed before any response (%s); retrying once",
                         exc.__class__.__name__)
                if self.on_retry is not None:
                    self.on_retry(exc.__class__.__name__)
                request = httpx.Request(method, url, headers=headers, content=body,
                                        extensions={"timeout": self.timeout})
                return await self.transport.handle_async_request(request)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise GatewayError(502, f"cannot reach the backend at {self.name}: {exc.__class__.__name__}",
                               "upstream_error", code="upstream_unreachable") from None
        except httpx.TimeoutException:
            raise GatewayError(504, "the backend did not answer in time", "upstream_error",
                               code="upstream_timeout") from None
        except httpx.TransportError as exc:
            raise GatewayError(502, f"the backend connection failed: {exc.__class__.__name__}", "upstream_error",
                               code="upstream_failed") from None

    async def ready(self) -> bool:
        try:
            response = await self.send("GET", "/v1/models", {"x-request-id": "readyz"})
            await response.aclose()
            return response.status_code == 200
        except GatewayError:
            return False

    async def aclose(self) -> None:
        await self.transport.aclose()
        await self._exit_stack.aclose()


async def _embedded_app(settings: Settings, internal_token: str):
    from backend_engine import EngineConfig, LLMEngine        # the gateway's only import of the engine
    from backend_engine.server import create_app
    config = EngineConfig(model=settings.backend_model, kv_cache_memory=parse_size(settings.engine_kv_cache_memory),
                          max_model_len=settings.engine_max_model_len, data_dir=str(settings.data_dir),
                          models_dir=str(settings.model_dir), enable_prefix_caching=settings.engine_prefix_caching,
                          speculative=settings.engine_speculative, threads=settings.core_split()[0])
    engine = await asyncio.to_thread(LLMEngine, config)   # model load must not block the event loop
    return create_app(engine, internal_token=internal_token)


def _options(settings: Settings) -> tuple[httpx.Timeout, str | None, bool]:
    timeout = httpx.Timeout(settings.backend_timeout_s, connect=settings.connect_timeout_s)
    api_key = settings.backend_api_key.get_secret_value() if settings.backend_api_key else None
    return timeout, api_key, settings.backend_auth_passthrough and not settings.api_keys


def remote_upstream(settings: Settings, url: str, max_connections: int | None = None) -> Upstream:
    """An OpenAI-compatible backend at `url` (with or without the /v1 an OpenAI client would use)."""
    timeout, api_key, passthrough = _options(settings)
    base = url.rstrip("/").removesuffix("/v1")
    upstream = Upstream(ShardedTransport(max_connections or settings.max_connections), base, timeout, api_key,
                        passthrough, name=url)
    if settings.backend_internal_token:
        upstream.internal_token = settings.backend_internal_token.get_secret_value()
    return upstream


async def open_upstream(settings: Settings) -> Upstream:
    """The one backend of `backend_url`: the embedded engine in this process, or a remote one."""
    if not settings.embedded:
        return remote_upstream(settings, settings.backend_url)
    timeout, api_key, passthrough = _options(settings)
    internal_token = secrets.token_hex(16)      # the in-process engine trusts only this gateway
    app = await _embedded_app(settings, internal_token)
    upstream = Upstream(StreamingASGITransport(app, settings.backend_timeout_s), "http://embedded", timeout,
                        api_key, passthrough, name=f"embedded:{settings.backend_model}", embedded=True)
    upstream.internal_token = internal_token
    await upstream._exit_stack.enter_async_context(ASGILifespan(app))
    return upstream
