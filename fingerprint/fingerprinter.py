"""The layered fingerprint of a chat request: hard tags, a context view, and a unit vector.

The vector is a weighted mean of per-turn encodings: the current user message
weighs most, earlier turns of the same topic decay with distance, and the
key part of the system prompt is encoded on its own with the top history
weight. Each turn's encoding is cached by its text, so a follow-up turn
encodes only what is new.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from fingerprint.domain import DomainClassifier
from fingerprint.encoder import TextEncoder
from fingerprint.entities import active_entities, extract
from fingerprint.normalize import mask_volatile, normalize_text

SYSTEM_CHARS = 512
SYSTEM_TAIL_CHARS = 4 * SYSTEM_CHARS   # masked to find the key part: masking only ever shortens text
VIEW_CHARS = 1500                # roughly the encoder's 512 tokens for mixed EN/ZH text
HISTORY_TURNS = 6
CURRENT_WEIGHT, HISTORY_WEIGHT, HISTORY_DECAY = 1.0, 0.35, 0.6

CHANGE_CUES = re.compile(
    r"\b(change|instead|rather|switch(?:ed)? to|make it|update|increase|raise|lower|reduce|decrease|cut|remove|"
    r"drop|without|don'?t|do not|no longer|not|add|also|plus|extend|shorten|replace|swap|skip|exclude|more|less|"
    r"cheaper|longer|shorter|only|but|keep it|under|within|at most|at least|what about|how about|convert|"
    r"(?:show|give|tell|put) (?:it|that|them)(?: to me)? in)\b|改|换|不要|去掉|去除|取消|排除|加上|增加|减少|提高|降低|"
    r"还有|补充|别|再|延长|缩短|只要|只去|便宜|贵一点|多一|少一|另外|还要|以内|控制在|不超过|至少|换算|呢[?？]?$",
    re.I)

@dataclass
class Tags:
    intent_domain: str
    task_skeleton: str
    active_entities: list[str]
    change_intent: bool
    context_switch: bool


@dataclass
class Fingerprint:
    tags: Tags
    context_view: str
    vector: np.ndarray
    system_prompt_version: str
    debug: dict = field(default_factory=dict)


def content_text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return str(content)


def _dialogue(messages: list[dict]) -> list[tuple[str, str]]:
    """(role, raw text) of the user and assistant turns that say something."""
    turns = ((m["role"], content_text(m.get("content"))) for m in messages if m.get("role") in ("user", "assistant"))
    return [(role, text) for role, text in turns if text and not text.isspace()]


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return (v / n).astype(np.float32) if n > 0 else v.astype(np.float32)


def _chunk(role: str, text: str) -> str:
    """One turn as encoded: a user turn exactly as it was encoded when it was the current message
    (so a follow-up finds it in the cache), an assistant turn cut to its key points."""
    return text if role == "user" else f"assistant: {_key_points(text)}"


def _key_points(text: str, limit: int = 200) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    sentences = re.split(r"(?<=[.!?。！？])\s*", text)
    out = ""
    for s in sentences:
        if len(out) + len(s) > limit:
            break
        out += s + " "
    return (out.strip() or text[:limit]).strip()


class Fingerprinter:
    def __init__(self, encoder: TextEncoder | None = None,
                 topic_switch: Callable[[list[dict]], bool] | None = None, domains=None):
        """`topic_switch(messages)`: does the last user turn leave the conversation's topic? Without one (the
        gateway's default, docs/fingerprint.md) no turn is a switch and the history stays in the view.
        `domains`: anything with `classify(text, vector)` (the domain head's training passes a recorder)."""
        self.encoder = encoder or TextEncoder()
        self.domains = domains if domains is not None else DomainClassifier(self.encoder)
        self.topic_switch = topic_switch

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of texts as the fingerprint sees them (normalised), so that other consumers of the
        encoder (the change-intent classifier) share its cache of recent encodings."""
        return self.encoder.encode([normalize_text(t) for t in texts])

    def system_prompt_version(self, system_prompt: str) -> str:
        return hashlib.sha256(mask_volatile(system_prompt).encode()).hexdigest()[:16]

    def fingerprint(self, messages: list[dict], system_prompt_version: str | None = None) -> Fingerprint:
        system = " ".join(content_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
        # only the turns used are normalised and encoded (the current user message and the HISTORY_TURNS
        # before it), so the cost does not grow with the number of older turns
        turns = _dialogue(messages)
        last_user = max((i for i, (role, _) in enumerate(turns) if role == "user"), default=None)
        current = normalize_text(turns[last_user][1]) if last_user is not None else ""
        history = [(r, normalize_text(t)) for r, t in turns[max(0, last_user - HISTORY_TURNS):last_user]] \
            if last_user is not None else []
        masked_tail = mask_volatile(system[-SYSTEM_TAIL_CHARS:]) if system else ""
        if system_prompt_version:
            version = system_prompt_version
        elif len(system) <= SYSTEM_TAIL_CHARS:        # the whole prompt was masked already
            version = hashlib.sha256(masked_tail.encode()).hexdigest()[:16]
        else:
            version = self.system_prompt_version(system)
        system_key = masked_tail[-SYSTEM_CHARS:]

        topic_all = history[-HISTORY_TURNS:]
        chunks = [_chunk(r, t) for r, t in topic_all]
        # one batch: the current message and every history chunk (cached ones cost nothing)
        vectors = self.encoder.encode([current] + chunks + (["system: " + system_key] if system_key else []))
        v_current, v_chunks = vectors[0], vectors[1:1 + len(chunks)]
        recent = history[-3:]
        change = bool(CHANGE_CUES.search(current)) or self._changes_a_value(history, current)
        switch, debug = False, {}
        if recent and self.topic_switch is not None:
            switch = self.topic_switch(messages)
        topic = [] if switch else topic_all
        user_texts = [t for r, t in topic if r == "user"] + [current]
        if topic:
            user_rows = [i for i, (r, _) in enumerate(topic) if r == "user"]
            v_history = v_chunks[user_rows].mean(0) if user_rows else v_chunks.mean(0)
            domain, _ = self.domains.classify(" ".join(user_texts), _unit(v_current + 0.7 * v_history))
        else:
            domain, _ = self.domains.classify(current, v_current)
        skeleton = re.sub(r"\d+(?:\.\d+)?", "#", (user_texts[0] if user_texts else "").lower())[:80]
        tags = Tags(domain, skeleton, active_entities(user_texts), change, switch)

        view_lines = self._view(system_key, topic, current, tags)
        vector = CURRENT_WEIGHT * v_current
        weights = [HISTORY_WEIGHT * HISTORY_DECAY ** k for k in range(len(topic))][::-1]
        if topic:
            vector = vector + (np.asarray(weights)[:, None] * v_chunks).sum(0)
        if system_key:
            vector = vector + HISTORY_WEIGHT * vectors[-1]
        return Fingerprint(tags, "\n".join(view_lines), _unit(vector), version, debug)

    def prime(self, messages: list[dict]) -> None:
        """Encode a conversation's turns ahead of its next request (e.g. right after the answer is sent),
        so that the next fingerprint only has the new user message left to encode."""
        chunks = [_chunk(role, normalize_text(text)) for role, text in _dialogue(messages)[-HISTORY_TURNS:]]
        if chunks:
            self.encoder.encode(chunks)

    @staticmethod
    def _changes_a_value(history: list[tuple[str, str]], current: str) -> bool:
        before = dict(e.split("=", 1) for e in active_entities([t for r, t in history if r == "user"]) if "=" in e)
        now, _, negated = extract(current)
        return bool(negated) or any(k in before and before[k] != v for k, v in now.items())

    @staticmethod
    def _view(system_key: str, topic: list[tuple[str, str]], current: str, tags: Tags) -> list[str]:
        lines = [f"system: {system_key}"] if system_key else []
        history = [f"{r}: {_key_points(t, 300 if r == 'user' else 200)}" for r, t in topic]
        tail = [f"user: {current}", f"user: {current}"]          # the current message, repeated for weight
        budget = VIEW_CHARS - sum(len(x) for x in lines + tail)
        wanted = {e.split(":", 1)[-1].split("=", 1)[0] for e in tags.active_entities}
        # over budget: drop the oldest turns that mention none of the current entities, then the oldest
        while history and sum(len(h) for h in history) > budget:
            unrelated = [i for i, h in enumerate(history) if not any(w and w in h.lower() for w in wanted)]
            history.pop(unrelated[0] if unrelated else 0)
        return lines + history + tail
