"""Warm-up: known-good answers written `ready`, from the admin API or from conversation logs in bulk."""
from __future__ import annotations

from gateway.cache.decision import CacheRequest, DecisionPipeline
from gateway.errors import invalid
from gateway.validation import check_text_id, validate_chat
from validator.key_facts import message_text

MAX_WARMUP_ENTRIES = 1000


def check_entry(item, index: int, max_messages: int, max_chars: int | None = None) -> dict:
    """One `{"messages", "answer", "session_id"?, "tenant"?, "scope"?}` item, validated; 400 on bad input.
    A message longer than `max_chars` is refused, as chat requests that long are never cached."""
    where = f"entries[{index}]"
    if not isinstance(item, dict):
        raise invalid(f"{where} must be an object", "entries")
    try:
        validate_chat({"messages": item.get("messages")}, max_messages)
    except Exception as exc:
        raise invalid(f"{where}: {getattr(exc, 'message', exc)}", "entries") from None
    if item["messages"][-1].get("role") != "user":
        raise invalid(f"{where}: the last message must be the user's (the answer answers it)", "entries")
    if max_chars is not None and any(len(message_text(m)) > max_chars for m in item["messages"]):
        raise invalid(f"{where}: a message is longer than {max_chars} characters, too long to cache", "entries")
    answer = item.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        raise invalid(f"{where}.answer must be a non-empty string", "entries")
    session = item.get("session_id")
    if session is not None and not isinstance(session, str):
        raise invalid(f"{where}.session_id must be a string", "entries")
    if session:
        check_text_id(session, f"{where}.session_id")
        if len(session) > 256:
            raise invalid(f"{where}.session_id must be at most 256 characters", "entries")
    tenant = item.get("tenant", "default")
    if not isinstance(tenant, str) or not tenant:
        raise invalid(f"{where}.tenant must be a non-empty string", "entries")
    check_text_id(tenant, f"{where}.tenant")
    if len(tenant) > 128:
        raise invalid(f"{where}.tenant must be at most 128 characters", "entries")
    scope = item.get("scope") or ("session" if session else "global")
    if scope not in ("session", "global"):
        raise invalid(f"{where}.scope must be 'session' or 'global'", "entries")
    if scope == "session" and not session:
        raise invalid(f"{where}: scope 'session' needs a session_id", "entries")
    return {"messages": item["messages"], "answer": answer, "session_id": session, "tenant": tenant, "scope": scope}


def warm_all(pipeline: DecisionPipeline, items: list[dict], progress=None) -> list[dict]:
    """Fingerprint, extract facts and write each checked item `ready`: [{"cache_id", "status"}].
    `progress(done, total)` is called after each item."""
    out = []
    for item in items:
        req = CacheRequest(item["tenant"], item["session_id"], item["messages"])
        cache_id, status = pipeline.warm(req, item["answer"], item["scope"])
        out.append({"cache_id": cache_id, "status": status})
        if progress:
            progress(len(out), len(items))
    return out


def conversation_pairs(record: dict) -> list[dict]:
    """A log line as warm-up items: `{"messages", "answer"}` as is, or a whole conversation whose
    assistant turns each become one item (the messages before it, and its text)."""
    if "answer" in record:
        return [record]
    messages = record.get("messages") or record.get("conversation") or []
    extra = {k: record[k] for k in ("session_id", "tenant", "scope") if k in record}
    items = []
    for i, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "assistant" and i > 0 \
                and isinstance(message.get("content"), str) and messages[i - 1].get("role") == "user":
            items.append({"messages": messages[:i], "answer": message["content"], **extra})
    return items
