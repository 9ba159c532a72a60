"""RoPE scaling variants against transformers' reference parameter functions."""
import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from backend_engine.rope import UnsupportedRope, compute_inv_freq

SCALINGS = [
    {"rope_type": "linear", "factor": 4.0},
    {"rope_type": "dynamic", "factor": 2.0},
    {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
     "original_max_position_embeddings": 256},
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 256},
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 256, "beta_fast": 16,
     "beta_slow": 2, "mscale": 1.0, "mscale_all_dim": 0.5},
]


@pytest.mark.parametrize("scaling", SCALINGS, ids=lambda s: s["rope_type"])
def test_inv_freq_matches_transformers(scaling):
    theta, head_dim, max_pos = 50000.0, 64, 1024
    cfg = LlamaConfig(hidden_size=256, num_attention_heads=4, head_dim=head_dim, max_position_embeddings=max_pos,
                      rope_parameters={"rope_theta": theta, **scaling})
    ref_inv, ref_factor = ROPE_INIT_FUNCTIONS[scaling["rope_type"]](cfg, "cpu")
    inv, factor = compute_inv_freq(head_dim, theta, scaling, max_pos, max_model_len=max_pos)
    torch.testing.assert_close(inv, ref_inv.float(), rtol=1e-6, atol=0)
    assert factor == pytest.approx(ref_factor)


def test_unknown_rope_type_is_a_clear_error():
    with pytest.raises(UnsupportedRope, match="not supported"):
        compute_inv_freq(64, 10000.0, {"rope_type": "mystery", "factor": 2.0}, 1024, 1024)
