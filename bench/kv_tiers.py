"""KV tiers: TTFT of a returning conversation turn after the pool has turned over.

Many sessions of 1-3k tokens (a shared system prompt, then session text)
run their first turn one after another through a pool that holds about a
tenth of them; then every session comes back with one more user message, in
shuffled order, so most of them return after the pool has turned over. The
returning turn's TTFT is measured side by side: each configuration has its own
engine, and every turn runs on all four in turn (fair on a shared machine):

  none       no tiers: what the pool lost is prefilled again
  load       tiers, always load what a tier holds
  recompute  tiers, always recompute (the tiers' bookkeeping, no benefit)
  cost       tiers, the cost rule (load or recompute by measured rates)

Tiers: host memory holding about a third of the sessions (INT8), the rest on
disk (INT4) in a temporary directory. Prints P50/P95 and ratios; asserts nothing.

    python bench/kv_tiers.py [--model bench|demo] [--sessions 40] [--pool-sessions 4] [--threads 2]
"""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend_engine import EngineConfig, LLMEngine, SamplingParams  # noqa: E402
from backend_engine.loader import load_model  # noqa: E402
from kernels import int4  # noqa: E402

CONFIGS = {"none": None, "load": "load", "recompute": "recompute", "cost": "cost"}


def workload(args, vocab: int):
    rng = random.Random(0)
    system = [rng.randrange(100, vocab) for _ in range(args.system_tokens)]
    firsts = [system + [rng.randrange(100, vocab) for _ in range(rng.randint(args.min_tokens, args.max_tokens)
                                                                   - args.system_tokens)]
              for _ in range(args.sessions)]
    news = [[rng.randrange(100, vocab) for _ in range(args.new_tokens)] for _ in range(args.sessions)]
    order = list(range(args.sessions))
    rng.shuffle(order)
    return firsts, news, order


def ttft(engine: LLMEngine, rid: str, prompt: list[int], params: SamplingParams, protected: int) -> tuple[float, dict]:
    seq = engine.add_request(rid, prompt, params, protected_tokens=protected)
    while seq.first_token_time is None:
        engine.step()
    first = seq.first_token_time - seq.arrival_time
    while not seq.is_finished:
        engine.step()
    return first, {"tokens": seq.output_token_ids, "cached": seq.num_cached_tokens}


def build(name: str, policy: str | None, args, loaded, tier_dir: Path) -> LLMEngine:
    mean_tokens = (args.min_tokens + args.max_tokens) / 2
    num_blocks = int(args.pool_sessions * mean_tokens / args.block_size)
    cfg = loaded.config
    block_bytes_int8 = 2 * cfg.num_layers * args.block_size * cfg.num_kv_heads * (cfg.head_dim + 4)
    host = int(args.sessions / 3 * mean_tokens / args.block_size * block_bytes_int8) if policy else 0
    return LLMEngine(EngineConfig(
        model=args.model, block_size=args.block_size, num_blocks=num_blocks, max_model_len=args.max_tokens + 256,
        max_num_batched_tokens=args.chunk, speculative="off", kv_host_tier=host,
        kv_disk_tier=(10 * 2**30 if policy else 0), data_dir=str(tier_dir / name) if policy else None,
        kv_host_dtype="int8", kv_disk_dtype="int4", kv_tier_policy=policy or "cost"), loaded)


