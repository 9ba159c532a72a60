"""Sampling parameters and the sampler (greedy, temperature, top-k, top-p, per-request seed)."""
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


def sample(logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None) -> int:
    """One token from a [vocab] fp32 logits row."""
    if params.greedy:
        return int(torch.argmax(logits))
    return int(torch.multinomial(probabilities(logits, params), 1, generator=generator))


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
