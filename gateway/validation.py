"""Validation of chat-completion requests before anything is forwarded or cached."""
from __future__ import annotations

import msgspec

from gateway.errors import invalid

ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
PART_TYPES = {"text", "image_url", "input_audio", "file", "refusal"}


def decode_json_object(raw: bytes) -> dict:
    if not raw:
        raise invalid("the request body is empty; expected a JSON object", code="invalid_json")
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError as exc:
        raise invalid(f"the request body is not valid JSON: {exc}", code="invalid_json") from None
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
    for j, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in PART_TYPES:
            raise invalid(f"messages[{i}].content[{j}] must be an object with a 'type' of "
                          f"{sorted(PART_TYPES)}", "messages")
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            raise invalid(f"messages[{i}].content[{j}].text must be a string", "messages")


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
        if role not in ROLES:
            raise invalid(f"messages[{i}].role {role!r} is not one of {sorted(ROLES)}", "messages")
        _check_content(message.get("content"), i, role)
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise invalid("'model' must be a string", "model")
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise invalid("'stream' must be a boolean", "stream")
    for name in ("max_tokens", "max_completion_tokens", "n"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise invalid(f"'{name}' must be a positive integer, got {value!r}", name)
    for name, low, high in (("temperature", 0, 2), ("top_p", 0, 1)):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not low <= value <= high):
            raise invalid(f"'{name}' must be a number between {low} and {high}, got {value!r}", name)
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise invalid("'stream_options' must be an object", "stream_options")
    metadata = body.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise invalid("'metadata' must be an object", "metadata")


def session_id(headers, body: dict) -> str | None:
    """X-Session-Id header, else metadata.session_id, else user (DESIGN.md, request flow step 1)."""
    value = headers.get("x-session-id")
    if not value and isinstance(body.get("metadata"), dict):
        value = body["metadata"].get("session_id")
    if not value:
        value = body.get("user")
    return str(value)[:256] if value else None
