"""POST /v1/chat/completions: the request flow of DESIGN.md (decide, serve, write)."""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
from litestar import Request, Response, post
from litestar.response import Stream

from gateway.auth import authenticate, client_scope, is_trusted_caller
from gateway.scopes import SCOPE_SEP, scoped_session
from gateway.cache import CacheRequest, Decision, SemanticCache
from gateway.cache.request_params import GenerationParams
from gateway.cache.responses import (StreamCapture, approx_prompt_tokens, completion_body, estimate_usage,
                                     stream_chunks)
from gateway.errors import GatewayError
from gateway.metrics import GatewayMetrics
from gateway.ratelimit import RateLimiter
from gateway.settings import Settings
from gateway.tracing import Tracing
from gateway.routing import ReplicaSet
from gateway.upstream import HOP_HEADERS
from gateway.validation import decode_json_object, session_id, validate_chat
from validator.key_facts import message_text

log = logging.getLogger("semcache.gateway")


# Engine-internal fields: `forced_output` chooses the answer (and so what is cached for everyone),
# `cache_salt` chooses which tenant's KV blocks are shared. The tenant's salt is always the gateway's own.
INTERNAL_FIELDS = ("forced_output", "cache_salt")
# the gateway's own request extension (the PARTIAL's draft): a client's is dropped, the gateway sets it
EXTENSION_FIELD = "semcache"
MAX_DRAFT_CHARS = 64_000
# Top-level fields the cache models (the messages, GenerationParams, the features checked below) or that never
# change the answer's text (transport, accounting, who asks). Any other field with a value asks for something
# a stored answer does not record (logit_bias, reasoning_effort, audio, a backend's own sampling knobs): the
# request is forwarded as it is, so it gets what the backend gives it (an answer or the backend's own 400).
MODELLED_FIELDS = frozenset({
    "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "stop", "seed",
    "presence_penalty", "frequency_penalty", "stream", "stream_options", "user", "metadata", "store",
    "service_tier", "safety_identifier", "prompt_cache_key", "parallel_tool_calls", "n", "tools", "tool_choice",
    "functions", "function_call", "logprobs", "top_logprobs", "response_format", *INTERNAL_FIELDS,
    EXTENSION_FIELD})
_FIELD_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def unsupported_feature(body: dict, max_chars: int | None = None) -> str | None:
    """A request the cache does not model is forwarded as it is and never cached: features it does not record
    (tools, several choices, log-probabilities, JSON mode, images, named speakers, a field outside
    MODELLED_FIELDS), a message longer than `max_chars` (its fingerprint would cost far more than forwarding
    it), and a last message that is not the user's (an assistant prefill is continued by the model: an answer
    to it is no answer to the messages before it)."""
    if (body.get("n") or 1) > 1:
        return "n"
    if body.get("tools") or body.get("functions") or body.get("tool_choice"):
        return "tools"
    if body.get("logprobs") or body.get("top_logprobs"):
        return "logprobs"
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") not in (None, "text"):
        return "response_format"
    for name, value in body.items():
        if name not in MODELLED_FIELDS and not _neutral(name, value):
            # the field's name is the client's text: in the header only when it looks like a field name
            return name if _FIELD_NAME.fullmatch(name) else "param"
    messages = body["messages"]
    for message in messages:
        if message.get("role") in ("tool", "function") or message.get("tool_calls") or message.get("function_call"):
            return "tools"
        if message.get("name"):          # several speakers: the answer may depend on who asks ("my name?")
            return "name"
        content = message.get("content")
        if isinstance(content, list) and any(p.get("type") != "text" for p in content):
            return "content"
        if max_chars is not None and len(message_text(message)) > max_chars:
            return "too_long"
    return "prefill" if messages[-1].get("role") != "user" else None


def _neutral(name: str, value) -> bool:
    """An unmodelled field left at "nothing asked" (null, false, empty, text-only output)."""
    if name == "modalities":
        return value is None or value == ["text"]
    return value is None or value is False or value == {} or value == []


def strip_internal_fields(body: dict, raw: bytes, trusted: bool) -> tuple[dict, bytes]:
    """The body as it may travel upstream: no internal field from an untrusted client; a trusted caller
    (replay, with the admin token) keeps `forced_output`."""
    drop = [name for name in (*INTERNAL_FIELDS, EXTENSION_FIELD)
            if name in body and not (trusted and name == "forced_output")]
    if not drop:
        return body, raw
    body = {k: v for k, v in body.items() if k not in drop}
    return body, json.dumps(body, ensure_ascii=False).encode()


