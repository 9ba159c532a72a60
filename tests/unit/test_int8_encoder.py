"""The e5 encoder with INT8 weights (`encoder_backend: int8`): quantised once beside the fp32 model, vectors close
to fp32 on English and Chinese, and the pair judge beside it never quantised."""
from pathlib import Path

import numpy as np
import pytest

from fingerprint.e5_prepare import INT8_FILE
from fingerprint.encoder import TextEncoder
from gateway.cache import service
from gateway.settings import Settings
from tests.conftest import models_dir
from tests.unit.test_bf16_encoder import TEXTS, assert_close_to_fp32


@pytest.fixture(scope="module")
def pair():
    folder = Path(models_dir())
    return (TextEncoder("e5-small", backend="onnx", models_dir=folder, threads=1),
            TextEncoder("e5-small", backend="int8", models_dir=folder, threads=1))


def test_int8_vectors_stay_close_to_fp32(pair):
    fp32, int8 = pair
    assert int8.backend == "int8" and int8.dim == fp32.dim
    # measured 0.9975 at worst over these texts on an AVX-512 EPYC, 0.9963 on an AVX2 one (0.989 with every
    # layer quantised): quantisation noise
    assert_close_to_fp32(fp32, int8, 0.99)


def test_the_int8_model_is_made_once_and_reused(pair):
    _, int8 = pair
    made = int8.folder / INT8_FILE
    before = made.stat().st_mtime_ns
    again = TextEncoder("e5-small", backend="int8", models_dir=Path(models_dir()), threads=1)
    assert made.stat().st_mtime_ns == before
    assert not list(int8.folder.glob(f"{INT8_FILE}.*.tmp"))         # no half-written copy is left behind
    # each text runs alone: its vector does not depend on what it was batched with
    assert np.array_equal(again.encode(TEXTS[:2]), int8.encode(TEXTS[:2]))


def test_the_judge_is_not_quantised_with_the_encoder(pair, monkeypatch):
    _, int8 = pair
    monkeypatch.setattr(service, "native_bf16", lambda: True)
    assert service.judge_in_bf16(int8)                 # bf16 where the CPU has it, as the judge was measured
    monkeypatch.setattr(service, "native_bf16", lambda: False)
    assert not service.judge_in_bf16(int8)             # else ONNX Runtime fp32: never INT8
    assert Settings(encoder_backend="int8").encoder_backend == "int8"


def test_a_folder_without_an_onnx_model_is_a_clear_error(tmp_path):
    from fingerprint.e5_prepare import prepare_e5_int8
    with pytest.raises(FileNotFoundError, match="no model.onnx to quantise"):
        prepare_e5_int8(tmp_path)
    assert not list(tmp_path.iterdir())                  # nothing half-made is left
