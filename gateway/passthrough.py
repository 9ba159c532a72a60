"""Every other `/v1/*` route (completions, embeddings, responses, files, ...) passes through to the backend as
BYPASS: the same authentication, rate limit and error mapping as the chat route, streaming as it comes, and
nothing is cached. The cache models chat conversations only."""
from __future__ import annotations

import json
from collections.abc import AsyncIterator
from urllib.parse import quote

import httpx
from litestar import Request, Response, route
from litestar.response import Stream

from gateway.auth import authenticate
from gateway.chat import INTERNAL_FIELDS, relayed_headers, upstream_error
from gateway.errors import GatewayError
from gateway.metrics import GatewayMetrics
from gateway.ratelimit import RateLimiter
from gateway.settings import Settings
from gateway.routing import ReplicaSet

METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def _without_internal_fields(raw: bytes, content_type: str) -> bytes:
    """A JSON body loses the engine's internal fields here too (`/v1/completions` honours them)."""
    if not raw or "json" not in content_type:
        return raw
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return raw                               # the backend answers malformed JSON with its own 400
    if not isinstance(body, dict) or not any(name in body for name in INTERNAL_FIELDS):
        return raw
    return json.dumps({k: v for k, v in body.items() if k not in INTERNAL_FIELDS}).encode()


def _upstream_target(path: str, query: bytes) -> tuple[str, bytes]:
    """The route's path (decoded by the server) and the raw query, encoded again for the upstream request:
    NUL, '?', '#', spaces or non-ASCII in them are escapes, never an invalid URL; dot segments, which the
    URL would resolve out of /v1, are refused."""
    if any(segment in (".", "..") for segment in path.split("/")):
        raise GatewayError(404, "no such route", code="not_found")
    if path.strip("/").split("/", 1)[0].lower() == "semcache":
        # the bundled engine's own routes (KV prefetch, late drafts) take the gateway's notes, not a client's
        raise GatewayError(404, "no such route", code="not_found")
    return "/v1" + quote(path, safe="/:@!$&'()*+,;=-._~"), quote(query, safe="=&+%/:@!$'()*,;?-._~").encode()


async def _relay(response: httpx.Response) -> AsyncIterator[bytes]:
    try:
        async for chunk in response.aiter_raw():
            yield chunk
    except httpx.HTTPError as exc:            # the stream broke after the headers went out: say so in-band
        error = GatewayError(502, f"the backend stream broke: {exc.__class__.__name__}", "upstream_error",
                             code="upstream_failed")
        yield b"data: " + json.dumps(error.body()).encode() + b"\n\n"
    finally:
        await response.aclose()


@route("/v1/{path:path}", http_method=METHODS, summary="Any other OpenAI route, passed through (BYPASS)")
async def passthrough(request: Request, path: str, upstream: ReplicaSet, settings: Settings, metrics: GatewayMetrics,
                      limiter: RateLimiter) -> Response | Stream:
    tenant = authenticate(request, settings)
    await limiter.enforce(request, "chat")
    content_type = request.headers.get("content-type", "application/json")
    target, query = _upstream_target(path, request.scope.get("query_string", b""))
    raw = _without_internal_fields(await request.body(), content_type)
    request_id = request.scope.get("state", {}).get("request_id", "")
    headers = {**upstream.headers(request_id, None, request.headers.get("authorization"), tenant_salt=tenant),
               # as received (the server decoded the bytes as Latin-1): a header value must be bytes on the wire
               "content-type": content_type if content_type.isascii() else content_type.encode("latin-1")}
    request.scope.setdefault("state", {}).update(tenant=tenant, cache="BYPASS", reason="route:passthrough")
    try:
        response = await upstream.send(request.method, target, headers, raw or None, query=query)
    except GatewayError as exc:
        metrics.upstream_errors.labels("timeout" if exc.status == 504 else "connect").inc()
        raise
    cache_headers = {"X-Cache": "BYPASS", "X-Cache-Reason": "route:passthrough"}
    if response.status_code >= 500:
        await upstream_error(response, metrics)          # a 502, as for chat
    passed = {k: v for k, v in relayed_headers(response).items() if k.lower() != "content-type"}
    metrics.requests.labels("BYPASS").inc()
    metrics.decided("BYPASS", "route:passthrough", None, tenant)
    return Stream(_relay(response), status_code=response.status_code,
                  media_type=response.headers.get("content-type", "application/json"),
                  headers={**passed, **cache_headers})
