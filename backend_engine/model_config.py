"""The engine's view of a decoder-only checkpoint's config.json (Llama, Qwen2, Mistral)."""
from __future__ import annotations

from dataclasses import dataclass, field

SUPPORTED_ARCHITECTURES = ("llama", "qwen2", "mistral")


@dataclass
class ModelConfig:
    model_type: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    rope_scaling: dict | None = None
    max_position_embeddings: int = 2048
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    sliding_window: int | None = None
    eos_token_ids: list[int] = field(default_factory=list)
    bos_token_id: int | None = None
    # generation_config.json's suppress_tokens: never sampled (their logits are -inf)
    suppress_token_ids: list[int] = field(default_factory=list)

    @classmethod
    def from_hf(cls, cfg: dict) -> "ModelConfig":
        model_type = cfg.get("model_type", "llama")
        if model_type not in SUPPORTED_ARCHITECTURES:
            raise ValueError(f"model_type {model_type!r} is not supported "
                             f"(supported: {', '.join(SUPPORTED_ARCHITECTURES)})")
        heads = cfg["num_attention_heads"]
        # transformers 5 writes rope_parameters (theta inside); older configs rope_theta + rope_scaling
        rope = dict(cfg.get("rope_parameters") or {})
        theta = rope.pop("rope_theta", None) or cfg.get("rope_theta") or 10000.0
        scaling = cfg.get("rope_scaling") or (rope if rope else None)
        if scaling and (scaling.get("rope_type") or scaling.get("type")) in (None, "default"):
            scaling = None
        eos = cfg.get("eos_token_id")
        eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
        if model_type == "qwen2":
            qkv_bias, o_bias = True, False
        else:
            qkv_bias = o_bias = bool(cfg.get("attention_bias", False))
        window = cfg.get("sliding_window")
        if model_type == "qwen2" and not cfg.get("use_sliding_window", False):
            window = None
        return cls(
            model_type=model_type,
            vocab_size=cfg["vocab_size"],
            hidden_size=cfg["hidden_size"],
            intermediate_size=cfg["intermediate_size"],
            num_layers=cfg["num_hidden_layers"],
            num_heads=heads,
            num_kv_heads=cfg.get("num_key_value_heads") or heads,
            head_dim=cfg.get("head_dim") or cfg["hidden_size"] // heads,
            rms_norm_eps=cfg.get("rms_norm_eps", 1e-6),
            rope_theta=float(theta),
            rope_scaling=scaling,
            max_position_embeddings=cfg.get("max_position_embeddings", 2048),
            tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
            qkv_bias=qkv_bias,
            o_bias=o_bias,
            mlp_bias=bool(cfg.get("mlp_bias", False)),
            sliding_window=window,
            eos_token_ids=eos_ids,
            bos_token_id=cfg.get("bos_token_id"),
        )

    def to_hf(self) -> dict:
        """A config.json transformers can load (used for the built-in demo/bench models)."""
        cfg = {
            "architectures": [{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
                               "mistral": "MistralForCausalLM"}[self.model_type]],
            "model_type": self.model_type,
            "vocab_size": self.vocab_size,
            "hidden_size": self.hidden_size,
            "intermediate_size": self.intermediate_size,
            "num_hidden_layers": self.num_layers,
            "num_attention_heads": self.num_heads,
            "num_key_value_heads": self.num_kv_heads,
            "head_dim": self.head_dim,
            "rms_norm_eps": self.rms_norm_eps,
            "rope_theta": self.rope_theta,
            "max_position_embeddings": self.max_position_embeddings,
            "tie_word_embeddings": self.tie_word_embeddings,
            "hidden_act": "silu",
            "eos_token_id": self.eos_token_ids[0] if self.eos_token_ids else None,
            "bos_token_id": self.bos_token_id,
        }
        if self.rope_scaling:
            cfg["rope_scaling"] = self.rope_scaling
        return cfg