def run(names: list[str], args, loaded, firsts, news, order) -> dict:
    """All configurations side by side: each session's turn runs on every engine in turn, so the noise of a
    shared machine falls on all of them alike."""
    tier_dir = Path(tempfile.mkdtemp(prefix="semcache-kv-bench-"))
    engines = {name: build(name, CONFIGS[name], args, loaded, tier_dir) for name in names}
    params = SamplingParams(max_tokens=args.answer_tokens, temperature=0, ignore_eos=True)
    answers = {name: {} for name in names}
    spent = {name: [0.0, 0.0] for name in names}
    for i, prompt in enumerate(firsts):
        for name, engine in engines.items():
            started = time.perf_counter()
            _, out = ttft(engine, f"{name}-first-{i}", prompt, SamplingParams(**vars(params)), args.system_tokens)
            answers[name][i] = out["tokens"]
            spent[name][0] += time.perf_counter() - started
    times = {name: [] for name in names}
    cached = {name: [] for name in names}
    for i in order:
        for name, engine in engines.items():
            prompt = firsts[i] + answers[name][i] + news[i]
            started = time.perf_counter()
            t, out = ttft(engine, f"{name}-back-{i}", prompt, SamplingParams(**vars(params)), args.system_tokens)
            spent[name][1] += time.perf_counter() - started
            times[name].append(t)
            cached[name].append(out["cached"] / len(prompt))
    results = {}
    for name, engine in engines.items():
        ts = sorted(times[name])
        r = {"p50": statistics.median(ts), "p95": ts[int(0.95 * (len(ts) - 1))], "cached": statistics.fmean(
             cached[name]), "phase1": spent[name][0], "phase2": spent[name][1]}
        if engine.tiers is not None:
            t, s, rates = engine.tiers.counters, engine.tiers.store.stats, engine.tiers.rates
            r.update(loaded=t.loaded_blocks, recomputed=t.recomputed_blocks, host_hits=s.hits["host"],
                     disk_hits=s.hits["disk"], moved_down=s.moved_down, mib_loaded=s.bytes_loaded / 2**20,
                     saved=t.prefill_seconds_saved, prefill_tps=1 / rates.token_s,
                     bandwidth={k: 1 / v / 2**20 for k, v in rates.byte_s.items() if k in engine.tiers.store.tiers})
        engine.close()
        results[name] = r
    shutil.rmtree(tier_dir, ignore_errors=True)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="bench")
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--pool-sessions", type=float, default=4, help="the pool holds about this many sessions")
    ap.add_argument("--min-tokens", type=int, default=1000)
    ap.add_argument("--max-tokens", type=int, default=3000)
    ap.add_argument("--system-tokens", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=32, help="the returning turn's new user message")
    ap.add_argument("--answer-tokens", type=int, default=4)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--chunk", type=int, default=1024, help="max_num_batched_tokens")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    loaded = load_model(args.model, max_model_len=args.max_tokens + 256)
    firsts, news, order = workload(args, loaded.config.vocab_size)
    cfg = loaded.config
    print(f"model={args.model} layers={cfg.num_layers} kv_heads={cfg.num_kv_heads} head_dim={cfg.head_dim} "
          f"threads={args.threads} sessions={args.sessions} tokens={args.min_tokens}-{args.max_tokens} "
          f"pool~{args.pool_sessions:g} sessions block={args.block_size}; INT4 error bound: scale/2 per "
          f"{int4.GROUP}-value group", flush=True)
    results = run(args.configs.split(","), args, loaded, firsts, news, order)
    for name, r in results.items():
        extra = ""
        if "loaded" in r:
            bw = ", ".join(f"{k} {v:.0f} MiB/s" for k, v in r["bandwidth"].items())
            extra = (f"\n{'':>11}loaded {r['loaded']} blocks ({r['mib_loaded']:.0f} MiB; host {r['host_hits']}, "
                     f"disk {r['disk_hits']}), recomputed {r['recomputed']}, host->disk {r['moved_down']}, "
                     f"prefill saved ~{r['saved']:.1f}s; rates at the end: prefill {r['prefill_tps']:.0f} tok/s, {bw}")
        print(f"{name:>9}: returning TTFT P50 {r['p50'] * 1e3:8.1f} ms  P95 {r['p95'] * 1e3:8.1f} ms  "
              f"cached {r['cached']:.0%}  (first turns {r['phase1']:.0f}s, returns {r['phase2']:.0f}s){extra}")
    if {"none", "load", "recompute", "cost"} <= results.keys():
        none, cost = results["none"], results["cost"]
        best50 = min(results["load"]["p50"], results["recompute"]["p50"])
        best95 = min(results["load"]["p95"], results["recompute"]["p95"])
        print(f"cost rule vs no tiers: P50 {none['p50'] / cost['p50']:.1f}x faster, "
              f"P95 {none['p95'] / cost['p95']:.1f}x faster (target >= 3x at P50)")
        print(f"cost rule vs the better of load/recompute: P50 {cost['p50'] / best50:.2f}x, "
              f"P95 {cost['p95'] / best95:.2f}x (target <= 1.10x)")


if __name__ == "__main__":
    main()
