"""Promotion by evidence: an answer written in one session serves other users only once other sessions proved
it safe.

Sessions are isolated by default. An answer may become a *candidate* for its tenant's global pool when its
request had no personal context (a first turn, no personal data in it, its system prompt or the answer) and
its domain's policy allows global scope. Other sessions then search the candidates (the store's promotion
pool) without being served from them: a request that passes every hit gate against a candidate is evidence,
and once its own answer is back, the two answers are compared (key facts equal, answer similarity at or above
a bound). With `min_sessions` agreeing sessions, none disagreeing and no negative signal anywhere, the entry
is promoted: `shadow` records it and keeps measuring (what it would have served, and whether those answers
agreed); `auto` moves it into the global pool. One negative signal from anyone demotes it again
(gateway/store/cache_store.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fingerprint.entities import conflicts
from gateway.cache.request_params import mismatch
from gateway.index import SearchFilter
from validator.key_facts import message_text
from validator.pii import pii_kinds

MODES = ("off", "shadow", "auto")
# reasons whose request is not one the cache would have served from anyone's answer
NO_EVIDENCE_REASONS = ("signal:", "client:", "policy:", "topic_switch", "reset", "unsupported:", "no_user_turn",
                       "fail_open", "cache:")


@dataclass(frozen=True)
class PromotionConfig:
    mode: str = "off"                 # off | shadow | auto (the gateway's setting defaults to shadow)
    min_sessions: int = 3             # distinct agreeing sessions before an entry is promoted
    answer_similarity: float = 0.93   # cosine of the two answers, calibrated by bench/promotion_bound.py

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"promotion must be one of {', '.join(MODES)}")
        if self.min_sessions < 1:
            raise ValueError("promotion_min_sessions must be at least 1")


def unshareable(req, policy) -> str | None:
    """Why this request (and so its answer) may not cross users, or None when it may."""
    if not policy.global_scope:
        return f"policy:{policy.domain}"
    if not req.session_id or req.derived_session:
        return "no_session"              # a derived id cannot tell users apart: their evidence would not count
    if req.in_conversation:
        return "context"                 # earlier turns are one user's own context
    if not req.params.plain:
        return "params"                  # an answer cut by its own stop strings or sampled hot serves no one else
    kinds = pii_kinds(*(message_text(m) for m in req.messages))
    return f"pii:{','.join(kinds)}" if kinds else None


def _fact_set(facts: dict) -> tuple[frozenset, frozenset]:
    """Every amount the answer states (money, budgets, quantities, bare numbers) and its dates: how a number
    is read (a price or a count) differs between phrasings of the same answer, the numbers do not."""
    numbers = set(facts.get("numbers") or []) | set(facts.get("money") or [])
    if facts.get("budget_max") is not None:
        numbers.add(facts["budget_max"])
    for values in (facts.get("units") or {}).values():
        numbers.update(values)
    return frozenset(round(float(n), 6) for n in numbers), frozenset(facts.get("dates") or [])


def facts_agree(cached: dict, fresh: dict) -> bool:
    """The two answers state the same amounts, numbers and dates."""
    return _fact_set(cached) == _fact_set(fresh)


class EvidenceJudge:
    """Compares a session's own answer with the candidate it matched."""

    def __init__(self, encoder, extractor, config: PromotionConfig):
        self.encoder, self.extractor, self.config = encoder, extractor, config

    def agreement(self, cached_answer: str, cached_facts: dict | None, fresh_answer: str) -> dict:
        cached = (cached_facts or {}).get("answer") or self.extractor.extract(cached_answer)
        fresh = self.extractor.extract(fresh_answer)
        same_facts = facts_agree(cached, fresh)
        vectors = self.encoder.encode([cached_answer, fresh_answer])
        similarity = float(np.dot(vectors[0], vectors[1]))
        similarity = similarity if math.isfinite(similarity) else 0.0
        pii = pii_kinds(fresh_answer)
        return {"facts_equal": same_facts, "similarity": round(similarity, 4), "pii": pii,
                "agree": same_facts and similarity >= self.config.answer_similarity and not pii}


def evidence_match(pipeline, req, decision, policy) -> dict | None:
    """A pooled entry of another session that this request matches through every hit gate (the same gates a
    HIT passes), or None. Only the best candidate is judged, so the cost is one judge call at most."""
    fp = decision.fingerprint
    if fp is None or not decision.cacheable or not req.serve or not req.store or req.degraded \
            or decision.reason.startswith(NO_EVIDENCE_REASONS) or unshareable(req, policy):
        return None
    where = SearchFilter(req.tenant, req.session_id, fp.tags.intent_domain, fp.system_prompt_version)
    found = [(e, s) for e, s in pipeline.store.search_pool(fp.vector, where, 3, policy.candidate)
             if not conflicts(fp.tags.active_entities, (e.get("tags") or {}).get("active_entities", []))]
    if not found:
        return None
    entry, score = found[0]
    gates: dict = {}
    failed = pipeline.gate(req, entry, policy, gates)
    if failed is None and mismatch(req.params, entry, pipeline.allow_sampled_hits) is not None:
        failed = "params"
    result = {"cache_id": entry["cache_id"], "state": entry.get("promotion"), "score": round(score, 4),
              "passed": failed is None, **({"failed": failed} if failed else {})}
    decision.gates["promotion"] = result
    return {**result, "entry": entry} if failed is None else None
