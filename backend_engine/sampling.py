"""Sampling parameters and the sampler (greedy, temperature, top-k, top-p, per-request seed).

A sampled token is drawn by inverse CDF from a uniform that depends only on the request's seed and the token's
position in the output, never on how many draws came before it. Speculative decoding, preemption and batching
change how many draws a request makes and in what order; with position-keyed noise the same seed still gives
the same text, and a draft token is kept exactly when the token drawn at its position equals it (the
speculative-sampling rule for a deterministic draft: kept with probability p(x), else distributed as the
residual of p)."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class SamplingParams:
    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0                      # 0: off
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    stop_token_ids: list[int] = field(default_factory=list)
    ignore_eos: bool = False
    # replay extension: emit exactly these tokens (each still costs a full forward step), then stop
    forced_text: str | None = None
    forced_token_ids: list[int] | None = None
    # speculative decoding: a reference text whose continuations are proposed as drafts (lossless)
    draft_text: str | None = None
    # a name under which that reference may arrive later (POST /v1/semcache/draft), while the request runs
    draft_key: str | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature <= 1e-5


_MASK64 = (1 << 64) - 1


def uniform(seed: int, position: int) -> float:
    """A uniform in [0, 1) for output `position` of a request seeded `seed` (splitmix64 of both: a counter-
    based generator, so any position can be drawn in any order)."""
    z = (seed * 0x9E3779B97F4A7C15 + (position + 1) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    z ^= z >> 31
    return (z >> 11) / float(1 << 53)


def sample(logits: torch.Tensor, params: SamplingParams, seed: int, position: int) -> int:
    """The token at output `position` from a [vocab] fp32 logits row."""
    if params.greedy:
        return int(torch.argmax(logits))
    return draw(probabilities(logits, params), uniform(seed, position))


def draw(probs: torch.Tensor, u: float) -> int:
    """Inverse CDF: the first token whose cumulative mass exceeds u (of the total, so rounding in the sum
    cannot run past the end). A token of zero mass adds nothing to the sum, so it is never drawn."""
    cumulative = probs.double().cumsum(-1)
    index = int(torch.searchsorted(cumulative, u * float(cumulative[-1]), right=True))
    return min(index, probs.shape[-1] - 1)


def probabilities(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """The distribution `sample` draws from (temperature, top-k, top-p); speculative sampling needs it too."""
    logits = logits / params.temperature
    if params.top_k and params.top_k < logits.shape[-1]:
        kth = torch.topk(logits, params.top_k).values[-1]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if params.top_p < 1.0:
        sorted_probs, order = torch.sort(probs, descending=True)
        cumulative = sorted_probs.cumsum(-1)
        # keep the smallest set whose mass reaches top_p (always at least the best token)
        drop = cumulative - sorted_probs > params.top_p
        sorted_probs = sorted_probs.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
        probs = probs / probs.sum()
    return probs
