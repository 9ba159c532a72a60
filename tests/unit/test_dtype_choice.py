"""The engine's compute dtype (backend_engine/dtype_choice.py): explicit choices are honoured, `auto` takes
bf16 only on a CPU with native bf16 whose packed rows agree across pass sizes, and in bf16 speculative
decoding stays lossless (greedy tokens equal to decoding without drafts) on the demo model."""
import pytest
import torch

from backend_engine import EngineConfig, LLMEngine
from backend_engine import dtype_choice
from backend_engine.dtype_choice import choose_dtype, native_bf16, packed_rows_agree
from backend_engine.model import PACK_ROWS, Linear, packed_linear, row_floor
from backend_engine.sampling import SamplingParams

BF16_HERE = native_bf16() and torch.backends.mkldnn.is_available() and packed_rows_agree()
PROMPT = "Rewrite this sentence: the quick brown fox jumps over the lazy dog near the river bank. " * 3


def test_explicit_dtypes_are_honoured_and_others_refused():
    assert choose_dtype("float32") is torch.float32
    assert choose_dtype("bfloat16") is torch.bfloat16
    with pytest.raises(ValueError, match="dtype must be"):
        choose_dtype("float16")


def test_auto_is_float32_without_native_bf16_or_off_the_cpu(monkeypatch):
    monkeypatch.setattr(dtype_choice, "native_bf16", lambda: False)
    assert choose_dtype("auto") is torch.float32
    monkeypatch.setattr(dtype_choice, "native_bf16", lambda: True)
    assert choose_dtype("auto", "meta") is torch.float32


def test_auto_is_float32_where_rows_change_with_the_pass_size(monkeypatch):
    monkeypatch.setattr(dtype_choice, "native_bf16", lambda: True)
    monkeypatch.setattr(dtype_choice, "packed_rows_agree", lambda: False)
    assert choose_dtype("auto") is torch.float32


@pytest.mark.skipif(not BF16_HERE, reason="no native bf16 matmuls with row-stable packing on this CPU")
def test_auto_takes_bf16_where_the_cpu_has_it():
    assert choose_dtype("auto") is torch.bfloat16


# SmolLM2's projections (q/k/v fused, o, gate/up fused, down) and a wide output like its lm_head
SHAPES = ((960, 576), (576, 576), (3072, 576), (576, 1536), (8192, 576))


@pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="no oneDNN: nothing is packed")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("out_features,in_features", SHAPES)
def test_a_packed_linear_gives_each_row_the_same_numbers_in_any_pass_from_1_to_17_rows(out_features, in_features,
                                                                                     dtype):
    """What lossless speculation rests on: a token's projection does not depend on how many tokens share its
    pass. Checked on other numbers than row_floor measured with; a shape without a floor keeps floor 1."""
    if dtype is torch.bfloat16 and not native_bf16():
        pytest.skip("bf16 matmuls are emulated on this CPU: the engine never packs them here")
    torch.manual_seed(7)
    linear = Linear(in_features, out_features, bias=False)
    with torch.no_grad():
        linear.weight.copy_(torch.randn(out_features, in_features) * 0.05)
    linear.to(dtype)
    assert linear.pack()
    floor = row_floor(out_features, in_features, dtype)
    if floor is None:
        pytest.skip("passes of 2 or more rows disagree on this CPU: auto keeps float32 (bf16) and the floor 1")
    assert linear.min_rows == floor
    x = torch.randn(PACK_ROWS + 1, in_features).to(dtype)
    alone = torch.cat([linear(x[i:i + 1]) for i in range(PACK_ROWS + 1)])
    for size in range(2, PACK_ROWS + 2):
        together = torch.cat([linear(x[i:i + size]) for i in range(0, PACK_ROWS + 1, size)])
        assert torch.equal(together, alone), size


def test_a_pass_below_the_floor_is_padded_and_cut_back():
    """Padding changes which kernel runs, never how many rows come back or what they hold (up to rounding)."""
    if not torch.backends.mkldnn.is_available():
        pytest.skip("no oneDNN")
    weight = torch.randn(64, 1536) * 0.05
    packed = torch.ops.mkldnn._reorder_linear_weight(weight, PACK_ROWS)
    bias = torch.randn(64)
    x = torch.randn(1, 1536)
    out = packed_linear(x, packed, bias, min_rows=2)
    assert out.shape == (1, 64)
    assert torch.allclose(out, x @ weight.T + bias, atol=1e-4)
    if row_floor(64, 1536, torch.float32) is not None:     # a pass of 2 rows keeps its rows apart here
        assert torch.equal(out, packed_linear(torch.cat([x, torch.randn(1, 1536)]), packed, bias)[:1])


def _generate(dtype: str, mode: str, draft: str | None, loaded=None):
    eng = LLMEngine(EngineConfig(model="demo", num_blocks=256, max_model_len=1024, speculative=mode, dtype=dtype),
                    loaded)
    ids = eng.apply_chat_template([{"role": "user", "content": PROMPT}])
    out = eng.generate([ids], [SamplingParams(max_tokens=48, temperature=0, ignore_eos=True, draft_text=draft)])
    return out[0]["token_ids"], eng


@pytest.mark.skipif(not BF16_HERE, reason="no native bf16 matmuls with row-stable packing on this CPU")
def test_bf16_speculation_is_lossless_and_uses_packed_bf16_weights():
    plain, eng = _generate("bfloat16", "off", None)
    model = eng.runner.model
    assert next(model.parameters()).dtype is torch.bfloat16
    assert model.dense_rows == 0                      # no dense bf16 pass: its rows would round apart
    assert model.logits_packed is not None and model.logits_packed.dtype is torch.bfloat16
    assert eng.runner.kv_caches[0][0].dtype is torch.bfloat16
    text = eng.tokenizer.decode(plain, skip_special_tokens=True)
    for mode, draft in (("draft", text), ("auto", text), ("ngram", None), ("auto", "unrelated words " * 12)):
        tokens, spec = _generate("bfloat16", mode, draft)
        assert tokens == plain, (mode, draft)
    assert spec.stats.decode_tokens > 0
    _, eng = _generate("bfloat16", "draft", text)
    assert eng.stats.accepted_draft_tokens > 0 and eng.stats.decode_tokens > eng.stats.decode_steps


def test_a_shared_model_is_repacked_when_an_engine_asks_for_another_dtype():
    _, first = _generate("float32", "off", None)
    loaded = first.runner.model
    from backend_engine.loader import LoadedModel
    shared = LoadedModel(first.model_name, loaded, first.tokenizer, first.model_config, None)
    plain32, again = _generate("float32", "off", None, shared)
    assert next(again.runner.model.parameters()).dtype is torch.float32
    _, other = _generate("bfloat16", "off", None, shared)
    model = other.runner.model
    assert next(model.parameters()).dtype is torch.bfloat16
    packed = [m.packed for m in model.modules() if getattr(m, "packed", None) is not None]
    assert all(p.dtype is torch.bfloat16 for p in packed)       # no fp32 copy left from the first engine


def test_the_backend_command_and_the_embedded_engine_setting_reach_the_engine_config():
    from gateway.cli import _engine_config, build_parser
    from gateway.settings import Settings
    assert _engine_config(build_parser().parse_args(["backend"])).dtype == "auto"
    assert _engine_config(build_parser().parse_args(["backend", "--dtype", "float32"])).dtype == "float32"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["backend", "--dtype", "float16"])
    assert Settings().engine_dtype == "auto"
