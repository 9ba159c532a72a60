"""OpenAI-compatible HTTP server for the bundled engine (litestar)."""
from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator

from litestar import Litestar, Request, Response, get, post
from litestar.datastructures import State
from litestar.exceptions import HTTPException
from litestar.response import Stream

from backend_engine.async_engine import AsyncEngine, EngineDead
from backend_engine.llm_engine import LLMEngine, PromptTooLong, RequestOutput
from backend_engine.metrics import render
from backend_engine.protocol import (GenerationRequest, OpenAIError, bad, parse_chat, parse_completion,
                                      parse_late_draft, parse_prefetch)

log = logging.getLogger("semcache.engine.server")


def _error_response(exc: OpenAIError) -> Response:
    return Response(content=exc.body(), status_code=exc.status)


def _openai_error_handler(_: Request, exc: OpenAIError) -> Response:
    return _error_response(exc)


def _http_error_handler(_: Request, exc: HTTPException) -> Response:
    kind = "invalid_request_error" if exc.status_code < 500 else "server_error"
    return _error_response(OpenAIError(exc.status_code, str(exc.detail), kind, code=str(exc.status_code)))


def _internal_error_handler(_: Request, exc: Exception) -> Response:
    log.exception("unhandled error", exc_info=exc)
    return _error_response(OpenAIError(500, "internal error in the inference engine", "server_error"))


def _usage(out: RequestOutput) -> dict:
    usage = {"prompt_tokens": out.num_prompt_tokens, "completion_tokens": out.num_output_tokens,
             "total_tokens": out.num_prompt_tokens + out.num_output_tokens,
             "prompt_tokens_details": {"cached_tokens": out.num_cached_tokens}}
    if out.num_draft_tokens:          # an extension field: OpenAI clients ignore it
        usage["speculative"] = {"draft_tokens": out.num_draft_tokens, "accepted_tokens": out.num_accepted_tokens}
    return usage


def _sse(obj: dict) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


async def _wait_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


class EngineService:
    """Turns parsed OpenAI requests into engine calls and OpenAI responses."""

    def __init__(self, engine: AsyncEngine):
        self.async_engine = engine
        self.engine: LLMEngine = engine.engine

    def protected_tokens(self, req: GenerationRequest, prompt: list[int]) -> int:
        return self.engine.protected_prefix_len(req.messages, prompt) if req.messages else 0

    def prompt_ids(self, req: GenerationRequest) -> list[int]:
        if req.messages is not None:
            try:
                return self.engine.apply_chat_template(req.messages)
            except Exception as exc:   # template errors (e.g. role order) are the caller's input
                raise bad(f"the chat template rejected these messages: {exc}", "messages") from None
        if isinstance(req.prompt, str):
            return self.engine.tokenizer.encode(req.prompt, add_special_tokens=False)
        vocab = self.engine.model_config.vocab_size
        if max(req.prompt) >= vocab:
            raise bad(f"token id {max(req.prompt)} is out of range for a vocabulary of {vocab}", "prompt")
        return list(req.prompt)

    async def run(self, request: Request, req: GenerationRequest, chat: bool) -> Response | Stream:
        prompt = self.prompt_ids(req)
        if req.params.forced_text is not None:
            req.params.forced_token_ids = self.engine.tokenizer.encode(req.params.forced_text,
                                                                       add_special_tokens=False)
        request_id = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex
        session = request.headers.get("x-session-id")
        try:
            self.engine.check_prompt(len(prompt))
        except PromptTooLong as exc:
            raise OpenAIError(400, str(exc), code="context_length_exceeded", param="messages" if chat else "prompt")
        if not self.async_engine.healthy:
            raise OpenAIError(503, "the inference engine is not running", "server_error", code="engine_unavailable")
        outputs = self.async_engine.generate(request_id, prompt, req.params, req.cache_salt, session,
                                             self.protected_tokens(req, prompt))
        model = req.model or self.engine.model_name
        created = int(time.time())
        if req.stream:
            return Stream(self._stream(outputs, request_id, model, created, chat, req.include_usage),
                          media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
        collect = asyncio.ensure_future(self._collect(outputs))
        disconnect = asyncio.ensure_future(_wait_disconnect(request))
        done, _ = await asyncio.wait({collect, disconnect}, return_when=asyncio.FIRST_COMPLETED)
        if collect not in done:
            collect.cancel()            # closes the generator, which aborts the request in the engine
            await asyncio.gather(collect, return_exceptions=True)
            return Response(content=b"", status_code=499)
        disconnect.cancel()
        try:
            text, last = collect.result()
        except EngineDead as exc:
            raise OpenAIError(503, f"the inference engine failed: {exc}", "server_error") from None
        if chat:
            choice = {"index": 0, "message": {"role": "assistant", "content": text},
                      "logprobs": None, "finish_reason": last.finish_reason}
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": last.finish_reason}
        return Response(content={"id": request_id, "object": "chat.completion" if chat else "text_completion",
                                 "created": created, "model": model, "choices": [choice],
                                 "usage": _usage(last)})

    @staticmethod
    async def _collect(outputs: AsyncIterator[RequestOutput]) -> tuple[str, RequestOutput]:
        parts, last = [], None
        async for out in outputs:
            parts.append(out.text_delta)
            last = out
        return "".join(parts), last

    @staticmethod
    async def _stream(outputs: AsyncIterator[RequestOutput], request_id: str, model: str, created: int,
                      chat: bool, include_usage: bool) -> AsyncIterator[bytes]:
        kind = "chat.completion.chunk" if chat else "text_completion"

        def chunk(choices: list, usage: dict | None = None) -> bytes:
            obj = {"id": request_id, "object": kind, "created": created, "model": model, "choices": choices}
            if include_usage:
                obj["usage"] = usage
            return _sse(obj)

        if chat:
            yield chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                          "finish_reason": None}])
        last = None
        try:
            async for out in outputs:
                last = out
                if out.text_delta:
                    delta = {"content": out.text_delta} if chat else None
                    yield chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}] if chat
                                else [{"index": 0, "text": out.text_delta, "logprobs": None, "finish_reason": None}])
                if out.finished:
                    yield chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": out.finish_reason}]
                                if chat else
                                [{"index": 0, "text": "", "logprobs": None, "finish_reason": out.finish_reason}])
        except EngineDead as exc:
            yield _sse(OpenAIError(503, f"the inference engine failed: {exc}", "server_error").body())
            return
        if include_usage and last is not None:
            yield chunk([], _usage(last))
        yield b"data: [DONE]\n\n"


