"""The e5 encoder in bfloat16: the same vectors as fp32 within float noise, in batches too, and chosen only where
it was measured cheaper."""
from pathlib import Path

import numpy as np
import pytest

from fingerprint import bf16_bert
from fingerprint import encoder as encoder_module
from fingerprint.encoder import TextEncoder
from tests.conftest import models_dir

TEXTS = ["How long should I boil an egg for a runny yolk?", "预算八千元，三天两晚的杭州行程，不要爬山",
         "Rewrite this paragraph so it sounds less formal: We regret to inform you that the event is cancelled.",
         "def merge(a, b): return {**a, **b}  # why does the second dict win?", "ok", "谢谢！",
         "Ｆｕｌｌ－ｗｉｄｔｈ  text and emoji 🎉", "What's the refund window for an order that arrived damaged?"]


@pytest.fixture(scope="module")
def pair():
    folder = Path(models_dir())
    # no thread budget for bf16: it would set torch's per-process pool for the rest of the test run
    return (TextEncoder("e5-small", backend="onnx", models_dir=folder, threads=1),
            TextEncoder("e5-small", backend="bf16", models_dir=folder))


def test_bf16_vectors_match_fp32_on_english_and_chinese(pair):
    onnx, bf16 = pair
    assert bf16.backend == "bf16" and bf16._session is None          # no second copy of the model is kept
    assert_close_to_fp32(onnx, bf16, 0.9999)


def assert_close_to_fp32(fp32: TextEncoder, other: TextEncoder, floor: float) -> None:
    """Unit vectors within `floor` cosine of fp32's on TEXTS, and the ranking the index relies on kept: each
    text is still nearest to itself among the others."""
    a, b = fp32.encode(TEXTS), other.encode(TEXTS)
    assert b.dtype == np.float32 and np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert (a * b).sum(1).min() >= floor
    assert ((b @ a.T).argmax(1) == np.arange(len(TEXTS))).all()


def test_bf16_batches_of_mixed_lengths_equal_single_runs(pair):
    _, bf16 = pair
    bf16.forget()
    together = bf16.encode(TEXTS)
    bf16.forget()
    alone = np.stack([bf16.encode([t])[0] for t in TEXTS])
    assert (together * alone).sum(1).min() >= 0.9999               # padding changes nothing but rounding


def test_bf16_is_chosen_only_where_it_saves_enough(monkeypatch):
    assert encoder_module.faster_by(10.0, 8.4) and not encoder_module.faster_by(10.0, 8.6)
    assert not encoder_module.faster_by(10.0, 12.0)
    monkeypatch.setattr(encoder_module, "native_bf16", lambda: False)
    # no native bf16: e5 runs with INT8 weights (a third less CPU than fp32 there), never bf16
    assert TextEncoder("e5-small", models_dir=Path(models_dir())).backend == "int8"
    assert encoder_module.auto_backend("e5-small", Path(models_dir()) / "e5-small") == "int8"
    # another model's folder is never quantised behind the operator's back (it may be read-only)
    assert encoder_module.auto_backend("/some/other/model", Path(models_dir()) / "e5-small") == "onnx"
    assert encoder_module.runs_int8("int8", "minilm") and not encoder_module.runs_int8("onnx", "e5-small")
    monkeypatch.setattr(encoder_module, "native_bf16", lambda: True)
    assert not encoder_module.runs_int8("auto", "e5-small")       # there bf16 is measured against fp32
    with pytest.raises(ValueError, match="backend must be"):
        TextEncoder("e5-small", backend="int4", models_dir=Path(models_dir()))


def test_the_auto_choice_is_measured_once_and_followed(monkeypatch):
    calls = []
    monkeypatch.setattr(encoder_module, "native_bf16", lambda: True)
    monkeypatch.setattr(encoder_module, "_BF16_CHOICE", {})
    monkeypatch.setattr(encoder_module, "faster_by", lambda onnx, bf16: calls.append((onnx, bf16)) or True)
    first = TextEncoder("e5-small", models_dir=Path(models_dir()))
    second = TextEncoder("e5-small", models_dir=Path(models_dir()))
    assert first.backend == second.backend == "bf16"
    assert len(calls) == 1 and all(t > 0 for t in calls[0])         # real CPU times, measured once
    monkeypatch.setattr(encoder_module, "_BF16_CHOICE", {})
    monkeypatch.setattr(encoder_module, "faster_by", lambda onnx, bf16: False)
    assert TextEncoder("e5-small", models_dir=Path(models_dir())).backend == "onnx"


@pytest.mark.skipif(not encoder_module.native_bf16(), reason="oneDNN's packed bf16 weights need a CPU with native bf16")
def test_packed_weights_compute_what_plain_bf16_weights_do(pair):
    _, bf16 = pair
    folder = bf16.folder
    packed, plain = bf16_bert.Bf16Bert(folder, packed=True), bf16_bert.Bf16Bert(folder, packed=False)
    ids = np.random.default_rng(0).integers(5, 30000, (3, 11))
    mask = np.ones_like(ids)
    mask[1, 6:] = 0                                   # a padded row
    a, b = packed.run(ids, mask), plain.run(ids, mask)
    # the same products summed in another order (oneDNN's blocking differs with the thread count): 0.99999
    # held on a quiet machine, 0.9999898 was seen under load; a wrong layout gives far less
    assert (a * b).sum(1).min() >= 0.9999


def test_auto_falls_back_to_onnx_when_bf16_cannot_be_built(monkeypatch):
    from fingerprint import bf16_bert as module

    def broken(*args, **kwargs):
        raise RuntimeError("no packed bf16 here")
    monkeypatch.setattr(encoder_module, "native_bf16", lambda: True)
    monkeypatch.setattr(encoder_module, "_BF16_CHOICE", {})
    monkeypatch.setattr(module, "Bf16Bert", broken)
    encoder = TextEncoder("e5-small", models_dir=Path(models_dir()))
    assert encoder.backend == "onnx" and encoder.encode(["still encodes"]).shape == (1, encoder.dim)


def test_an_encoder_asked_for_bf16_opens_no_onnx_runtime_session(monkeypatch):
    monkeypatch.setattr(TextEncoder, "_onnx_session", lambda self, threads: pytest.fail("an ONNX session was opened"))
    made = TextEncoder("e5-small", backend="bf16", models_dir=Path(models_dir()))
    assert made.backend == "bf16" and made.dim == 384 and made._session is None
