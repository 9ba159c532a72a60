"""Structured JSON logs and the request-id middleware (X-Request-Id in and out)."""
from __future__ import annotations

import json
import logging
import os
import re
import time
import uuid

_SAFE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
access_log = logging.getLogger("semcache.access")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {"ts": round(record.created, 3), "level": record.levelname.lower(), "logger": record.name,
                 "msg": record.getMessage()}
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure_logging(level: str = "info") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("httpx").setLevel(logging.WARNING)      # one line per upstream call is noise


class RequestContextMiddleware:
    """Gives every HTTP request an id (the client's X-Request-Id if sane), echoes it, logs one line."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-request-id"), "")
        request_id = incoming if _SAFE_ID.match(incoming) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        started = time.perf_counter()
        status = {"code": 500}
        worker = str(os.getpid()).encode()

        async def send_with_id(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode()),
                                      (b"x-semcache-worker", worker)]     # which process answered (--workers N)
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            fields = {"request_id": request_id, "method": scope["method"], "path": scope["path"],
                      "status": status["code"], "duration_ms": round((time.perf_counter() - started) * 1000, 2)}
            fields.update({k: state[k] for k in ("cache", "tenant", "session_id", "reason", "score", "cache_id",
                                                     "decision", "replica") if k in state})
            access_log.info("request", extra={"fields": fields})
