"""Rotary position embeddings, including the `rope_scaling` variants of config.json.

Supported rope types: default, linear, dynamic (NTK, evaluated once at the
engine's max_model_len, as a paged cache needs one fixed table), yarn, llama3.
"""
from __future__ import annotations

import math

import torch


class UnsupportedRope(ValueError):
    pass


def _base_inv_freq(base: float, dim: int) -> torch.Tensor:
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def compute_inv_freq(head_dim: int, theta: float, scaling: dict | None,
                     max_position: int, max_model_len: int) -> tuple[torch.Tensor, float]:
    """Returns (inv_freq [head_dim/2], attention_factor applied to cos/sin)."""
    scaling = dict(scaling or {})
    rope_type = scaling.get("rope_type", scaling.get("type", "default")) or "default"
    dim = int(head_dim * scaling.get("partial_rotary_factor", 1.0))
    if dim != head_dim:
        raise UnsupportedRope("partial rotary embeddings are not supported")
    if rope_type == "default":
        return _base_inv_freq(theta, dim), 1.0
    factor = float(scaling["factor"])
    if rope_type == "linear":
        return _base_inv_freq(theta, dim) / factor, 1.0
    if rope_type == "dynamic":
        seq_len = max(max_model_len, max_position)
        base = theta * ((factor * seq_len / max_position) - (factor - 1)) ** (dim / (dim - 2))
        return _base_inv_freq(base, dim), 1.0
    if rope_type == "llama3":
        inv = _base_inv_freq(theta, dim)
        low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
        old_len = scaling["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > old_len / low, inv / factor, inv)
        smooth = (old_len / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < old_len / high) & ~(wavelen > old_len / low)
        return torch.where(medium, smoothed, scaled), 1.0
    if rope_type == "yarn":
        orig = scaling.get("original_max_position_embeddings") or max_position
        attn = scaling.get("attention_factor")
        if attn is None:
            m, m_all = scaling.get("mscale"), scaling.get("mscale_all_dim")
            attn = _yarn_mscale(factor, m) / _yarn_mscale(factor, m_all) if m and m_all else _yarn_mscale(factor)
        beta_fast = scaling.get("beta_fast") or 32
        beta_slow = scaling.get("beta_slow") or 1

        def correction_dim(rotations: float) -> float:
            return dim * math.log(orig / (rotations * 2 * math.pi)) / (2 * math.log(theta))

        low, high = correction_dim(beta_fast), correction_dim(beta_slow)
        if scaling.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
        pos_freqs = theta ** (torch.arange(0, dim, 2).float() / dim)
        extrapolate = 1 - ramp
        inv = (1.0 / (factor * pos_freqs)) * (1 - extrapolate) + (1.0 / pos_freqs) * extrapolate
        return inv, float(attn)
    raise UnsupportedRope(f"rope type {rope_type!r} is not supported")


class RotaryEmbedding(torch.nn.Module):
    """Precomputed cos/sin table; `lookup` once per step, then `rotate` q and k in every layer."""

    def __init__(self, head_dim: int, theta: float, scaling: dict | None,
                 max_position: int, max_model_len: int):
        super().__init__()
        inv_freq, attention_factor = compute_inv_freq(head_dim, theta, scaling, max_position, max_model_len)
        freqs = torch.outer(torch.arange(max(max_model_len, 1), dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos() * attention_factor, persistent=False)
        self.register_buffer("sin", emb.sin() * attention_factor, persistent=False)

    def lookup(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin rows for the step's positions, shaped [T, 1, D] to broadcast over heads."""
        return self.cos[positions].unsqueeze(1).to(dtype), self.sin[positions].unsqueeze(1).to(dtype)

    @staticmethod
    def _rotate_half(x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    @classmethod
    def rotate(cls, rotary: tuple[torch.Tensor, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        # x: [T, H, D] in the HF half-split layout
        cos, sin = rotary
        return x * cos + cls._rotate_half(x) * sin
