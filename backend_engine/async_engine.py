"""Runs the engine's step loop on a worker thread and streams outputs to asyncio callers."""
from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator

from backend_engine.llm_engine import LLMEngine, RequestOutput
from backend_engine.sampling import SamplingParams

log = logging.getLogger("semcache.engine")


class EngineDead(RuntimeError):
    pass


class AsyncEngine:
    def __init__(self, engine: LLMEngine):
        self.engine = engine
        # callers never touch the engine directly: a long prefill step must not block the event loop
        self._commands: deque[tuple[str, tuple]] = deque()
        self._wake = threading.Event()
        self._queues: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = {}
        self._stop = False
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="semcache-engine", daemon=True)
            self._thread.start()

    def shutdown(self) -> None:
        self._stop = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self.engine.close()

    @property
    def healthy(self) -> bool:
        return self._error is None and self._thread is not None and self._thread.is_alive()

    async def generate(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                       cache_salt: str = "", session_id: str | None = None,
                       protected_tokens: int = 0) -> AsyncIterator[RequestOutput]:
        """Yields outputs until the request finishes; closing the iterator aborts the request."""
        if not self.healthy:
            raise EngineDead(f"the engine is not running: {self._error!r}")
        self.engine.check_prompt(len(prompt_token_ids))       # raises PromptTooLong before queueing
        queue: asyncio.Queue = asyncio.Queue()
        self._queues[request_id] = (asyncio.get_running_loop(), queue)
        self._commands.append(("add", (request_id, prompt_token_ids, params, cache_salt, session_id,
                                       protected_tokens)))
        self._wake.set()
        finished = False
        try:
            while True:
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise EngineDead(str(item)) from item
                yield item
                if item.finished:
                    finished = True
                    return
        finally:
            self._queues.pop(request_id, None)
            if not finished:
                self._commands.append(("abort", (request_id,)))   # client went away: free its blocks
                self._wake.set()

    def prefetch(self, prompt_token_ids: list[int], cache_salt: str = "") -> None:
        """Queue a prefetch hint: the engine thread starts loading the prefix from the KV tiers."""
        self._commands.append(("prefetch", (prompt_token_ids, cache_salt)))
        self._wake.set()

    def attach_draft(self, key: str, draft_ids: list[int]) -> None:
        """Queue a late draft for the request running under `key` (LLMEngine.attach_draft)."""
        self._commands.append(("draft", (key, draft_ids)))
        self._wake.set()

    def _deliver(self, request_id: str, item) -> None:
        target = self._queues.get(request_id)
        if target is not None:
            loop, queue = target
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def _apply_commands(self) -> None:
        while self._commands:
            kind, args = self._commands.popleft()
            if kind == "abort":
                self.engine.abort(*args)
                continue
            if kind == "draft":
                self.engine.attach_draft(*args)
                continue
            if kind == "prefetch":
                try:
                    self.engine.prefetch(*args)
                except Exception:            # a hint: failing it costs a recompute, never a request
                    log.exception("prefetch failed")
                continue
            try:
                self.engine.add_request(*args)
            except Exception as exc:
                self._deliver(args[0], exc)

    def _loop(self) -> None:
        while not self._stop:
            self._wake.clear()
            self._apply_commands()
            if not self.engine.has_work():
                self._wake.wait(timeout=0.5)
                continue
            try:
                outputs = self.engine.step()
            except Exception as exc:                 # keep serving health/metrics, fail the requests
                log.exception("engine step failed")
                self._error = exc
                for rid in list(self._queues):
                    self._deliver(rid, exc)
                return
            for out in outputs:
                self._deliver(out.request_id, out)
