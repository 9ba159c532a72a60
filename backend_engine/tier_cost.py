"""Recompute or load: the Roofline rule for prefix blocks found below the pool.

Prefill time of tokens [start, end) with `start` tokens already cached:
    n * token_s + n * (start + n / 2) * attn_s,           n = end - start
(the projections and MLP per token, and attention over everything visible).
Load time of a block: fixed_s (one hand-off to the loader thread per load)
plus its bytes over the tier's measured bandwidth (read, checksum, dequantize
and copy). Loads are a prefix of the missing run (a loaded block must follow
a computed one), so the plan is the k that minimises
    load(first k blocks) + prefill(the rest of the run, after them).
A short run loses to the fixed cost and is recomputed; a long run is loaded.
The rates are measured at start-up (`calibrate`), refined by real prefill steps, and exported as metrics.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import torch

from backend_engine import kv_codec
from backend_engine.sampling import SamplingParams
from backend_engine.sequence import Sequence

POLICIES = ("cost", "load", "recompute")


@dataclass
class Rates:
    token_s: float = 1e-4                                   # prefill seconds per token
    attn_s: float = 0.0                                     # seconds per (new token x visible token)
    byte_s: dict[str, float] = field(default_factory=lambda: {"host": 1e-9, "disk": 1e-8})
    fixed_s: float = 1e-3                                   # per load: loader hand-off, next-step pickup

    def recompute(self, start: int, end: int) -> float:
        n = max(end - start, 0)
        return n * self.token_s + n * (start + n / 2) * self.attn_s

    def load(self, tier: str, nbytes: int) -> float:
        return nbytes * self.byte_s[tier]

    def observe_prefill(self, spans: list[tuple[int, int]], seconds: float, weight: float = 0.2) -> None:
        """Refine the prefill rates with a real step that computed `spans` [(start, end)]: both terms move
        by the same factor, a moving average in log space. A start-up measurement spoiled by a busy
        machine (small prefills suffer most) is corrected by the traffic itself."""
        estimate = sum(self.recompute(start, end) for start, end in spans)
        if estimate <= 0 or seconds <= 0:
            return
        factor = min(max(seconds / estimate, 0.1), 10.0) ** weight
        self.token_s *= factor
        self.attn_s *= factor

    def observe_load(self, tier: str, nbytes: int, seconds: float, weight: float = 0.2) -> None:
        """The same for a tier's bandwidth, from the loader's real reads."""
        if nbytes <= 0 or seconds <= 0 or tier not in self.byte_s:
            return
        factor = min(max(seconds / (nbytes * self.byte_s[tier]), 0.1), 10.0) ** weight
        self.byte_s[tier] *= factor


def plan(entries: list, first_token: int, block_size: int, rates: Rates, policy: str = "cost") -> int:
    """How many leading blocks of a missing run (tier entries, in chain order) to load; the rest is recomputed."""
    if policy == "load":
        return len(entries)
    if policy == "recompute" or not entries:
        return 0
    end = first_token + len(entries) * block_size
    best_k, best = 0, rates.recompute(first_token, end)
    loading = rates.fixed_s
    for k, entry in enumerate(entries, 1):
        loading += rates.load(entry.tier, entry.nbytes)
        cost = loading + rates.recompute(first_token + k * block_size, end)
        if cost < best:
            best_k, best = k, cost
    return best_k


# ---- start-up measurements -------------------------------------------------
def _prefill_seconds(engine, tokens: list[int]) -> float:
    """One prefill through the runner on scratch blocks (never published: nothing is cached)."""
    bm = engine.block_manager
    seq = Sequence("calibration", tokens, SamplingParams(max_tokens=1))
    assert bm.ensure_slots(seq, len(tokens))
    try:
        started = time.perf_counter()
        engine.runner.run([(seq, len(tokens))])
        return time.perf_counter() - started
    finally:
        bm.free(seq)


def calibrate_prefill(engine, rates: Rates) -> None:
    bm = engine.block_manager
    n = min(128, (bm.num_free * bm.block_size) // 2, engine.config.max_num_batched_tokens)
    n -= n % bm.block_size
    if n < bm.block_size:
        return
    vocab = engine.model_config.vocab_size
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, vocab, (2 * n,), generator=g).tolist()
    _prefill_seconds(engine, tokens[:n])                     # warm-up: first calls allocate
    # the minimum of two runs: a busy machine only ever adds time (a few seconds of start-up at most)
    t1 = min(_prefill_seconds(engine, tokens[:n]) for _ in range(2))
    t2 = min(_prefill_seconds(engine, tokens) for _ in range(2)) if 2 * n <= bm.num_free * bm.block_size else 2 * t1
    # t(n) = n a + n^2 b / 2 and t(2n) = 2 n a + 2 n^2 b. A noisy pair can make a look negative: then keep
    # t(n) exact with half of it per token (far less than the real share for a context this short)
    rates.attn_s = max((t2 - 2 * t1) / n ** 2, 0.0)
    rates.token_s = (t1 - rates.attn_s * n * n / 2) / n
    if rates.token_s < t1 / n / 2:
        rates.token_s = t1 / n / 2
        rates.attn_s = 2 * (t1 - rates.token_s * n) / n ** 2
    # at a few hundred tokens attention is lost in the noise of the fit; it is never less than its share of
    # the FLOPs: QK and PV (4 Hq D per layer and visible token) against 2 per weight per token
    rates.attn_s = max(rates.attn_s, rates.token_s * attention_flop_ratio(engine.runner.model))


def attention_flop_ratio(model) -> float:
    cfg = model.config
    weights = sum(p.numel() for name, p in model.named_parameters() if "embed" not in name)
    return 4 * cfg.num_heads * cfg.head_dim * cfg.num_layers / (2 * max(weights, 1))


def calibrate_loads(engine, store, rates: Rates) -> None:
    """Time read + decode + copy of one block per tier (a scratch file for the disk tier)."""
    cfg = engine.model_config
    dtype = next(engine.runner.model.parameters()).dtype
    data = torch.randn(cfg.num_layers, 2, engine.config.block_size, cfg.num_kv_heads, cfg.head_dim).to(dtype)
    target = torch.empty_like(data, device=engine.runner.device)
    for name, tier in store.tiers.items():
        payload = {k: t.cpu() for k, t in kv_codec.encode(data, tier.dtype).items()}
        size = kv_codec.nbytes(payload)
        if name == "disk":
            scratch = (1 << 127) + 12345                      # not a real block's hash
            meta = {"hash": f"{scratch:032x}", "parent": None, "tokens": [], "depth": 0, "protected": False,
                    "dtype": tier.dtype}
            size = store.disk.write(scratch, meta, payload)

            def read(scratch=scratch):
                return store.disk.read(scratch)
        else:
            def read(payload=payload):
                return payload
        times = []
        for _ in range(5):
            started = time.perf_counter()
            got = read()
            target.copy_(kv_codec.decode({k: t.to(target.device) for k, t in got.items()}, tier.dtype, dtype))
            times.append(time.perf_counter() - started)
        if name == "disk":
            store.disk.delete(scratch)
        rates.byte_s[name] = sorted(times)[len(times) // 2] / max(size, 1)
    # the hand-off: a thread wakes up, and the result is picked up at the start of a step
    done = threading.Event()
    started = time.perf_counter()
    threading.Thread(target=done.set).start()
    done.wait()
    rates.fixed_s = time.perf_counter() - started
