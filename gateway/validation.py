"""Validation of chat-completion requests before anything is forwarded or cached."""
from __future__ import annotations

import re

import msgspec
import numpy as np

from gateway.errors import invalid

ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
PART_TYPES = {"text", "image_url", "input_audio", "file", "refusal"}
MAX_JSON_DEPTH = 64                 # an OpenAI request nests ~6 deep; tool schemas a few more
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\[\s\S][^"\\]*)*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def json_depth(raw: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text, counted without recursion: strings are
    skipped, then the running count of open brackets is taken in one vectorised pass."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    return max(0, int(np.cumsum(np.where((codes == 0x5B) | (codes == 0x7B), 1, -1)).max()))


def decode_json_object(raw: bytes) -> dict:
    if not raw:
        raise invalid("the request body is empty; expected a JSON object", code="invalid_json")
    # the usual body has fewer brackets than the limit in all, so it cannot nest deeper: skip the scan
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH and json_depth(raw) > MAX_JSON_DEPTH:
        raise invalid(f"the request body nests arrays and objects deeper than {MAX_JSON_DEPTH} levels",
                      code="invalid_json")
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise invalid(f"the request body is not valid JSON: {exc}", code="invalid_json") from None
    except RecursionError:             # json_depth bounds valid JSON; this is only a second fence
        raise invalid("the request body nests too deeply", code="invalid_json") from None
    if not isinstance(body, dict):
        raise invalid("the request body must be a JSON object", code="invalid_json")
    return body


def _check_content(content, i: int, role: str) -> None:
    if content is None:
        if role in ("assistant", "function"):
            return                          # assistant turns that only carry tool calls
        raise invalid(f"messages[{i}].content is required for role {role!r}", "messages")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise invalid(f"messages[{i}].content must be a string or a list of content parts", "messages")
    if not content:
        raise invalid(f"messages[{i}].content must hold at least one content part", "messages")
    for j, part in enumerate(content):
        if not isinstance(part, dict) or not isinstance(part.get("type"), str) or part["type"] not in PART_TYPES:
            raise invalid(f"messages[{i}].content[{j}] must be an object with a 'type' of "
                          f"{sorted(PART_TYPES)}", "messages")
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            raise invalid(f"messages[{i}].content[{j}].text must be a string", "messages")


MAX_STOP = 4                                 # OpenAI's limit on stop sequences
SEED_MIN, SEED_MAX = -2 ** 63, 2 ** 63 - 1      # a signed 64-bit integer, as backends read it
MAX_MODEL_CHARS = 256                        # a model name is echoed back in every response
INT32 = 2 ** 31 - 1                          # token counts: backends read them as 32-bit integers


def validate_chat(body: dict, max_messages: int) -> None:
    messages = body.get("messages")
    if messages is None:
        raise invalid("'messages' is required", "messages", code="missing")
    if not isinstance(messages, list):
        raise invalid("'messages' must be a list", "messages")
    if not messages:
        raise invalid("'messages' must contain at least one message", "messages")
    if len(messages) > max_messages:
        raise invalid(f"'messages' has {len(messages)} entries; this gateway accepts at most {max_messages}",
                      "messages", code="too_many_messages")
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise invalid(f"messages[{i}] must be an object", "messages")
        role = message.get("role")
        if not isinstance(role, str) or role not in ROLES:
            raise invalid(f"messages[{i}].role {role!r} is not one of {sorted(ROLES)}", "messages")
        _check_content(message.get("content"), i, role)
        if role == "tool" and not isinstance(message.get("tool_call_id"), str):
            raise invalid(f"messages[{i}].tool_call_id is required for role 'tool' (a string)", "messages")
        if message.get("tool_calls") is not None and not isinstance(message["tool_calls"], list):
            raise invalid(f"messages[{i}].tool_calls must be a list", "messages")
        if message.get("name") is not None and not isinstance(message["name"], str):
            raise invalid(f"messages[{i}].name must be a string", "messages")
    model = body.get("model")
    if model is not None and (not isinstance(model, str) or not 0 < len(model) <= MAX_MODEL_CHARS):
        raise invalid(f"'model' must be a non-empty string of at most {MAX_MODEL_CHARS} characters", "model")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise invalid("'stream' must be a boolean", "stream")
    for name in ("max_tokens", "max_completion_tokens", "n"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= INT32):
            raise invalid(f"'{name}' must be an integer between 1 and {INT32}, got {str(value)[:40]}", name)
    for name in ("store", "parallel_tool_calls", "logprobs"):
        if body.get(name) is not None and not isinstance(body[name], bool):
            raise invalid(f"'{name}' must be a boolean", name)
    if body.get("user") is not None and not isinstance(body["user"], str):
        raise invalid("'user' must be a string", "user")
    if body.get("tool_choice") is not None and not body.get("tools") and not body.get("functions"):
        raise invalid("'tool_choice' is only allowed when 'tools' are given", "tool_choice")
    for name, low, high in (("temperature", 0, 2), ("top_p", 0, 1)):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not low <= value <= high):
            raise invalid(f"'{name}' must be a number between {low} and {high}, got {value!r}", name)
    for name in ("presence_penalty", "frequency_penalty"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not -2 <= value <= 2):
            raise invalid(f"'{name}' must be a number between -2 and 2, got {value!r}", name)
    stop = body.get("stop")
    if stop is not None and not isinstance(stop, str) and not (
            isinstance(stop, list) and len(stop) <= MAX_STOP and all(isinstance(s, str) and s for s in stop)):
        raise invalid(f"'stop' must be a string or a list of at most {MAX_STOP} non-empty strings", "stop")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not SEED_MIN <= seed <= SEED_MAX):
        raise invalid(f"'seed' must be an integer between {SEED_MIN} and {SEED_MAX}", "seed")
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise invalid("'stream_options' must be an object", "stream_options")
    if options is not None and not stream:
        raise invalid("'stream_options' is only allowed when 'stream' is true", "stream_options")
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise invalid("'metadata' must be an object", "metadata")
    if metadata and not all(isinstance(v, str) for v in metadata.values()):
        raise invalid("'metadata' values must be strings", "metadata")


_CACHE_ID = re.compile(r"[0-9a-f]{32}")


def is_cache_id(value) -> bool:
    """Cache ids are uuid4 hex: anything else names no entry, and is never sent to the database."""
    return isinstance(value, str) and _CACHE_ID.fullmatch(value) is not None


def check_text_id(value: str, field: str) -> str:
    """Ids from clients (session ids, filters, path parameters) are stored and compared as text: control
    characters (NUL, CR/LF, ...) are a 400 naming the field, not a database or upstream error."""
    if _CONTROL.search(value):
        raise invalid(f"'{field}' must not contain control characters", field)
    return value


def header_text(value: str | None) -> str | None:
    """A header value as the client wrote it: UTF-8 bytes arrive decoded as Latin-1 and are read back."""
    if not value or value.isascii():
        return value
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


def session_id(headers, body: dict) -> str | None:
    """X-Session-Id header, else metadata.session_id, else user (DESIGN.md, request flow step 1).
    Any text is a session id (the upstream sees a derived one), except control characters."""
    value, field = header_text(headers.get("x-session-id")), "X-Session-Id"
    if not value and isinstance(body.get("metadata"), dict):
        value, field = body["metadata"].get("session_id"), "metadata.session_id"
    if not value:
        value, field = body.get("user"), "user"
    return check_text_id(str(value)[:256], field) if value else None
