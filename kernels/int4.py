"""INT4 KV blocks: group-wise asymmetric quantization, two nibbles per byte.

Along the last dimension (head_dim) every GROUP values share an fp32 scale and
zero point: q = round((x - zero) / scale) in [0, 15], x' = q * scale + zero,
with zero = min and scale = (max - min) / 15 of the group. Round to nearest
gives the error bound |x - x'| <= scale / 2 for every value (plus fp32
rounding), and a constant group comes back exactly (scale is clamped to a
tiny positive value, q is 0).

Packing: value 2i is the low nibble of byte i, value 2i + 1 the high nibble.
This is the torch reference; `kernels.triton_ops.dequantize_int4` is the
Triton kernel with the same semantics.
"""
from __future__ import annotations

import torch

GROUP = 32


def quantize(x: torch.Tensor, group: int = GROUP) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x [..., D] -> (packed uint8 [..., D/2], scale fp32 [..., D/group], zero fp32 [..., D/group])."""
    d = x.shape[-1]
    if d % group or group % 2:
        raise ValueError(f"head_dim {d} must be a multiple of the INT4 group {group} (even)")
    g = x.float().reshape(*x.shape[:-1], d // group, group)
    lo, hi = g.amin(dim=-1), g.amax(dim=-1)
    scale = ((hi - lo) / 15.0).clamp(min=1e-12)
    q = torch.round((g - lo.unsqueeze(-1)) / scale.unsqueeze(-1)).clamp(0, 15).to(torch.uint8)
    q = q.reshape(*x.shape[:-1], d)
    packed = q[..., 0::2] | (q[..., 1::2] << 4)
    return packed.contiguous(), scale, lo


def dequantize(packed: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor,
               dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Inverse of `quantize`: [..., D/2] uint8 -> [..., D] in `dtype` (arithmetic in fp32)."""
    q = torch.stack((packed & 0xF, packed >> 4), dim=-1).reshape(*packed.shape[:-1], packed.shape[-1] * 2)
    groups = scale.shape[-1]
    g = q.float().reshape(*q.shape[:-1], groups, -1)
    x = g * scale.unsqueeze(-1) + zero.unsqueeze(-1)
    return x.reshape(q.shape).to(dtype)


def error_bound(scale: torch.Tensor, zero: torch.Tensor, group: int = GROUP) -> torch.Tensor:
    """Per-value bound [..., D] on |x - dequantize(quantize(x))|: half a step, plus fp32 rounding of
    values as large as the group's magnitude."""
    magnitude = zero.abs() + 15 * scale
    return (scale / 2 + magnitude * 2.0 ** -20).repeat_interleave(group, dim=-1)


def bytes_per_value(group: int = GROUP) -> float:
    return 0.5 + 8.0 / group            # a nibble, and a share of the group's fp32 scale and zero