def conversation_id(tenant: str, messages: list[dict], scope: str | None = None) -> str:
    """A conversation id for a request that names none: its tenant (and client scope), system prompt and first
    user turn. Every later turn of a conversation repeats those, so it is searched within its own conversation."""
    system = "\n".join(message_text(m) for m in messages if m.get("role") in ("system", "developer"))
    first = next((message_text(m) for m in messages if m.get("role") == "user"), "")
    digest = hashlib.sha256("\0".join((tenant, scope or "", system, first)).encode("utf-8", "surrogatepass")).hexdigest()
    return (f"{scope}{SCOPE_SEP}" if scope else "") + "conv-" + digest[:32]


def cache_directives(request: Request) -> set[str]:
    return {d.strip().lower() for d in request.headers.get("cache-control", "").split(",") if d.strip()}


def _note(request: Request, **fields) -> None:
    request.scope.setdefault("state", {}).update(fields)     # picked up by the access log


def relayed_headers(response: httpx.Response) -> dict[str, str]:
    """The backend's response headers a client may see: not hop-by-hop, date, server or its own X-Cache*."""
    return {k: v for k, v in response.headers.items() if k.lower() not in HOP_HEADERS and k.lower() != "date"
            and k.lower() != "server" and not k.lower().startswith("x-cache")}


async def upstream_error(response: httpx.Response, metrics: GatewayMetrics, content: bytes | None = None) -> Response:
    """4xx from the backend passes through with its body; 5xx becomes a 502. Nothing is cached."""
    if content is None:
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


def _cache_headers(outcome: str, reason: str, cache_id: str | None, score: float | None) -> dict[str, str]:
    headers = {"X-Cache": outcome, "X-Cache-Reason": reason}
    if cache_id:
        headers["X-Cache-Id"] = cache_id
    if score is not None:
        headers["X-Cache-Score"] = f"{score:.4f}"
    return headers


