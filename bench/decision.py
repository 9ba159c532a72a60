"""Decision latency by stage (signals, fingerprint, search, gates, total) for 2-, 10- and 40-turn
conversations, with 10k and 100k entries in the cache.

    python bench/decision.py [--sizes 10000 100000] [--turns 2 10 40] [--probes 150]

The store is real (SQLite in a temp dir, in-process hot store, the HNSW index);
the background entries are random unit vectors spread over 1,000 sessions and
8 domains (10% global), bulk-inserted and indexed by a rebuild. Each probe's
session holds a real entry written by the pipeline (so the gates run), and the
probe is the cached question in other words, a constraint change or a new
question (a third each). "steady" primes
the encoder with the conversation first, as the gateway does after each answer
(only the new user turn is encoded on the request path); "cold" does not.
Target (issue 8): p50 <= 10 ms and p99 <= 25 ms for the whole decision on 2 cores.
It asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.cache import CacheRequest, SemanticCache  # noqa: E402
from gateway.metrics import GatewayMetrics  # noqa: E402
from gateway.replay.runner import percentile  # noqa: E402
from gateway.store import StoreConfig, open_store  # noqa: E402
from gateway.store.models import CacheEntry  # noqa: E402
from fingerprint.normalize import normalize_text  # noqa: E402

CITIES = ["Kyoto", "Lisbon", "Rome", "Hangzhou", "Chengdu", "Vienna", "Seoul", "Prague", "Istanbul", "Hanoi"]
DOMAINS = ["travel_planning", "customer_support", "code_qa", "doc_rewrite", "product_recommendation", "chitchat",
           "other", "realtime"]
ASK = ["Plan a {d}-day trip to {c} with a budget of {b} dollars.", "What should I eat in {c}?",
       "Which neighbourhood of {c} is best for a hotel?", "How do I get from the airport to central {c}?",
       "Is {c} crowded in October?", "Suggest a rainy-day plan in {c}.", "What is a good day trip from {c}?"]
PARAPHRASE = ["Could you plan a {d} day {c} trip for me, budget {b} USD?", "Which area of {c} should I stay in?",
              "What food should I try in {c}?"]
CHANGE = ["Raise the budget to {b2} dollars.", "Make it {d2} days instead.", "Remove the museums from the plan."]
ANSWER = ("Here is a plan for {c}. Day 1: the old town and a food market, about {b1} dollars with the hotel. "
          "Day 2: a museum in the morning and a river walk. Day 3: a day trip by train. Keep some cash for taxis; "
          "book the popular restaurants two weeks ahead.")


def conversation(turns: int, rng: random.Random) -> tuple[list[dict], dict]:
    """`turns - 2` earlier messages (user/assistant pairs) about one city, and its slots."""
    c, d, b = rng.choice(CITIES), rng.randint(2, 6), rng.choice([1500, 2000, 3000])
    messages = []
    while len(messages) < turns - 2:
        messages.append({"role": "user", "content": rng.choice(ASK[1:]).format(c=c)})
        messages.append({"role": "assistant", "content": ANSWER.format(c=c, b1=b - 150)})
    return messages, {"c": c, "d": d, "b": b}


def background(store, n: int, rng: np.random.Generator) -> None:
    """n random entries, bulk-inserted, then indexed by a rebuild (as at start-up)."""
    now = datetime.now(timezone.utc)
    rows = []
    for i in range(n):
        v = rng.standard_normal(384).astype(np.float32)
        v /= np.linalg.norm(v)
        domain = DOMAINS[i % len(DOMAINS)]
        rows.append({"cache_id": uuid.uuid4().hex, "tenant": "bench", "session_id": f"bg-{i % 1000}",
                     "scope": "global" if i % 10 == 0 else "session", "context_fingerprint": "x" * 64,
                     "system_prompt_version": "v0", "intent_domain": domain,
                     "tags": {"intent_domain": domain, "active_entities": []}, "vector": v.tobytes(),
                     "request_text": "{}", "answer_text": "background answer", "key_facts": {}, "state": "ready",
                     "ttl_s": 1e9, "hit_count": 0, "feedback_score": 0.0, "saved_tokens": 0, "answer_tokens": 10,
                     "created_at": now, "ready_at": now, "updated_at": now})
    with store.sessions.begin() as db:
        for start in range(0, n, 5000):
            db.execute(CacheEntry.__table__.insert(), rows[start:start + 5000])
    store.rebuild_index()


def run(cache: SemanticCache, turns: int, probes: int, steady: bool, seed: int) -> dict:
    rng = random.Random(seed)
    pipeline = cache.pipeline
    stages: dict[str, list[float]] = {}
    outcomes: dict[str, int] = {}
    for i in range(probes):
        session = f"probe-{turns}-{steady}-{i}-{uuid.uuid4().hex[:6]}"
        history, slots = conversation(turns, rng)
        cached_q = {"role": "user", "content": ASK[0].format(**slots)}
        answer = ANSWER.format(c=slots["c"], b1=slots["b"] - 150)
        pipeline.warm(CacheRequest("bench", session, [*history, cached_q]), answer, "session")
        kind = i % 3
        if kind == 0:      # the last question asked again in other words (edit-and-resend)
            messages = [*history, {"role": "user", "content": PARAPHRASE[0].format(**slots)}]
        else:              # a changed constraint, or a new question, after the cached answer
            text = rng.choice(CHANGE) if kind == 1 else rng.choice(ASK[1:])
            text = text.format(c=slots["c"], b2=slots["b"] + 1000, d2=slots["d"] + 2)
            messages = [*history, cached_q, {"role": "assistant", "content": answer},
                        {"role": "user", "content": text}]
        if steady:
            pipeline.fingerprinter.prime(messages[:-1])
            # the steady state: the entry was written long before this request, and the encoder's idle time
            # has encoded its side of the classifier (under load that happens on demand, in "gates")
            pipeline.fingerprinter.encoder.settle()
            # the new turn is encoded on the request path, as a new message is (an earlier probe may have asked
            # the same words; a tail of random letters would be a changed content word to the pair judge)
            pipeline.fingerprinter.encoder.forget([normalize_text(messages[-1]["content"])])
        else:
            pipeline.fingerprinter.encoder.forget()            # nothing of this conversation encoded yet
        decision = pipeline.decide(CacheRequest("bench", session, messages, store=False))
        key = f"{decision.outcome}:{decision.reason}"
        outcomes[key] = outcomes.get(key, 0) + 1
        for stage, ms in decision.timings_ms.items():
            stages.setdefault(stage, []).append(ms)
    return {"stages": {s: (statistics.median(v), percentile(v, 0.99), len(v)) for s, v in stages.items()},
            "outcomes": outcomes}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--turns", type=int, nargs="+", default=[2, 10, 40])
    parser.add_argument("--probes", type=int, default=150)
    parser.add_argument("--encoder-backend", nargs="+", choices=("auto", "onnx", "int8", "bf16"), default=["auto"],
                        help="the encoder's backend (encoder_backend); several: each in turn on the same store")
    args = parser.parse_args()
    print(f"decision latency, {os.cpu_count()} CPU cores, e5-small encoder; ms as p50 / p99")
    header = f"{'entries':>8} {'encoder':>7} {'turns':>5} {'mode':>6} | " + " | ".join(
        f"{s:^15}" for s in ("signals", "fingerprint", "search", "gates", "total")) + " | outcomes"
    print(header)
    for size in args.sizes:
        folder = Path(tempfile.mkdtemp(prefix="semcache-bench-"))
        store = open_store(None, None, folder, StoreConfig(ready_delay_s=0, max_entries=10 * size))
        started = time.perf_counter()
        background(store, size, np.random.default_rng(0))
        built = time.perf_counter() - started
        for backend, turns in [(b, t) for t in args.turns for b in args.encoder_backend]:
            cache = SemanticCache.build(store, GatewayMetrics(), models_dir=Path(
                os.environ.get("SEMCACHE_MODELS_DIR") or Path(os.environ.get("SEMCACHE_DATA_DIR") or
                                                              Path.home() / ".semcache") / "models"),
                                        encoder_backend=backend)
            run(cache, 2, 10, True, seed=99)         # warm-up: ONNX sessions, SQLite pages
            for steady in (True, False):
                result = run(cache, turns, args.probes if steady else max(args.probes // 3, 20), steady,
                             seed=turns + (0 if steady else 1000))
                cells = []
                for stage in ("signals", "fingerprint", "search", "gates", "total"):
                    p50, p99, n = result["stages"].get(stage, (float("nan"), float("nan"), 0))
                    cells.append(f"{p50:6.2f} / {p99:6.2f}")
                print(f"{size:>8} {cache.pipeline.fingerprinter.encoder.backend:>7} {turns:>5} "
                      f"{'steady' if steady else 'cold':>6} | " + " | ".join(cells)
                      + f" | {result['outcomes']}")
        print(f"  ({size} background entries inserted and indexed in {built:.1f} s; "
              f"{len(store.index)} searchable)")
        store.close()


if __name__ == "__main__":
    main()
