"""httpx transport that calls an ASGI app in-process, streaming the response as it is produced.

httpx's own ASGITransport buffers the whole body, which would turn SSE into one
late blob; this one hands each `http.response.body` message to the reader as it
arrives, and closing the response tells the app the client disconnected.
"""
from __future__ import annotations

import asyncio
import contextlib

import httpx

DISCONNECT_GRACE_S = 2.0


async def _stop(task: asyncio.Task, grace_s: float) -> None:
    """Give the app `grace_s` to finish on its own after http.disconnect (a handler racing its work against
    the disconnect cancels that work itself; cancelling the handler first could leave it running), then
    cancel it and wait for it to end."""
    if task.done():
        return
    await asyncio.wait({task}, timeout=grace_s)
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


class _QueueStream(httpx.AsyncByteStream):
    def __init__(self, queue: asyncio.Queue, task: asyncio.Task, disconnected: asyncio.Event, read_timeout: float):
        self._queue, self._task, self._disconnected, self._timeout = queue, task, disconnected, read_timeout

    async def __aiter__(self):
        while True:
            try:
                item = await asyncio.wait_for(self._queue.get(), self._timeout)
            except asyncio.TimeoutError:
                raise httpx.ReadTimeout("the embedded backend sent nothing in time") from None
            if item is None:
                return
            if isinstance(item, BaseException):
                raise httpx.RemoteProtocolError(f"the embedded backend failed: {item!r}") from item
            yield item

    async def aclose(self) -> None:
        self._disconnected.set()            # the app sees http.disconnect and cancels its work
        if not self._task.done():
            await asyncio.sleep(0)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task


class StreamingASGITransport(httpx.AsyncBaseTransport):
    def __init__(self, app, read_timeout: float = 300.0):
        self.app = app
        self.read_timeout = read_timeout

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": request.method,
            "scheme": request.url.scheme, "path": request.url.path, "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query, "root_path": "",
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "server": ("embedded", 80), "client": ("127.0.0.1", 0),
        }
        sent = False
        disconnected = asyncio.Event()
        loop = asyncio.get_running_loop()
        started: asyncio.Future = loop.create_future()
        queue: asyncio.Queue = asyncio.Queue()

        async def receive():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            if message["type"] == "http.response.start":
                if not started.done():
                    started.set_result(message)
            elif message["type"] == "http.response.body":
                if message.get("body"):
                    queue.put_nowait(message["body"])
                if not message.get("more_body", False):
                    queue.put_nowait(None)

        async def run():
            try:
                await self.app(scope, receive, send)
            except BaseException as exc:      # noqa: BLE001 - surfaced to the reader, then re-raised
                if not started.done():
                    started.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
                queue.put_nowait(exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
            else:
                if not started.done():
                    started.set_exception(RuntimeError("the embedded backend sent no response"))
                queue.put_nowait(None)

        task = asyncio.create_task(run())
        try:
            start = await asyncio.wait_for(asyncio.shield(started), self.read_timeout)
        except asyncio.TimeoutError:
            disconnected.set()
            started.add_done_callback(lambda f: f.cancelled() or f.exception())
            await _stop(task, DISCONNECT_GRACE_S)
            raise httpx.ReadTimeout("the embedded backend did not answer in time") from None
        except asyncio.CancelledError:
            # the caller gave up before the headers (its client left): the app sees http.disconnect, then is
            # cancelled, so the engine aborts the generation instead of running it to the end
            disconnected.set()
            started.add_done_callback(lambda f: f.cancelled() or f.exception())   # nobody reads it now
            await _stop(task, DISCONNECT_GRACE_S)
            raise
        return httpx.Response(status_code=start["status"], headers=start.get("headers", []),
                              stream=_QueueStream(queue, task, disconnected, self.read_timeout), request=request)


class ASGILifespan:
    """Runs an ASGI app's lifespan (startup/shutdown hooks) when it is mounted in-process."""

    def __init__(self, app):
        self.app = app
        self._inbox: asyncio.Queue = asyncio.Queue()
        self._outbox: asyncio.Queue = asyncio.Queue()
        self._task: asyncio.Task | None = None

    async def _expect(self, kind: str) -> None:
        message = await self._outbox.get()
        if message["type"] != f"lifespan.{kind}.complete":
            raise RuntimeError(f"embedded app {kind} failed: {message.get('message', message)}")

    async def __aenter__(self):
        self._task = asyncio.create_task(self.app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}},
                                                  self._inbox.get, self._outbox.put))
        await self._inbox.put({"type": "lifespan.startup"})
        await self._expect("startup")
        return self

    async def __aexit__(self, *exc) -> None:
        await self._inbox.put({"type": "lifespan.shutdown"})
        await self._expect("shutdown")
        await self._task
