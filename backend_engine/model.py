"""Compact decoder-only transformer (Llama / Qwen2 / Mistral) over a paged KV cache.

Attention reads and writes KV only through `kernels`, so the same model code
runs on the torch references (CPU) and the Triton kernels (CUDA).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import torch
import torch.nn.functional as F
from torch import nn

import kernels
from backend_engine.model_config import ModelConfig
from backend_engine.rope import RotaryEmbedding


@dataclass
class AttentionBatch:
    """Where the step's tokens live in the paged cache."""
    slot_mapping: torch.Tensor      # [T] flat slot of each new token
    block_tables: torch.Tensor      # [B, max_blocks] int32
    prefix_lens: torch.Tensor       # [B] tokens already in the cache before this step
    extend_lens: torch.Tensor       # [B] new tokens this step
    is_decode: bool                 # every sequence adds exactly one token
    exact_rows: bool = False        # each decoded or verified token's attention alone (the bf16 engine)


# oneDNN lays a packed weight out for a batch of this many rows; on the CPUs measured, that layout served
# 1 to 400 rows at least as fast as the one packed for the exact count (docs/benchmarks.md, "CPU matmuls")
PACK_ROWS = 16


def onednn_pack(weight: torch.Tensor) -> torch.Tensor | None:
    """`weight` [out, in] reordered into oneDNN's blocked layout, or None where that path does not apply
    (not an fp32 or bf16 CPU tensor, or a torch built without oneDNN; bf16 only where the engine chose it,
    dtype_choice.py).

    Why: torch's default CPU matmul is slow for the few rows of a decode or a draft verification (a
    9-row pass through the 49,152-row lm_head cost 4x a 1-row one); with the weight packed once, 1 to 17
    rows cost about the same, so verifying a draft is nearly free and plain decoding is faster too."""
    if weight.device.type != "cpu" or weight.dtype not in (torch.float32, torch.bfloat16) \
            or not torch.backends.mkldnn.is_available():
        return None
    try:
        return torch.ops.mkldnn._reorder_linear_weight(weight.detach(), PACK_ROWS)
    except (AttributeError, RuntimeError):
        return None


def packed_linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None, min_rows: int = 1
                  ) -> torch.Tensor:
    """x @ packed.T (+ bias); an input of fewer than `min_rows` rows is padded to that many by repeating
    its last row, so it goes through the kernel the larger passes use (see `row_floor`)."""
    rows = x.shape[0]
    if rows < min_rows:
        padded = torch.cat([x, x[-1:].expand(min_rows - rows, x.shape[1])])
        return torch.ops.mkldnn._linear_pointwise(padded, packed, bias, "none", [], "")[:rows]
    return torch.ops.mkldnn._linear_pointwise(x.contiguous(), packed, bias, "none", [], "")


FLOOR_CHECK_ROWS = 48           # rows per check: a differing kernel shows in ~1e-4 of bf16 outputs, so many
FLOOR_CHECK_OUT = 8192          # a wider output (the lm_head) is blocked as its first 8,192 rows are


def pack_with_floor(weight: torch.Tensor) -> tuple[torch.Tensor | None, int]:
    """`onednn_pack(weight)` and the row floor its passes are padded to (1 where nothing was packed)."""
    packed = onednn_pack(weight)
    if packed is None:
        return None, 1
    return packed, row_floor(*weight.shape, weight.dtype) or 1


def row_floor(out_features: int, in_features: int, dtype: torch.dtype) -> int | None:
    """The fewest rows a packed product of this shape must be given so that each row comes out bit for bit
    the same in every pass of up to PACK_ROWS + 1 rows: 1 where a lone row already does, 2 where oneDNN
    serves a lone row with a kernel of its own, None where passes of 2 or more rows disagree too.

    Why: speculative decoding is lossless only if a token's numbers do not depend on how many tokens share
    its pass. On an AMD EPYC with AVX512-BF16 and no AMX, oneDNN sums a lone row of an input wider than
    1,024 in another order than it sums 2 to 17 rows (fp32: nearly every output differs in its last bits;
    bf16: about 1 in 7,000 outputs by one unit, enough to part greedy SmolLM2 from plain decoding at its
    35th token), while 2 to 17 rows agree with each other bit for bit (docs/engine.md, "Compute dtype").
    Measured once per shape and dtype on random numbers, about 0.1 s for the largest."""
    return _measured_row_floor(min(out_features, FLOOR_CHECK_OUT), in_features, dtype)


