"""INT4 KV blocks: the stated error bound, packing, and the Triton dequantization against the torch reference.

Bound (kernels/int4.py): with scale = (max - min) / 15 of a 32-value group, every value comes back within
scale / 2 (round to nearest), plus fp32 rounding of values of the group's magnitude.
"""
import pytest
import torch

from kernels import int4, torch_ref


def test_round_trip_within_half_a_step_per_group():
    g = torch.Generator().manual_seed(0)
    cases = [torch.randn(5, 16, 4, 64, generator=g),                       # KV-like
             torch.randn(3, 8, 2, 32, generator=g) * 100 + 50,             # large offset, wide range
             torch.rand(2, 4, 1, 32, generator=g) * 1e-3 - 7.0,            # narrow range far from zero
             torch.full((2, 2, 1, 64), 3.25)]                              # constant groups: exact
    for x in cases:
        packed, scale, zero = int4.quantize(x)
        back = int4.dequantize(packed, scale, zero)
        err = (back - x).abs()
        bound = int4.error_bound(scale, zero)
        assert bool((err <= bound).all()), float((err - bound).max())
        # the bound is tight: some value is off by nearly half a step
        if x.std() > 0:
            assert float((err / bound).max()) > 0.8
    const = cases[-1]
    assert torch.equal(int4.dequantize(*int4.quantize(const)), const)


def test_packing_two_nibbles_per_byte_low_first():
    x = torch.arange(32, dtype=torch.float32).reshape(1, 32) % 16      # values 0..15 twice: scale 1, zero 0
    packed, scale, zero = int4.quantize(x)
    assert packed.dtype == torch.uint8 and packed.shape == (1, 16)
    assert float(scale[0, 0]) == 1.0 and float(zero[0, 0]) == 0.0
    assert int(packed[0, 0]) == 0 | (1 << 4) and int(packed[0, 7]) == 14 | (15 << 4)
    assert torch.equal(int4.dequantize(packed, scale, zero), x)


def test_bytes_per_value_and_bad_head_dim():
    x = torch.randn(4, 16, 2, 64)
    packed, scale, zero = int4.quantize(x)
    nbytes = packed.numel() + 4 * (scale.numel() + zero.numel())
    assert nbytes / x.numel() == pytest.approx(int4.bytes_per_value())      # 0.75 bytes vs 4 in fp32
    with pytest.raises(ValueError):
        int4.quantize(torch.randn(2, 48))


@pytest.mark.parametrize("shape", [(3, 16, 2, 32), (2, 4, 4, 64), (1, 1, 1, 128)])
def test_triton_dequantize_matches_torch_reference(shape):
    triton_ops = pytest.importorskip("kernels.triton_ops")
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1)) * 3
    packed, scale, zero = int4.quantize(x)
    ref = torch_ref.dequantize_int4(packed, scale, zero)
    out = triton_ops.dequantize_int4(packed, scale, zero)
    assert out.shape == ref.shape == x.shape
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=1e-6)
    half = triton_ops.dequantize_int4(packed, scale, zero, torch.float16)
    assert half.dtype == torch.float16
    torch.testing.assert_close(half.float(), ref, atol=1e-2, rtol=1e-3)
