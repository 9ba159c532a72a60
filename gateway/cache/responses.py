"""OpenAI response bodies for cached answers, and the reading of a backend's SSE stream.

A HIT is framed exactly as the bundled backend frames its own answers (role
chunk, content chunks, a finish chunk, the usage chunk when asked, then
`[DONE]`), so a streaming client cannot tell a cached answer from a fresh one.
"""
from __future__ import annotations

import json
import re
import time
import uuid

PIECE = re.compile(r"\s*\S+|\s+")
MAX_PIECE_CHARS = 8            # text without spaces (Chinese) is cut into pieces of a few characters


# CJK ideographs, kana and hangul: a BPE vocabulary spends about one token (often more) on each
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
TEMPLATE_TOKENS = 4            # a chat template's role markers around each message


def approx_tokens(text: str) -> int:
    """A token count without the backend's tokenizer: one a CJK character, one per four other characters."""
    cjk = len(CJK.findall(text))
    return cjk + -(-(len(text) - cjk) // 4)


def approx_prompt_tokens(texts: list[str]) -> int:
    return sum(approx_tokens(t) + TEMPLATE_TOKENS for t in texts)


def estimate_usage(entry: dict, prompt_chars: int, prompt_estimate: int) -> dict:
    """Token counts of a cached answer for this request: the answer's own completion tokens, and the prompt
    tokens scaled from the original request's tokens per character. A warmed answer has no counts of its
    own: both are estimated from the text (`approx_tokens`)."""
    usage = entry.get("usage") or {}
    completion = int(entry.get("answer_tokens") or usage.get("completion_tokens")
                     or approx_tokens(entry.get("answer_text") or ""))
    ratio = (usage.get("prompt_tokens") or 0) / max(usage.get("prompt_chars") or 0, 1)
    prompt = max(int(round(prompt_chars * ratio)) if ratio else prompt_estimate, 1)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": prompt}}


def completion_body(text: str, model: str, usage: dict) -> dict:
    return {"id": "chatcmpl-" + uuid.uuid4().hex, "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                         "logprobs": None, "finish_reason": "stop"}], "usage": usage}


def _pieces(text: str) -> list[str]:
    out = []
    for piece in PIECE.findall(text):
        while len(piece) > MAX_PIECE_CHARS and not piece.isspace():
            out.append(piece[:MAX_PIECE_CHARS])
            piece = piece[MAX_PIECE_CHARS:]
        out.append(piece)
    return out


def _sse(obj: dict) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"


def stream_chunks(text: str, model: str, usage: dict, include_usage: bool) -> list[bytes]:
    request_id, created = "chatcmpl-" + uuid.uuid4().hex, int(time.time())

    def chunk(choices: list, chunk_usage: dict | None = None) -> bytes:
        obj = {"id": request_id, "object": "chat.completion.chunk", "created": created, "model": model,
               "choices": choices}
        if include_usage:
            obj["usage"] = chunk_usage
        return _sse(obj)

    out = [chunk([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                   "finish_reason": None}])]
    out += [chunk([{"index": 0, "delta": {"content": p}, "logprobs": None, "finish_reason": None}])
            for p in _pieces(text)]
    out.append(chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}]))
    if include_usage:
        out.append(chunk([], usage))
    out.append(b"data: [DONE]\n\n")
    return out


class StreamCapture:
    """Reads an OpenAI SSE stream as it is relayed: the answer text, finish reason, usage and model.

    With `strip_usage` (the gateway asked the backend for usage the client did not ask for) the usage
    chunk is dropped and the `usage` keys removed, so the client sees what it asked for.
    """

    def __init__(self, strip_usage: bool = False):
        self.strip_usage = strip_usage
        self.parts: list[str] = []
        self.finish_reason: str | None = None
        self.usage: dict | None = None
        self.model: str | None = None
        self.error = False
        self.done = False
        self.tool_calls = False
        self._buffer = b""

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def feed(self, data: bytes) -> bytes:
        """Bytes in, bytes to send on (whole events only when rewriting)."""
        self._buffer += data
        out = []
        while True:
            cut = self._buffer.find(b"\n\n")
            if cut < 0:
                break
            event, self._buffer = self._buffer[:cut + 2], self._buffer[cut + 2:]
            out.append(self._event(event))
        if not self.strip_usage:
            return data
        return b"".join(out)

    def flush(self) -> bytes:
        rest, self._buffer = self._buffer, b""
        if rest.strip():
            self.error = True        # a stream cut mid-event is not a complete answer
        return rest if self.strip_usage else b""

    def _event(self, event: bytes) -> bytes:
        payload = b"".join(line[5:].strip() for line in event.split(b"\n") if line.startswith(b"data:"))
        if not payload:
            return event
        if payload == b"[DONE]":
            self.done = True
            return event
        try:
            obj = json.loads(payload)
        except ValueError:
            self.error = True
            return event
        if "error" in obj:
            self.error = True
            return event
        self.model = obj.get("model") or self.model
        if obj.get("usage"):
            self.usage = obj["usage"]
        for choice in obj.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self.parts.append(delta["content"])
            if delta.get("tool_calls") or delta.get("function_call"):
                self.tool_calls = True
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        if not self.strip_usage or "usage" not in obj:
            return event
        if not obj.get("choices"):
            return b""
        obj.pop("usage")
        return _sse(obj)

    @property
    def complete(self) -> bool:
        """A whole answer that may be cached: it ended on its own, with text and no tool calls."""
        return self.done and not self.error and self.finish_reason == "stop" and not self.tool_calls \
            and bool(self.text.strip())