@cache
def _measured_row_floor(out_features: int, in_features: int, dtype: torch.dtype) -> int | None:
    generator = torch.Generator().manual_seed(0)
    weight = (torch.randn(out_features, in_features, generator=generator) * 0.05).to(dtype)
    packed = onednn_pack(weight)
    if packed is None:
        return None
    x = torch.randn(FLOOR_CHECK_ROWS, in_features, generator=generator).to(dtype)

    def passes(size: int) -> torch.Tensor:
        return torch.cat([packed_linear(x[i:i + size], packed, None, min(size, 2))
                          for i in range(0, FLOOR_CHECK_ROWS, size)])

    pairs = passes(2)
    if any(not torch.equal(passes(size), pairs) for size in range(3, PACK_ROWS + 2)):
        return None
    return 1 if torch.equal(passes(1), pairs) else 2


class Linear(nn.Linear):
    """nn.Linear without random init: weights always come from a checkpoint or an explicit seeded init,
    and skipping the init saves about a second per start. After `pack()` on a CPU it multiplies through
    a oneDNN-packed copy of its weight (the weight itself stays, for hashing and state dicts)."""

    packed: torch.Tensor | None = None
    min_rows = 1                    # the packed product's row floor (`row_floor`)
    dense_rows = 0                  # inputs of at most this many rows use the dense weight (matmul_choice.py)

    def reset_parameters(self) -> None:
        pass

    def pack(self) -> bool:
        if self.packed is None:
            self.packed, self.min_rows = pack_with_floor(self.weight)
        return self.packed is not None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.packed is not None and x.numel() > self.dense_rows * x.shape[-1]:
            return packed_linear(x, self.packed, self.bias, self.min_rows)
        return F.linear(x, self.weight, self.bias)


class Embedding(nn.Embedding):
    def reset_parameters(self) -> None:
        pass


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.float32:
            return F.rms_norm(x, (x.shape[-1],), self.weight, self.eps)
        # normalise in fp32, scale in the model dtype, as the reference checkpoints do
        return self.weight * F.rms_norm(x.float(), (x.shape[-1],), eps=self.eps).to(x.dtype)


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig, rope: RotaryEmbedding):
        super().__init__()
        self.num_heads, self.num_kv_heads, self.head_dim = cfg.num_heads, cfg.num_kv_heads, cfg.head_dim
        self.q_size = self.num_heads * self.head_dim
        self.kv_size = self.num_kv_heads * self.head_dim
        # q, k and v in one matmul: fewer kernel launches per layer
        self.qkv_proj = Linear(cfg.hidden_size, self.q_size + 2 * self.kv_size, bias=cfg.qkv_bias)
        self.o_proj = Linear(self.q_size, cfg.hidden_size, bias=cfg.o_bias)
        self.rope = rope
        self.scale = self.head_dim ** -0.5

    def forward(self, x, rotary, batch: AttentionBatch, kv):
        k_cache, v_cache, cold = kv
        tokens = x.shape[0]
        qk, v = self.qkv_proj(x).split([self.q_size + self.kv_size, self.kv_size], dim=-1)
        # q and k heads rotate together: one set of elementwise ops instead of two
        qk = self.rope.rotate(rotary, qk.reshape(tokens, self.num_heads + self.num_kv_heads, self.head_dim))
        q, k = qk.split([self.num_heads, self.num_kv_heads], dim=1)
        v = v.reshape(tokens, self.num_kv_heads, self.head_dim)
        kernels.store_kv(k, v, k_cache, v_cache, batch.slot_mapping)
        if batch.exact_rows:
            out = kernels.paged_exact_attention(q, k_cache, v_cache, batch.block_tables, batch.prefix_lens,
                                                batch.extend_lens, self.scale, cold)
        elif batch.is_decode:
            out = kernels.paged_decode_attention(q, k_cache, v_cache, batch.block_tables,
                                                 batch.prefix_lens + 1, self.scale, cold)
        else:
            out = kernels.paged_extend_attention(q, k_cache, v_cache, batch.block_tables,
                                                 batch.prefix_lens, batch.extend_lens, self.scale, cold)
        return self.o_proj(out.reshape(tokens, self.q_size))


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.inter = cfg.intermediate_size
        self.gate_up_proj = Linear(cfg.hidden_size, 2 * cfg.intermediate_size, bias=cfg.mlp_bias)
        self.down_proj = Linear(cfg.intermediate_size, cfg.hidden_size, bias=cfg.mlp_bias)

    def forward(self, x):
        gate, up = self.gate_up_proj(x).split([self.inter, self.inter], dim=-1)
        return self.down_proj(F.silu(gate) * up)


class DecoderLayer(nn.Module):
    def __init__(self, cfg: ModelConfig, rope: RotaryEmbedding):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg, rope)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, rotary, batch, kv):
        x = x + self.self_attn(self.input_layernorm(x), rotary, batch, kv)
        return x + self.mlp(self.post_attention_layernorm(x))