INTERNAL_HEADER = "x-semcache-internal"


def is_trusted(request: Request, internal_token: str | None) -> bool:
    """The caller holds the engine's internal token (the gateway does; clients never see it)."""
    given = request.headers.get(INTERNAL_HEADER, "")
    return bool(internal_token) and hmac.compare_digest(given.encode(), internal_token.encode())


def create_app(engine: LLMEngine, internal_token: str | None = None) -> Litestar:
    """The engine's ASGI app; the engine loop starts and stops with the app's lifespan. Internal fields
    (`forced_output`, a body `cache_salt`) are honoured only with `X-Semcache-Internal: <internal_token>`."""
    async_engine = AsyncEngine(engine)
    service = EngineService(async_engine)

    @post("/v1/chat/completions", status_code=200)
    async def chat_completions(request: Request) -> Response | Stream:
        return await service.run(request, parse_chat(await request.body(), request.headers.get("x-cache-salt"),
                                                     is_trusted(request, internal_token)), chat=True)

    @post("/v1/completions", status_code=200)
    async def completions(request: Request) -> Response | Stream:
        return await service.run(request, parse_completion(await request.body(), request.headers.get("x-cache-salt"),
                                                           is_trusted(request, internal_token)), chat=False)

    @post("/v1/semcache/prefetch", status_code=202)
    async def prefetch(request: Request) -> Response:
        """A hint that a request with this prefix is coming: start loading its KV blocks from the host and
        disk tiers into the pool now. Answers at once (202); other backends simply 404 it."""
        messages, prompt, salt = parse_prefetch(await request.body(), request.headers.get("x-cache-salt"),
                                                is_trusted(request, internal_token))
        if messages is not None:
            try:
                ids = engine.apply_chat_template(messages)
            except Exception as exc:
                raise bad(f"the chat template rejected these messages: {exc}", "messages") from None
        elif isinstance(prompt, str):
            ids = engine.tokenizer.encode(prompt, add_special_tokens=False)
        else:
            ids = list(prompt)
            if max(ids) >= engine.model_config.vocab_size:
                raise bad("token id out of range", "prompt_token_ids")
        enabled = engine.tiers is not None
        if enabled:
            async_engine.prefetch(ids, salt)
        return Response(content={"status": "accepted" if enabled else "ignored", "prompt_tokens": len(ids)},
                        status_code=202)

    @post("/v1/semcache/draft", status_code=202)
    async def late_draft(request: Request) -> Response:
        """The reference text for a request already sent with `semcache.draft_key`: the gateway forwards a
        request while it decides and sends the PARTIAL's matched answer once it knows it. Only the speed of
        that request changes (drafts are verified), so no caller can alter anyone's output with it."""
        key, draft = parse_late_draft(await request.body())
        ids = engine.tokenizer.encode(draft, add_special_tokens=False)
        if ids:
            async_engine.attach_draft(key, ids)
        return Response(content={"status": "accepted", "draft_tokens": len(ids)}, status_code=202)

    @get("/v1/models")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": engine.model_name, "object": "model", "created": 0,
                                            "owned_by": "semcache", "max_model_len": engine.capacity_tokens}]}

    @get("/healthz")
    async def healthz() -> Response:
        ok = async_engine.healthy
        return Response(content={"status": "ok" if ok else "engine_down"}, status_code=200 if ok else 503)

    @get("/metrics", media_type="text/plain; version=0.0.4")
    async def metrics() -> bytes:
        return render(engine)

    return Litestar(
        route_handlers=[chat_completions, completions, prefetch, late_draft, models, healthz, metrics],
        on_startup=[lambda: async_engine.start()],
        on_shutdown=[lambda: async_engine.shutdown()],
        exception_handlers={OpenAIError: _openai_error_handler, HTTPException: _http_error_handler,
                            Exception: _internal_error_handler},
        state=State({"engine": engine, "async_engine": async_engine}),
        openapi_config=None,
        logging_config=None,          # leave logging to the process (the gateway logs JSON)
    )
