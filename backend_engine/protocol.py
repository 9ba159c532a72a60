"""OpenAI request parsing and validation for the engine's server.

Bodies are decoded by hand (not by framework DTOs) so that every malformed
request gets an OpenAI-style 400 naming the offending field.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import msgspec
import numpy as np

from backend_engine.sampling import SamplingParams

ROLES = {"system", "developer", "user", "assistant", "tool"}
UNLIMITED = 1 << 30


class OpenAIError(Exception):
    def __init__(self, status: int, message: str, type_: str = "invalid_request_error",
                 code: str | None = None, param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type_, code, param

    def body(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def bad(message: str, param: str | None = None, code: str = "invalid_value") -> OpenAIError:
    return OpenAIError(400, message, code=code, param=param)


@dataclass
class GenerationRequest:
    model: str | None
    stream: bool
    include_usage: bool
    params: SamplingParams
    messages: list[dict] | None = None
    prompt: str | list[int] | None = None
    cache_salt: str = ""
    extra: dict = field(default_factory=dict)


MAX_JSON_DEPTH = 64
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\[\s\S][^"\\]*)*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text, counted without recursion (strings skipped)."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    return max(0, int(np.cumsum(np.where((codes == 0x5B) | (codes == 0x7B), 1, -1)).max()))


def decode_body(raw: bytes) -> dict:
    if not raw:
        raise bad("the request body is empty; expected a JSON object", code="invalid_json")
    # the decoder recurses per level: a body nested deeper than any request needs is refused before it runs
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and json_depth(raw) > MAX_JSON_DEPTH:
        raise bad(f"the request body nests arrays and objects deeper than {MAX_JSON_DEPTH} levels",
                  code="invalid_json")
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise bad(f"the request body is not valid JSON: {exc}", code="invalid_json") from None
    except RecursionError:
        raise bad("the request body nests too deeply", code="invalid_json") from None
    if not isinstance(body, dict):
        raise bad("the request body must be a JSON object", code="invalid_json")
    return body


def _number(body: dict, name: str, kind, low=None, high=None, default=None):
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
        raise bad(f"'{name}' must be {'a number' if kind is float else 'an integer'}", name)
    if (low is not None and value < low) or (high is not None and value > high):
        raise bad(f"'{name}' must be between {low} and {high}, got {value}" if high is not None
                  else f"'{name}' must be at least {low}, got {value}", name)
    return kind(value)


def _content_text(content, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or "type" not in part:
                raise bad(f"{where}.content parts must be objects with a 'type'", "messages")
            if part["type"] != "text" or not isinstance(part.get("text"), str):
                raise bad(f"{where}.content part of type {part['type']!r} is not supported by this model "
                          "(text only)", "messages")
            parts.append(part["text"])
        return "".join(parts)
    raise bad(f"{where}.content must be a string or a list of content parts", "messages")


def parse_messages(messages) -> list[dict]:
    if not isinstance(messages, list):
        raise bad("'messages' must be a list", "messages", "invalid_type" if messages is not None else "missing")
    if not messages:
        raise bad("'messages' must contain at least one message", "messages")
    out = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise bad(f"messages[{i}] must be an object", "messages")
        role = msg.get("role")
        if not isinstance(role, str) or role not in ROLES:
            raise bad(f"messages[{i}].role {role!r} is not one of {sorted(ROLES)}", "messages")
        if "content" not in msg and role != "assistant":
            raise bad(f"messages[{i}] has no content", "messages")
        out.append({"role": "system" if role == "developer" else role,
                    "content": _content_text(msg.get("content"), f"messages[{i}]")})
    return out


UNSUPPORTED = {"logprobs": "log probabilities", "top_logprobs": "log probabilities", "echo": "echo",
               "tools": "tool calling", "functions": "function calling", "best_of": "best_of",
               "logit_bias": "logit_bias", "suffix": "suffix"}


def _reject_unsupported(body: dict) -> None:
    """Fields this engine cannot honour get a clear 400 instead of being silently ignored."""
    fmt = body.get("response_format")
    if fmt is not None and not (isinstance(fmt, dict) and fmt.get("type") in (None, "text")):
        kind = fmt.get("type") if isinstance(fmt, dict) else fmt
        raise bad(f"'response_format' {kind!r} is not supported by the bundled engine (it cannot constrain its "
                  "output to JSON); only {\"type\": \"text\"}", "response_format", code="unsupported_parameter")
    for name, what in UNSUPPORTED.items():
        value = body.get(name)
        if value not in (None, False, [], {}, 0, 1) or (name in ("logprobs", "echo") and value is True):
            raise bad(f"'{name}' is not supported by the bundled engine ({what})", name, code="unsupported_parameter")


# a speculation draft changes only the speed, never the output, so any caller may send one; bounded in size
MAX_DRAFT_CHARS = 64_000
# a draft may follow its request (the gateway forwards while it decides); the key pairs them
MAX_DRAFT_KEY = 64
DRAFT_KEY = re.compile(r"[A-Za-z0-9_-]{8,%d}" % MAX_DRAFT_KEY)


def _sampling(body: dict) -> SamplingParams:
    max_tokens = _number(body, "max_completion_tokens", int, low=1)
    if max_tokens is None:
        max_tokens = _number(body, "max_tokens", int, low=1)
    if _number(body, "n", int, low=1, default=1) != 1:
        raise bad("only n=1 is supported by the bundled engine", "n", code="unsupported_parameter")
    stop = body.get("stop")
    if stop is None:
        stop = []
    elif isinstance(stop, str):
        stop = [stop]
    elif not (isinstance(stop, list) and all(isinstance(s, str) and s for s in stop)):
        raise bad("'stop' must be a string or a list of non-empty strings", "stop")
    top_k = _number(body, "top_k", int, low=-1, default=0)
    forced = body.get("forced_output")
    if forced is not None and (not isinstance(forced, str) or not forced):
        raise bad("'forced_output' must be a non-empty string", "forced_output")
    extension = body.get("semcache")
    if extension is not None and not isinstance(extension, dict):
        raise bad("'semcache' must be an object", "semcache")
    draft = (extension or {}).get("draft")
    if draft is not None and (not isinstance(draft, str) or len(draft) > MAX_DRAFT_CHARS):
        raise bad(f"'semcache.draft' must be a string of at most {MAX_DRAFT_CHARS} characters", "semcache.draft")
    draft_key = (extension or {}).get("draft_key")
    if draft_key is not None and not valid_draft_key(draft_key):
        raise bad(f"'semcache.draft_key' must be 8 to {MAX_DRAFT_KEY} letters, digits, '-' or '_'",
                  "semcache.draft_key")
    return SamplingParams(
        max_tokens=max_tokens or UNLIMITED,
        temperature=_number(body, "temperature", float, low=0, high=2, default=1.0),
        top_p=_number(body, "top_p", float, low=0, high=1, default=1.0) or 1.0,
        top_k=max(top_k, 0),
        seed=_number(body, "seed", int),
        stop=stop,
        ignore_eos=bool(body.get("ignore_eos", False)),
        forced_text=forced,
        draft_text=draft or None,
        draft_key=draft_key,
    )


def valid_draft_key(key) -> bool:
    return isinstance(key, str) and DRAFT_KEY.fullmatch(key) is not None


def parse_late_draft(raw: bytes) -> tuple[str, str]:
    """`POST /v1/semcache/draft`: {"key": the request's semcache.draft_key, "draft": the reference text}."""
    body = decode_body(raw)
    key, draft = body.get("key"), body.get("draft")
    if not valid_draft_key(key):
        raise bad(f"'key' must be 8 to {MAX_DRAFT_KEY} letters, digits, '-' or '_'", "key")
    if not isinstance(draft, str) or not draft or len(draft) > MAX_DRAFT_CHARS:
        raise bad(f"'draft' must be a non-empty string of at most {MAX_DRAFT_CHARS} characters", "draft")
    return key, draft


def _stream_flags(body: dict) -> tuple[bool, bool]:
    stream = body.get("stream", False)
    if not isinstance(stream, bool) and stream is not None:
        raise bad("'stream' must be a boolean", "stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise bad("'stream_options' must be an object", "stream_options")
    return bool(stream), bool(options.get("include_usage", False))


# Fields that change what the engine computes for somebody else: the KV salt decides which tenants share
# blocks, a forced output decides the answer. Only a trusted caller (the gateway, replay) may send them.
INTERNAL_FIELDS = ("cache_salt", "forced_output")


def _reject_internal(body: dict, trusted: bool) -> None:
    if trusted:
        return
    for name in INTERNAL_FIELDS:
        if name in body:
            raise OpenAIError(403, f"'{name}' is an internal field: only a trusted caller (the semcache gateway, "
                                   "with the engine's internal token) may send it", "permission_error",
                              code="internal_field", param=name)


def _salt(body: dict, header_salt: str | None) -> str:
    salt = body.get("cache_salt", header_salt or "")
    if not isinstance(salt, str):
        raise bad("'cache_salt' must be a string", "cache_salt")
    return salt


def parse_chat(raw: bytes, header_salt: str | None = None, trusted: bool = False) -> GenerationRequest:
    body = decode_body(raw)
    _reject_internal(body, trusted)
    _reject_unsupported(body)
    messages = parse_messages(body.get("messages"))
    stream, usage = _stream_flags(body)
    return GenerationRequest(model=body.get("model"), stream=stream, include_usage=usage,
                             params=_sampling(body), messages=messages, cache_salt=_salt(body, header_salt))


def parse_completion(raw: bytes, header_salt: str | None = None, trusted: bool = False) -> GenerationRequest:
    body = decode_body(raw)
    _reject_internal(body, trusted)
    _reject_unsupported(body)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]                      # a batch of one
    if isinstance(prompt, list):
        if not prompt or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in prompt):
            raise bad("'prompt' must be a string or a non-empty list of token ids", "prompt")
    elif not isinstance(prompt, str):
        raise bad("'prompt' must be a string or a list of token ids (batches of several prompts are not "
                  "supported)", "prompt")
    elif not prompt:
        raise bad("'prompt' must not be empty", "prompt")
    stream, usage = _stream_flags(body)
    params = _sampling(body)
    if body.get("max_tokens") is None:
        params.max_tokens = 16                  # the OpenAI default for /v1/completions
    return GenerationRequest(model=body.get("model"), stream=stream, include_usage=usage,
                             params=params, prompt=prompt, cache_salt=_salt(body, header_salt))


def parse_prefetch(raw: bytes, header_salt: str | None = None,
                   trusted: bool = False) -> tuple[list[dict] | None, str | list[int] | None, str]:
    """`POST /v1/semcache/prefetch`: {"messages": [...]} (chat, templated like a chat request), or
    {"prompt": "text" | [token ids]} / {"prompt_token_ids": [...]}; the salt as for chat requests."""
    body = decode_body(raw)
    _reject_internal(body, trusted)
    if body.get("messages") is not None:
        return parse_messages(body["messages"]), None, _salt(body, header_salt)
    prompt = body.get("prompt_token_ids", body.get("prompt"))
    if isinstance(prompt, list):
        if not prompt or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in prompt):
            raise bad("'prompt_token_ids' must be a non-empty list of token ids", "prompt_token_ids")
    elif not isinstance(prompt, str) or not prompt:
        raise bad("a prefetch needs 'messages', 'prompt' or 'prompt_token_ids'", "messages")
    return None, prompt, _salt(body, header_salt)