class CausalLM(nn.Module):
    def __init__(self, cfg: ModelConfig, max_model_len: int):
        super().__init__()
        self.config = cfg
        rope = RotaryEmbedding(cfg.head_dim, cfg.rope_theta, cfg.rope_scaling,
                               cfg.max_position_embeddings, max_model_len)
        self.rope = rope
        self.embed_tokens = Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg, rope) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.lm_head = None if cfg.tie_word_embeddings else Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        mask = None
        if cfg.suppress_token_ids:
            mask = torch.zeros(cfg.vocab_size, dtype=torch.bool)
            mask[torch.tensor(cfg.suppress_token_ids)] = True
        self.register_buffer("suppressed", mask, persistent=False)
        self.logits_packed: torch.Tensor | None = None
        self.logits_min_rows = 1
        self.dense_rows = 0
        self.dense_rows_chosen = False

    def use_dense_rows(self, rows: int) -> None:
        """Passes of at most `rows` rows multiply with the dense weights, larger ones with the packed copies."""
        self.dense_rows = rows
        for module in self.modules():
            if isinstance(module, Linear):
                module.dense_rows = rows

    def to_dtype(self, dtype: torch.dtype) -> None:
        """Weights in `dtype`, with the packed copies and the dense/packed choice made again for it."""
        if next(self.parameters()).dtype == dtype:
            return
        self.to(dtype)
        for module in self.modules():
            if isinstance(module, Linear):
                module.packed = None
        self.logits_packed = None
        self.dense_rows_chosen = False
        self.use_dense_rows(0)

    def pack_weights(self) -> bool:
        """Pack every projection and the logits weight for oneDNN (see `onednn_pack`); False where the
        model is not fp32 or bf16 on a CPU. Call once the weights are final: a later change is not seen."""
        packed = all([m.pack() for m in self.modules() if isinstance(m, Linear)])
        if self.logits_packed is None:
            weight = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
            self.logits_packed, self.logits_min_rows = pack_with_floor(weight)
        return packed and self.logits_packed is not None

    def forward(self, input_ids, positions, batch: AttentionBatch, kv_caches) -> torch.Tensor:
        x = self.embed_tokens(input_ids)
        rotary = self.rope.lookup(positions, x.dtype)           # once per step, shared by all layers
        for layer, kv in zip(self.layers, kv_caches):      # kv: (k_cache, v_cache, ColdBlocks | None)
            x = layer(x, rotary, batch, kv)
        return self.norm(x)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        if self.logits_packed is not None and hidden.shape[0] > self.dense_rows:
            logits = packed_linear(hidden, self.logits_packed, None, self.logits_min_rows).float()
        else:
            weight = self.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
            logits = F.linear(hidden, weight).float()
        # masked here, not in the sampler, so greedy, sampling and draft verification all see the same rows
        return logits if self.suppressed is None else logits.masked_fill(self.suppressed, float("-inf"))

    def load_hf_state_dict(self, tensors: dict[str, torch.Tensor]) -> None:
        """Load weights named as in Hugging Face checkpoints, fusing q/k/v and gate/up."""
        own = dict(self.named_parameters())
        loaded: set[str] = set()

        def put(name: str, value: torch.Tensor) -> None:
            if name not in own:
                raise KeyError(f"unexpected weight {name}")
            if own[name].shape != value.shape:
                raise ValueError(f"shape mismatch for {name}: {tuple(value.shape)} vs {tuple(own[name].shape)}")
            with torch.no_grad():
                own[name].copy_(value)
            loaded.add(name)

        fused: dict[str, dict[str, torch.Tensor]] = {}
        for name, value in tensors.items():
            name = name.removeprefix("model.")
            if "rotary_emb" in name:
                continue
            if name == "lm_head.weight" and self.lm_head is None:
                continue
            for part, target in (("q_proj", "qkv_proj"), ("k_proj", "qkv_proj"), ("v_proj", "qkv_proj"),
                                 ("gate_proj", "gate_up_proj"), ("up_proj", "gate_up_proj")):
                if f".{part}." in name:
                    fused.setdefault(name.replace(part, target), {})[part] = value
                    break
            else:
                put(name, value)
        order = {"qkv_proj": ("q_proj", "k_proj", "v_proj"), "gate_up_proj": ("gate_proj", "up_proj")}
        for name, parts in fused.items():
            kind = "qkv_proj" if "qkv_proj" in name else "gate_up_proj"
            if set(parts) != set(order[kind]):
                raise ValueError(f"incomplete fused weight {name}: has {sorted(parts)}")
            put(name, torch.cat([parts[p] for p in order[kind]], dim=0))
        missing = set(own) - loaded
        if missing:
            raise ValueError(f"checkpoint is missing weights: {sorted(missing)[:5]}")