class ChatTurn:
    """One chat-completion request on its way through the gateway."""

    def __init__(self, request: Request, body: dict, raw: bytes, req: CacheRequest, cache: SemanticCache,
                 upstream: ReplicaSet, metrics: GatewayMetrics, tracing: Tracing | None = None):
        self.request, self.body, self.raw, self.req = request, body, raw, req
        self.cache, self.upstream, self.metrics = cache, upstream, metrics
        self.tracing = tracing or Tracing()
        self.trusted = False              # the caller may use internal fields (replay with the admin token)
        self.draft_mode = "auto"          # settings.backend_draft
        self.stream = bool(body.get("stream"))
        self.include_usage = self.stream and bool((body.get("stream_options") or {}).get("include_usage"))
        self.started = time.perf_counter()
        texts = [message_text(m) for m in req.messages]
        self.prompt_chars = sum(map(len, texts))
        self.prompt_estimate = approx_prompt_tokens(texts)       # for an answer stored without token counts
        self.replica: str | None = None   # the backend replica that answered (several backends)
        self.reason, self.domain = "", None   # the decision's, for the labelled metrics
        self.first_byte = False
        # the request sent to the backend before the decision (forward_early): its exchange,
        # (headers, strip usage) and the key under which its draft may follow
        self.early_exchange: asyncio.Future | None = None
        self.early: tuple[dict[str, str], bool] | None = None
        self.draft_key = ""

    def decided(self, decision: Decision) -> None:
        self.reason = decision.reason
        self.domain = decision.fingerprint.tags.intent_domain if decision.fingerprint is not None else None
        self.metrics.gated(decision.gates)

    def first_byte_out(self, outcome: str) -> None:
        if not self.first_byte:
            self.first_byte = True
            self.metrics.ttft.labels(outcome).observe(time.perf_counter() - self.started)

    def done(self, outcome: str) -> None:
        self.metrics.requests.labels(outcome).inc()
        self.metrics.latency.labels(outcome).observe(time.perf_counter() - self.started)
        self.metrics.decided(outcome, self.reason or outcome.lower(), self.domain, self.req.tenant,
                             time.perf_counter() - self.started)

    # ---- answers without the backend --------------------------------------------
    def serve_cached(self, text: str, model: str | None, usage: dict, headers: dict[str, str]) -> Response | Stream:
        model = model or self.body.get("model") or "semcache"      # the model that produced the answer
        self.cache.saved(usage["prompt_tokens"], usage["completion_tokens"])
        self.done("HIT")
        self.first_byte_out("HIT")
        if self.stream:
            chunks = stream_chunks(text, model, usage, self.include_usage)

            async def replay() -> AsyncIterator[bytes]:
                for chunk in chunks:
                    yield chunk
            return Stream(replay(), media_type="text/event-stream", headers={**headers, "Cache-Control": "no-cache"})
        return Response(content=completion_body(text, model, usage), status_code=200, headers=headers)

    async def serve_hit(self, decision: Decision) -> Response | Stream:
        entry = decision.entry
        usage = estimate_usage(entry, self.prompt_chars, self.prompt_estimate)
        self.cache.later(self.cache.store.record_hit, entry["cache_id"],
                         usage["prompt_tokens"] + usage["completion_tokens"])
        if decision.reason != "duplicate":        # a retry keeps the original answer's turn record
            await self.cache.served(self.req, "HIT", entry["cache_id"], entry["answer_text"])
        headers = _cache_headers("HIT", decision.reason, entry["cache_id"], decision.score)
        return self.serve_cached(entry["answer_text"], (entry.get("usage") or {}).get("model"), usage, headers)

    # ---- answers from the backend ------------------------------------------------
    def prefetch(self, mode: str) -> None:
        """Before the decision: tell the bundled engine which prefix is coming, so that it loads the
        conversation's KV blocks from its host or disk tier while the cache decides (about 10 ms)."""
        req = self.req
        if mode == "off" or req.unsupported:
            return
        request_id = self.request.scope.get("state", {}).get("request_id", "")
        headers = self.upstream.headers(request_id, req.session_id, self.request.headers.get("authorization"),
                                        tenant_salt=req.tenant, trusted=self.trusted)
        body = json.dumps({"messages": self.body["messages"]}, ensure_ascii=False).encode()
        self.upstream.hint_soon(mode, "/v1/semcache/prefetch", headers, body, f"{req.tenant}\0{req.session_id}")

    def _upstream_request(self, extension: dict | None) -> tuple[dict[str, str], bytes, bool]:
        """(headers, body, whether to strip usage from the stream) of the request sent upstream."""
        raw, strip_usage, body = self.raw, False, self.body
        if extension:
            body = {**body, EXTENSION_FIELD: extension}
        if self.stream and not self.include_usage:
            # ask for usage (cached_tokens, completion tokens) and take it out again before the client sees it
            body = {**body, "stream_options": {**(body.get("stream_options") or {}), "include_usage": True}}
            strip_usage = True
        if body is not self.body:
            raw = json.dumps(body, ensure_ascii=False).encode()
        request_id = self.request.scope.get("state", {}).get("request_id", "")
        headers = self.upstream.headers(request_id, self.req.session_id, self.request.headers.get("authorization"),
                                        tenant_salt=self.req.tenant, trusted=self.trusted)
        return headers, raw, strip_usage

    def forward_early(self, mode: str) -> bool:
        """Before the decision: send the request to the backend now, so that a forwarded request does not wait
        for the decision. A HIT cancels it (`drop_early`). To the bundled engine (`auto` or `on`) it goes under
        a draft key, which a PARTIAL's draft follows; to another backend only with `on`, unchanged (that
        backend does the work of the requests a HIT cancels). Returns whether it went."""
        if mode == "off" or self.req.unsupported:
            return False
        bundled = self.upstream.bundled_now()
        if not bundled and mode != "on":
            return False
        self.draft_key = uuid.uuid4().hex if bundled else ""
        headers, raw, strip_usage = self._upstream_request({"draft_key": self.draft_key} if bundled else None)
        self.early = headers, strip_usage
        self.early_exchange = asyncio.ensure_future(self._exchange(headers, raw, early=True))
        return True

    async def drop_early(self) -> None:
        """The decision did not need the backend: stop the request sent early (the engine aborts it)."""
        exchange, self.early_exchange = self.early_exchange, None
        if exchange is None:
            return
        self.metrics.early_forwards.labels("cancelled").inc()
        exchange.cancel()
        await asyncio.gather(exchange, return_exceptions=True)
        if not exchange.cancelled() and exchange.exception() is None:
            response, _ = exchange.result()
            await response.aclose()           # a stream whose headers came in before the decision

    async def forward(self, decision: Decision, land) -> Response | Stream:
        """PARTIAL, MISS and BYPASS: forward with the session id (the backend reuses the session's KV prefix);
        write a complete answer when the decision allows it. `land(result)` releases coalesced followers."""
        req, draft = self.req, None
        if decision.outcome in ("PARTIAL", "MISS") and decision.entry and decision.entry.get("answer_text") \
                and decision.reason != "intent:switch" and await self.upstream.accepts_drafts(self.draft_mode):
            # the near answer is mostly kept by a changed request, in this conversation (PARTIAL) or another
            # one (MISS); not by another task (a switch). The engine verifies it as a draft, so the output is
            # the model's own either way, and it stops proposing from a draft whose tokens it keeps rejecting
            draft = decision.entry["answer_text"][:MAX_DRAFT_CHARS]
        elif self.cache.pipeline.wants_draft_elsewhere(req, decision) \
                and await self.upstream.accepts_drafts(self.draft_mode):
            # nothing near in this session: another session's answer to these very messages, as a draft only
            text = await self.cache.draft_elsewhere(req, decision)
            draft = text[:MAX_DRAFT_CHARS] if text else None
        if self.early_exchange is not None:
            headers, strip_usage = self.early
            exchange, self.early_exchange = self.early_exchange, None
            self.metrics.early_forwards.labels("used").inc()
            if draft and self.draft_key:
                body = json.dumps({"key": self.draft_key, "draft": draft}, ensure_ascii=False).encode()
                self.upstream.hint_soon(self.draft_mode, "/v1/semcache/draft", headers, body,
                                        f"{self.req.tenant}\0{self.req.session_id}")
        else:
            headers, raw, strip_usage = self._upstream_request({"draft": draft} if draft else None)
            exchange = asyncio.ensure_future(self._exchange(headers, raw))
        # the whole exchange (send, and for a non-stream answer the body) races the client's disconnect: an
        # engine sends its headers only when a non-stream answer is done, so waiting for them first would let
        # a request whose client has left run to the end
        disconnect = asyncio.ensure_future(_wait_disconnect(self.request))
        try:
            await asyncio.wait({exchange, disconnect}, return_when=asyncio.FIRST_COMPLETED)
            if not exchange.done():
                exchange.cancel()             # closes the upstream request: the backend stops generating
                await asyncio.gather(exchange, return_exceptions=True)
                return Response(content=b"", status_code=499)
        finally:
            for task in (disconnect, exchange):       # the exchange too, when this handler itself is cancelled
                if not task.done():
                    task.cancel()
            await asyncio.gather(disconnect, exchange, return_exceptions=True)
        response, content = exchange.result()
        if response.status_code >= 400:
            return await upstream_error(response, self.metrics, content)
        cache_id = uuid.uuid4().hex if decision.cacheable and req.store else None
        if self.stream:
            headers = _cache_headers(decision.outcome, decision.reason, cache_id, decision.score)
            return Stream(self._relay(response, decision, cache_id, StreamCapture(strip_usage), land),
                          media_type="text/event-stream", headers={**headers, "Cache-Control": "no-cache"})
        written = None
        try:
            answer = json.loads(content)
            choice = answer["choices"][0]
            message = choice.get("message") or {}
            text, finish = message.get("content") or "", choice.get("finish_reason")
            usage = {**(answer.get("usage") or {}), "model": answer.get("model")}
            complete = finish == "stop" and not message.get("tool_calls") and bool(text.strip())
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            text, usage, complete = "", {}, False
        self._count_backend_usage(usage)
        if complete and cache_id:
            written = self._write(decision, text, usage, cache_id)
        land({"text": text, "model": usage.get("model"), "usage": usage, "cache_id": written} if complete else None)
        await self.cache.served(req, decision.outcome, written, text)
        self.done(decision.outcome)
        self.first_byte_out(decision.outcome)
        headers = _cache_headers(decision.outcome, decision.reason, written, decision.score)
        return Response(content=content, status_code=response.status_code, media_type="application/json",
                        headers={**relayed_headers(response), **headers})

    async def _exchange(self, headers: dict[str, str], raw: bytes,
                        early: bool = False) -> tuple[httpx.Response, bytes | None]:
        """Send upstream; for a non-stream answer (or an error) also read the whole body. Cancelled, it closes
        the upstream request (the backend sees the disconnect)."""
        try:
            with self.tracing.span("semcache.upstream", stream=self.stream,
                                   **({"semcache.early_forward": True} if early else {})) as span:
                # a session's turns go to the replica that holds its KV blocks (the conversation id without one)
                try:
                    response = await self.upstream.send("POST", "/v1/chat/completions", headers, raw,
                                                        affinity=f"{self.req.tenant}\0{self.req.session_id}")
                except asyncio.CancelledError:
                    Tracing.annotate(span, **{"semcache.cancelled": True})      # a HIT, or the client left
                    raise
                self.replica = response.extensions.get("semcache_replica")
                Tracing.annotate(span, **{"semcache.replica": self.replica,
                                          "http.response.status_code": response.status_code})
        except GatewayError as exc:
            self.metrics.upstream_errors.labels("timeout" if exc.status == 504 else "connect").inc()
            raise
        _note(self.request, replica=self.replica)
        if self.stream and response.status_code < 400:
            return response, None
        try:
            return response, await response.aread()
        except httpx.TimeoutException:
            self.metrics.upstream_errors.labels("timeout").inc()
            raise GatewayError(504, "the backend did not finish in time", "upstream_error",
                               code="upstream_timeout") from None
        except httpx.TransportError as exc:
            self.metrics.upstream_errors.labels("connect").inc()
            raise GatewayError(502, f"the backend connection failed: {exc.__class__.__name__}", "upstream_error",
                               code="upstream_failed") from None
        finally:
            await response.aclose()

    async def _relay(self, response: httpx.Response, decision: Decision, cache_id: str | None,
                     capture: StreamCapture, land) -> AsyncIterator[bytes]:
        """SSE from the backend, chunk by chunk, read as it passes; a client disconnect closes the upstream.
        The answer's write starts when the backend's stream completes; the session's next turn waits for it."""
        finished = False
        try:
            async for chunk in response.aiter_raw():
                out = capture.feed(chunk)
                if capture.done and not finished:
                    finished = True
                    await self._finish_stream(decision, cache_id, capture, land)
                if out:
                    self.first_byte_out(decision.outcome)
                    yield out
            rest = capture.flush()
            if rest:
                yield rest
            if not finished:
                finished = True
                await self._finish_stream(decision, cache_id, capture, land)
        except httpx.HTTPError as exc:
            kind = "timeout" if isinstance(exc, httpx.TimeoutException) else "connect"
            self.metrics.upstream_errors.labels(kind).inc()
            error = GatewayError(504 if kind == "timeout" else 502,
                                 f"the backend stream broke: {exc.__class__.__name__}", "upstream_error",
                                 code=f"upstream_{kind}")
            yield b"data: " + json.dumps(error.body()).encode() + b"\n\n"
        finally:
            land(None)                    # no-op after _finish_stream; frees followers after a break
            await response.aclose()

    async def _finish_stream(self, decision: Decision, cache_id: str | None, capture: StreamCapture, land) -> None:
        usage = {**(capture.usage or {}), "model": capture.model}
        self._count_backend_usage(usage)
        written = None
        if capture.complete and cache_id:
            written = self._write(decision, capture.text, usage, cache_id)
        land({"text": capture.text, "model": capture.model, "usage": usage, "cache_id": written}
             if capture.complete else None)
        await self.cache.served(self.req, decision.outcome, written, capture.text)
        self.done(decision.outcome)

    def _count_backend_usage(self, usage: dict) -> None:
        cached = ((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        self.cache.saved(int(cached), 0)
        self.upstream.observe_usage(self.replica, usage)

    def _write(self, decision: Decision, text: str, usage: dict, cache_id: str) -> str | None:
        """Start writing a complete answer (it finishes after the response; SemanticCache.write_later) and
        return the id it is written under; None when nothing will be written."""
        if not (self.cache.touchable(self.req) and self.cache.pipeline.writable(self.req, decision, text)):
            return None
        self.cache.write_later(self.req, decision, text, usage, cache_id)
        return cache_id


@dataclass(frozen=True)
class ChatServices:
    """What a chat request uses, as one dependency: litestar resolves two or more dependencies of a handler
    concurrently in an anyio task group, which cost the chat route about 5% of the gateway's Python time under
    load (docs/benchmarks.md); one dependency is resolved inline."""
    upstream: ReplicaSet
    settings: Settings
    metrics: GatewayMetrics
    cache: SemanticCache
    limiter: RateLimiter
    tracing: Tracing


@post("/v1/chat/completions", status_code=200, summary="Create a chat completion (OpenAI-compatible, cached)")
async def chat_completions(request: Request, chat: ChatServices) -> Response | Stream:
    upstream, settings, metrics, cache, limiter, tracing = (chat.upstream, chat.settings, chat.metrics, chat.cache,
                                                            chat.limiter, chat.tracing)
    # the request's span; for a stream it ends when the relay starts (the upstream span covers the headers)
    with tracing.span("POST /v1/chat/completions", server=True, **{"http.request.method": "POST",
                                                                   "url.path": "/v1/chat/completions"}) as span:
        Tracing.annotate(span, **{"semcache.request_id": request.scope.get("state", {}).get("request_id")})
        response = await _chat(request, upstream, settings, metrics, cache, limiter, tracing, span)
        Tracing.annotate(span, **{"http.response.status_code": response.status_code})
        return response


async def _chat(request: Request, upstream: ReplicaSet, settings: Settings, metrics: GatewayMetrics,
                cache: SemanticCache, limiter: RateLimiter, tracing: Tracing, span) -> Response | Stream:
    tenant = authenticate(request, settings)
    await limiter.enforce(request, "chat")            # before the body is read: a refused request costs nothing
    raw = await request.body()
    body = decode_json_object(raw)
    validate_chat(body, settings.max_messages)
    trusted = is_trusted_caller(request, settings)
    body, raw = strip_internal_fields(body, raw, trusted)
    directives = cache_directives(request)
    scope = client_scope(request, settings, tenant)
    session = scoped_session(scope, session_id(request.headers, body))
    req = CacheRequest(tenant, session or conversation_id(tenant, body["messages"], scope), body["messages"],
                       serve="no-cache" not in directives, store="no-store" not in directives,
                       unsupported=unsupported_feature(body, settings.max_cache_message_chars),
                       params=GenerationParams.from_body(body), derived_session=session is None,
                       client_scope=scope)
    turn = ChatTurn(request, body, raw, req, cache, upstream, metrics, tracing)
    turn.trusted = trusted
    turn.draft_mode = settings.backend_draft
    _note(request, tenant=tenant, session_id=req.session_id)
    if settings.cache_mode == "off":
        decision = Decision("BYPASS", "cache:off", cacheable=False)
        turn.decided(decision)
        _note(request, cache="BYPASS", reason=decision.reason)
        return await turn.forward(decision, lambda result: None)

    key = (tenant, req.session_id, req.request_hash, req.params.key)
    leader = cache.join(key) if req.serve and not req.unsupported else None
    if leader is not None:
        try:
            result = await asyncio.wait_for(asyncio.shield(leader), settings.backend_timeout_s)
        except asyncio.TimeoutError:
            result = None                 # the leader never finished: answer this one on its own
        if result is not None:
            _note(request, cache="HIT", reason="coalesced", cache_id=result.get("cache_id"))
            turn.reason = "coalesced"
            headers = _cache_headers("HIT", "coalesced", result.get("cache_id"), None)
            usage = result.get("usage") or {}
            return turn.serve_cached(result["text"], result.get("model"), estimate_usage(
                {"usage": usage, "answer_tokens": usage.get("completion_tokens"), "answer_text": result["text"]},
                turn.prompt_chars, turn.prompt_estimate), headers)
    future = cache.lead(key)
    response, decision = None, None
    if not turn.forward_early(settings.backend_early_forward):
        turn.prefetch(settings.backend_prefetch)

    def land(result: dict | None) -> None:
        cache.land(key, future, result)

    try:
        with tracing.span("semcache.decide"):
            decision = await cache.decide(req)
        turn.decided(decision)
        record = decision.record()
        Tracing.annotate(span, **{"semcache.tenant": tenant, "semcache.cache": decision.outcome,
                                  "semcache.reason": decision.reason, "semcache.score": record["score"],
                                  "semcache.cache_id": record["cache_id"], "semcache.gates": record["gates"] or None,
                                  "semcache.timings_ms": record["timings_ms"] or None,
                                  "semcache.domain": turn.domain})
        _note(request, cache=decision.outcome, reason=decision.reason, score=record["score"],
              cache_id=record["cache_id"], decision={k: record[k] for k in ("gates", "timings_ms") if record[k]})
        if decision.outcome == "HIT":
            await turn.drop_early()
            entry = decision.entry
            land({"text": entry["answer_text"], "model": (entry.get("usage") or {}).get("model"),
                  "usage": entry.get("usage") or {}, "cache_id": entry["cache_id"]})
            response = await turn.serve_hit(decision)
        else:
            response = await turn.forward(decision, land)
        return response
    finally:
        await turn.drop_early()           # not taken by forward(): the decision failed or was cancelled
        if not isinstance(response, Stream) or (decision is not None and decision.outcome == "HIT"):
            land(None)                    # no-op when already landed; frees followers after an error
