"""The decision of DESIGN.md steps 2-7: policy, fingerprint, candidates, bands and gates.

`DecisionPipeline.decide` is synchronous (encoder, classifier and database
calls); the app runs it in a worker thread. Every hit candidate passes the
change-intent classifier and the key-fact validator; when in doubt the answer
is PARTIAL (the conversation's prefix is still reused) or MISS.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from fingerprint import Fingerprint, Fingerprinter
from fingerprint.entities import conflict
from gateway.cache.promotion import PromotionConfig, evidence_match, unshareable
from gateway.cache.request_params import MISMATCHES, GenerationParams, mismatch
from gateway.cache.signals import is_negative, is_refinement, is_reset
from gateway.index import SearchFilter
from gateway.store import CacheStore, NewEntry
from gateway.tracing import Tracing
from validator import KeyFactValidator, RiskPolicy
from validator.key_facts import message_text
from validator.pii import pii_kinds
from validator.risk_policy import Policy, stricter
from validator.pair_judge import PairJudge

log = logging.getLogger("semcache.decision")
TURN_CHARS = 600             # each stored turn of the cached request, for the classifier


@dataclass
class CacheRequest:
    tenant: str
    session_id: str | None
    messages: list[dict]
    serve: bool = True                 # false: Cache-Control no-cache
    store: bool = True                 # false: Cache-Control no-store
    unsupported: str | None = None     # a feature the cache does not model (tools, n > 1, images, ...)
    degraded: bool = False             # the cache failed open for this request: nothing more is read or written
    params: GenerationParams = field(default_factory=GenerationParams)   # model, max_tokens, stop, sampling
    client_scope: str | None = None      # the API key's tag in a tenant with several keys (gateway/auth.py)
    derived_session: bool = False      # no session id was sent: the conversation id is derived (see chat.py)

    @property
    def request_hash(self) -> str:
        return request_hash(self.messages)

    @property
    def in_conversation(self) -> bool:
        return sum(1 for m in self.messages if m.get("role") in ("user", "assistant")) > 1


@dataclass
class Decision:
    outcome: str                       # HIT | PARTIAL | MISS | BYPASS
    reason: str
    cacheable: bool = True             # the answer may be written
    score: float | None = None
    entry: dict | None = None          # served (HIT) or matched (PARTIAL)
    fingerprint: Fingerprint | None = None
    gates: dict = field(default_factory=dict)
    timings_ms: dict = field(default_factory=dict)
    implicit_feedback: dict | None = None     # {"signal", "cache_id", "was_hit"} applied to the previous turn
    evidence: dict | None = None       # a promotion candidate of another session this request matched
    evidence_pending: Any = field(default=None, repr=False, compare=False)   # the gateway's task finding it

    def record(self) -> dict:
        """The decision record: logged and (in part) sent as X-Cache-* headers."""
        out = {"cache": self.outcome, "reason": self.reason, "score": None if self.score is None else round(self.score, 4),
               "cache_id": (self.entry or {}).get("cache_id"), "gates": self.gates,
               "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()}}
        if self.fingerprint is not None:
            out["tags"] = asdict(self.fingerprint.tags)
        if self.implicit_feedback:
            out["implicit_feedback"] = self.implicit_feedback
        return out


def request_hash(messages: list[dict]) -> str:
    canonical = [[m.get("role"), message_text(m)] for m in messages]
    return hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode()).hexdigest()


def voter_id(caller: str, tenant: str, session_id: str | None) -> str:
    """A feedback voter: the session (one user of the tenant's app) when there is one, else the caller. In a
    tenant with several API keys the caller passes no session: a client inventing session ids is one voter."""
    who = f"{tenant}\0session\0{session_id}" if session_id else f"{tenant}\0{caller}"
    return hashlib.sha256(who.encode()).hexdigest()[:32]


def storable(value):
    """Request- and backend-derived values as every store can hold them: PostgreSQL text and JSON cannot hold
    NUL, which becomes U+FFFD, and JSON has no Infinity or NaN, which become null (the request hash, taken
    from the messages as sent, is unaffected)."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value


def current_user_text(messages: list[dict]) -> str:
    return next((message_text(m) for m in reversed(messages) if m.get("role") == "user"), "")


def history_record(messages: list[dict]) -> dict:
    """The conversation before the last user turn, as a count of turns and one digest of their text
    (whitespace collapsed): stored with an entry, so that a request whose conversation went otherwise earlier
    than the turns the judge reads is not served from it."""
    turns = [m for m in messages if m.get("role") in ("user", "assistant")]
    last_user = max((i for i, m in enumerate(turns) if m.get("role") == "user"), default=0)
    return {"turns": last_user, "digest": _turns_digest(turns[:last_user])}


def _turns_digest(turns: list[dict]) -> str:
    """Messages as roles and text, whitespace collapsed, in one digest (the history and the system record)."""
    text = json.dumps([[m.get("role"), " ".join(message_text(m).split())] for m in turns], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def history_diverged(messages: list[dict], entry: dict) -> bool:
    """The cached request's earlier turns are not where this request's conversation begins: it was asked in
    another conversation, or an earlier turn was edited since (a rewording of the last turn keeps them; asked
    again after the answer, they are followed by the cached turn and its answer). Entries without the record
    (warmed by an admin before it existed) are not checked."""
    recorded = (entry.get("usage") or {}).get("history")
    if not isinstance(recorded, dict) or not recorded.get("turns"):
        return False
    turns = [m for m in messages if m.get("role") in ("user", "assistant")]
    n = int(recorded["turns"])
    return len(turns) <= n or _turns_digest(turns[:n]) != recorded.get("digest")


def system_digest(messages: list[dict]) -> str:
    """The system and developer messages exactly (whitespace collapsed). The prompt's version masks what changes
    per request (dates, times, names, ids) so that such prompts share entries; this digest tells whether those
    values are the ones the stored answer was given."""
    return _turns_digest([m for m in messages if m.get("role") in ("system", "developer")])


def system_values_changed(messages: list[dict], entry: dict) -> bool:
    """The stored answer was given under other dates, times, names or ids in the system prompt ("Current date:
    2026-12-07" / "…12-09", "User name: Alice" / "Bob"): "Has my order arrived?" or "What's my name?" may have
    another answer. Entries without the record (written before it existed) are not checked."""
    recorded = (entry.get("usage") or {}).get("system")
    return isinstance(recorded, str) and recorded != system_digest(messages)


def cached_messages(entry: dict) -> list[dict]:
    """The cached request's last turns and its answer, as the classifier compares them."""
    try:
        turns = json.loads(entry.get("request_text") or "{}").get("turns", [])
    except (ValueError, AttributeError):
        turns = []
    return turns + [{"role": "assistant", "content": entry.get("answer_text", "")}]


@contextmanager
def _stage(timings: dict, tracing: Tracing, name: str):
    """Adds the block's wall time (ms) to timings[name], in a trace span of its own when tracing is on."""
    started = time.perf_counter()
    try:
        with tracing.span(f"semcache.{name}"):
            yield
    finally:
        timings[name] = timings.get(name, 0.0) + (time.perf_counter() - started) * 1e3


class DecisionPipeline:
    def __init__(self, store: CacheStore, fingerprinter: Fingerprinter, intent: PairJudge,
                 validator: KeyFactValidator | None = None, policies: RiskPolicy | None = None, search_k: int = 5,
                 duplicate_window_s: float = 2.0, mode: str = "semantic", allow_sampled_hits: bool = True,
                 promotion: PromotionConfig | None = None, gate_k: int = 2):
        self.store = store
        self.fingerprinter = fingerprinter
        self.intent = intent
        self.validator = validator or KeyFactValidator()
        self.extractor = self.validator.extractor
        self.policies = policies or RiskPolicy.load()
        self.search_k = search_k
        self.gate_k = max(1, gate_k)          # agreeing candidates judged before the decision falls back
        self.duplicate_window_s = duplicate_window_s
        self.mode = mode
        self.allow_sampled_hits = allow_sampled_hits
        self.promotion = promotion or PromotionConfig()
        self.tracing = Tracing()              # spans per stage once the app hands its tracing over

    # ---- decide -------------------------------------------------------------
    def decide(self, req: CacheRequest, evidence: bool = True) -> Decision:
        """The decision on `req`. `evidence=False` leaves the promotion-evidence match (`find_evidence`) to the
        caller: it never changes this request's outcome, so the gateway runs it while the backend answers."""
        timings: dict[str, float] = {}
        watch = partial(_stage, timings, self.tracing)
        started = time.perf_counter()
        decision = self._decide(req, watch)
        if decision.outcome == "HIT":
            decision = self._honour_params(req, decision)
        decision.timings_ms = timings
        timings["total"] = (time.perf_counter() - started) * 1e3
        if evidence:
            self.find_evidence(req, decision)
        return decision

    def wants_evidence(self, decision: Decision) -> bool:
        return decision.outcome != "HIT" and self.promotion.mode != "off" and self.mode == "semantic" \
            and decision.fingerprint is not None

    def find_evidence(self, req: CacheRequest, decision: Decision) -> None:
        """Another session's promotion candidate this forwarded request matches through every hit gate, into
        `decision.evidence` (and the record's gates); the write then adds this answer as evidence for it."""
        if not self.wants_evidence(decision):
            return
        with _stage(decision.timings_ms, self.tracing, "evidence"):
            policy = self.policies.policy(decision.fingerprint.tags.intent_domain)
            decision.evidence = evidence_match(self, req, decision, policy)

    def _decide(self, req: CacheRequest, watch) -> Decision:
        current = current_user_text(req.messages)
        if req.unsupported:
            return Decision("BYPASS", f"unsupported:{req.unsupported}", cacheable=False)
        if not current.strip():
            return Decision("BYPASS", "no_user_turn", cacheable=False)
        if self.mode == "exact":
            return self._exact(req, watch)
        forced = None
        with watch("signals"):
            last = self.store.last_turn(req.tenant, req.session_id) if req.session_id else None
            duplicate = self._duplicate(req, last)
            if duplicate is not None:
                return duplicate
            feedback = self._implicit_feedback(req, current, last)
            if feedback:
                forced = "client:regenerate" if feedback["signal"] == "regenerate" else "signal:negative"
            if is_reset(current):
                count = self.store.invalidate(tenant=req.tenant, session_id=req.session_id, reason="reset") \
                    if req.session_id else 0
                return Decision("MISS", "reset", cacheable=False, gates={"invalidated": count},
                                implicit_feedback=feedback)
            if RiskPolicy.is_volatile(current):
                return Decision("MISS", "policy:realtime", cacheable=False, implicit_feedback=feedback)
        with watch("fingerprint"):
            fp = self.fingerprinter.fingerprint(req.messages)
        policy = self.policies.policy(fp.tags.intent_domain)
        base = dict(fingerprint=fp, cacheable=req.store, implicit_feedback=feedback)
        if not policy.cacheable:
            return Decision("MISS", f"policy:{policy.domain}", **{**base, "cacheable": False})
        if forced:
            return Decision("MISS", forced, **base)
        if not req.serve:
            return Decision("BYPASS", "client:no-cache", **base)
        if fp.tags.context_switch:
            return Decision("MISS", "topic_switch", **base)
        with watch("search"):
            where = SearchFilter(req.tenant, req.session_id, fp.tags.intent_domain, fp.system_prompt_version)
            hits = self.store.nearest(fp.vector, where, self.search_k)
            # an entry below the request domain's candidate bound can never be near (a stricter pair policy
            # only raises it), so only the others are read from the store
            found = self.store.entries([(seq, s) for seq, s in hits if s >= policy.candidate])
        mine = fp.tags.active_entities
        # a session's own entry may sit in another domain than this turn: the stricter policy of the two
        pair = {e["cache_id"]: self._pair_policy(policy, e) for e, _ in found}
        kinds = {e["cache_id"]: conflict(mine, (e.get("tags") or {}).get("active_entities", [])) for e, _ in found}
        near = [(e, s) for e, s in found if s >= pair[e["cache_id"]].candidate]
        # a negation the entities read on one side only, or over other words, is as often a rewording ("without
        # pills" / "natural ways", "isn't coming through" / "never arrives") as a change: the pair judge decides
        # (alignment's negation veto, then the model); other values and names are another task
        agree = [(e, s) for e, s in near if kinds[e["cache_id"]] in (None, "negation")]
        gates: dict = {"candidates": len(hits), "entity_conflicts": sum(k is not None for k in kinds.values())}
        if not agree:
            if near:
                entry, score = near[0]
                kind = gates["conflict"] = kinds[entry["cache_id"]]
                # another budget, count, date or exclusion is the same task changed (PARTIAL in its session);
                # other names may be another task, so that is PARTIAL only as a turn of this conversation
                outcome = self._downgrade(req, entry) if kind in ("value", "negation") else \
                    "PARTIAL" if req.in_conversation else "MISS"
                return Decision(outcome, "entities:conflict", score=score, entry=entry, gates=gates, **base)
            return Decision("MISS", "band:miss" if hits else "no_candidate",
                            score=max(s for _, s in hits) if hits else None, gates=gates, **base)
        if req.in_conversation and is_refinement(current):
            # "more", "continue", "再详细点": an instruction on the last answer; repeated, it asks for more
            entry, score = agree[0]
            return Decision(self._downgrade(req, entry), "intent:refine", score=score, entry=entry, gates=gates,
                            **base)
        # entries whose answers this request's parameters allow are gated first (the sort keeps nearest first
        # within each part): another entry of the same question, written under another stop string or model,
        # must not stand in the way of one that can serve
        agree.sort(key=lambda es: mismatch(req.params, es[0], self.allow_sampled_hits) is not None)
        with watch("gates"):
            entry, score, failed, gates = self._gate_candidates(req, agree[:self.gate_k], pair, policy, gates)
        downgrade = self._downgrade(req, entry)
        if failed is not None:
            # a gate's doubt is not the entry's fault: only users' evidence (feedback, regenerate, "that's
            # wrong") lowers an entry's feedback score, never a near-miss
            other_task = failed.startswith("intent:") and failed != "intent:modify"
            return Decision("MISS" if other_task else downgrade, failed, score=score, entry=entry, gates=gates,
                            **base)
        return Decision("HIT", "accept", score=score, entry=entry, gates=gates, **base)

    def _gate_candidates(self, req: CacheRequest, agree: list, pair: dict, own: Policy, shared: dict):
        """The hit gates on the agreeing candidates, nearest first, up to the first that passes: (entry, score,
        failing reason or None, gates). A session holds its paraphrases as entries of their own, and the nearest
        one's doubt says nothing of the next; when none passes, the nearest one's failure is the decision's.
        `own`: the policy of the request's own domain."""
        tried = []
        for entry, score in agree:
            policy = pair[entry["cache_id"]]
            other_domain = entry.get("intent_domain") != own.domain
            gates = dict(shared)
            if other_domain:
                gates["policy"] = policy.domain
            gates["band"] = "accept" if score >= policy.accept else "candidate"
            failed = self.gate(req, entry, policy, gates, other_domain=other_domain)
            tried.append((entry, score, failed, gates))
            # the request's own domain serves no stored answer: every pair policy is at least as strict
            if failed is None or (failed == "policy:no_direct_hit" and not own.allow_direct_hit):
                break
        entry, score, failed, gates = tried[-1] if tried[-1][2] is None else tried[0]
        if len(tried) > 1:
            gates["tried"] = [{"cache_id": e["cache_id"], "score": round(s, 4), "reason": f or "accept"}
                              for e, s, f, _ in tried]
        return entry, score, failed, gates

    def gate(self, req: CacheRequest, entry: dict, policy, gates: dict, other_domain: bool = False) -> str | None:
        """The hit gates on one candidate (the pair judge, the domain's direct-hit rule, the key-fact
        validator): None when it passes, else the failing reason. Details go into `gates`."""
        if history_diverged(req.messages, entry):
            gates["history"] = "diverged"
            return "context:diverged"
        if system_values_changed(req.messages, entry):
            gates["system"] = "values_changed"
            return "context:system_values"
        intent = self.intent.judge(req.messages, cached_messages(entry))
        gates["intent"] = intent.label
        gates["intent_by"] = intent.by
        gates["intent_probs"] = {k: round(v, 3) for k, v in intent.probs.items()}
        gates["changed"] = intent.alignment
        if other_domain and intent.alignment.get("kept") == 0 and intent.label == "modify":
            # an entry of another domain, and no content word of its turn asked again: another topic
            intent.label = gates["intent"] = "switch"
            gates["intent_by"] = "other_domain"
        if intent.label != "same":
            return f"intent:{intent.label}"
        if not policy.allow_direct_hit:
            return "policy:no_direct_hit"
        if policy.key_fact_check:
            verdict = self.validator.check(req.messages, entry.get("key_facts") or {})
            gates["validator"] = verdict.reason or "ok"
            if not verdict.ok:
                return f"validator:{verdict.reason.split(':', 1)[0]}"
        return None

    def _pair_policy(self, policy, entry: dict):
        domain = entry.get("intent_domain")
        return policy if domain == policy.domain else stricter(policy, self.policies.policy(domain))

    @staticmethod
    def _downgrade(req: CacheRequest, entry: dict | None) -> str:
        """The same task, changed (the judge's `modify`, a failed gate): PARTIAL in the same conversation (a
        follow-up turn, or the session that wrote the matched entry), whose prefix is there to reuse; a MISS
        anywhere else."""
        same_session = bool(entry and req.session_id and entry.get("session_id") == req.session_id)
        return "PARTIAL" if req.in_conversation or same_session else "MISS"

    def _honour_params(self, req: CacheRequest, decision: Decision) -> Decision:
        """A stored answer the backend could not have given this request (another model, longer than its
        max_tokens, holding one of its stop strings) is not served: the backend answers."""
        why = mismatch(req.params, decision.entry, self.allow_sampled_hits)
        if why is None:
            return decision
        decision.gates["params"] = why
        return Decision(self._downgrade(req, decision.entry), f"params:{why}", cacheable=req.store,
                        score=decision.score, entry=decision.entry, fingerprint=decision.fingerprint,
                        gates=decision.gates, implicit_feedback=decision.implicit_feedback)

    def _exact(self, req: CacheRequest, watch) -> Decision:
        """The baseline: the same messages, in any session of the tenant, and nothing else."""
        if not req.serve:
            return Decision("BYPASS", "client:no-cache", cacheable=req.store)
        with watch("search"):
            entries = self.store.find_exact(req.tenant, req.request_hash)
        if not entries:
            return Decision("MISS", "no_entry", cacheable=req.store)
        why = [mismatch(req.params, e, self.allow_sampled_hits) for e in entries]
        if None in why:
            return Decision("HIT", "exact", cacheable=False, score=1.0, entry=entries[why.index(None)])
        # none fits: the closest (another model is furthest) explains why, and this request's answer is written
        closest = max(range(len(entries)), key=lambda i: MISMATCHES.index(why[i]))
        return Decision("HIT", "exact", cacheable=req.store, score=1.0, entry=entries[closest])

    def wants_draft_elsewhere(self, req: CacheRequest, decision: Decision) -> bool:
        """A semantic MISS that matched nothing: `draft_elsewhere` may find it a draft."""
        return self.mode == "semantic" and decision.outcome == "MISS" and decision.entry is None \
            and decision.fingerprint is not None and not req.degraded

    def draft_elsewhere(self, req: CacheRequest, decision: Decision) -> str | None:
        """Another session's ready answer to exactly these messages, for a MISS that `wants_draft_elsewhere`:
        a draft for the bundled engine, which verifies every token, so what the client gets is the model's own
        output (only sooner). Never served: an entry stays in its session until it is promoted."""
        if not self.wants_draft_elsewhere(req, decision):
            return None
        for entry in self.store.find_exact(req.tenant, req.request_hash, limit=1):
            if entry.get("session_id") != req.session_id and entry.get("answer_text"):
                return entry["answer_text"]
        return None

    def _duplicate(self, req: CacheRequest, last: dict | None) -> Decision | None:
        """The same messages again within `duplicate_window_s` of the answer: a client retry or a burst, not a
        person pressing regenerate. It gets the answer just given (written pending or served)."""
        if not last or not last.get("cache_id") or last.get("request_hash") != req.request_hash \
                or time.time() - last.get("at", 0.0) > self.duplicate_window_s or not req.serve:
            return None
        entry = self.store.get(last["cache_id"])
        if entry is None or entry["state"] == "invalid":
            return None
        # a retry asks for the same thing: other sampling, seed or penalties is another request
        if ((entry.get("usage") or {}).get("request") or {}) != req.params.record():
            return None
        return Decision("HIT", "duplicate", cacheable=False, score=1.0, entry=entry)

    def _implicit_feedback(self, req: CacheRequest, current: str, last: dict | None) -> dict | None:
        """The same messages again (a regenerate), or "that's wrong" right after an answer: the previous
        answer of this session gets negative feedback (a pending one is dropped)."""
        if not last or not last.get("cache_id") or req.derived_session:
            return None                   # a derived conversation id may be shared by several people
        if last.get("request_hash") == req.request_hash:
            signal = "regenerate"
        elif is_negative(current):
            signal = "negative"
        else:
            return None
        updated = self.store.feedback(last["cache_id"], signal, req.session_id,
                                      voter=voter_id(f"implicit:{req.client_scope}", req.tenant,
                                                     None if req.client_scope else req.session_id))
        self.store.remember_turn(req.tenant, req.session_id, {**last, "cache_id": None})   # one signal per answer
        return {"signal": signal, "cache_id": last["cache_id"], "was_hit": last.get("outcome") == "HIT",
                "demoted": bool(updated and updated.get("demoted"))}

    # ---- write --------------------------------------------------------------
    def new_entry(self, req: CacheRequest, fp: Fingerprint, answer: str, *, usage: dict | None = None,
                  cache_id: str | None = None, state: str = "pending", scope: str = "session") -> NewEntry:
        tags = storable(asdict(fp.tags))
        turns = [{"role": m["role"], "content": storable(message_text(m)[:TURN_CHARS])} for m in req.messages
                 if m.get("role") in ("user", "assistant")][-4:]
        fingerprint = hashlib.sha256((fp.system_prompt_version + json.dumps(tags, sort_keys=True,
                                                                            ensure_ascii=False)).encode()).hexdigest()
        usage = storable(dict(usage or {}))
        usage["prompt_chars"] = sum(len(message_text(m)) for m in req.messages)
        usage["history"] = history_record(req.messages)
        usage["system"] = system_digest(req.messages)
        return NewEntry(tenant=req.tenant, session_id=req.session_id, vector=fp.vector, tags=tags, answer_text=answer,
                        system_prompt_version=fp.system_prompt_version, context_fingerprint=fingerprint,
                        key_facts=storable(self.extractor.for_entry(req.messages, answer)), scope=scope,
                        request_text=json.dumps({"view": storable(fp.context_view), "turns": turns},
                                                ensure_ascii=False),
                        answer_tokens=int(usage.get("completion_tokens") or 0), state=state, cache_id=cache_id,
                        request_hash=req.request_hash, usage=usage)

    @staticmethod
    def writable(req: CacheRequest, decision: Decision, answer: str) -> bool:
        """Whether `write` stores this answer (a duplicate of the session's live entry aside)."""
        if not (decision.cacheable and req.store and answer.strip()):
            return False
        if "\x00" in answer:             # served as the backend sent it, but not stored: text cannot hold NUL
            log.info("answer not cached: it contains a NUL character")
            return False
        return True

    def write(self, req: CacheRequest, decision: Decision, answer: str, usage: dict | None,
              cache_id: str | None = None) -> str | None:
        if not self.writable(req, decision, answer):
            return None
        fp = decision.fingerprint or self.fingerprinter.fingerprint(req.messages)     # exact mode decides without
        state = "ready" if self.store.config.ready_delay_s <= 0 else "pending"
        # the parameters this answer was generated under (a warmed answer has none: it serves any model)
        usage = {**(usage or {}), "request": req.params.record()}
        new = self.new_entry(req, fp, answer, usage=usage, cache_id=cache_id, state=state)
        new.promotion = self._candidacy(req, decision, fp, answer)
        return self._write(new)

    def _candidacy(self, req: CacheRequest, decision: Decision, fp: Fingerprint, answer: str) -> str | None:
        """"candidate" when this answer may later be promoted across users by evidence. A request that is itself
        evidence for another session's candidate adds to that one instead of starting a rival."""
        if self.promotion.mode == "off" or self.mode != "semantic" or decision.evidence is not None:
            return None
        if unshareable(req, self.policies.policy(fp.tags.intent_domain)) or pii_kinds(answer):
            return None
        return "candidate"

    def _write(self, new: NewEntry) -> str:
        return self.store.write(new)

    def warm(self, req: CacheRequest, answer: str, scope: str) -> tuple[str | None, str]:
        """Write a known-good answer `ready` (admin warm-up). Returns (cache_id, reason)."""
        current = current_user_text(req.messages)
        if not current.strip():
            return None, "the messages need a user turn"
        if "\x00" in answer:
            return None, "the answer contains a NUL character"
        if RiskPolicy.is_volatile(current):
            return None, "policy:realtime"
        fp = self.fingerprinter.fingerprint(req.messages)
        if not self.policies.policy(fp.tags.intent_domain).cacheable:
            return None, f"policy:{fp.tags.intent_domain}"
        return self._write(self.new_entry(req, fp, answer, state="ready", scope=scope)), "written"
