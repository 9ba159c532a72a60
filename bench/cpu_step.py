"""One SmolLM2 forward pass on the CPU, dense `F.linear` against oneDNN-packed weights, side by side in one
run: the cost of a decode step (1 token) and of a draft verification (2 to 17 tokens) at a fixed context.

    python bench/cpu_step.py [--context 400] [--repeats 10]

Prints milliseconds per pass (with the logits rows) for each token count and mode, and the ratios.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend_engine.loader import load_model  # noqa: E402
from backend_engine.model import AttentionBatch  # noqa: E402

COUNTS = (1, 2, 5, 9, 17)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--context", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    model = load_model("smollm2", 2048, None).model
    cfg = model.config
    block = 16
    blocks = (args.context + max(COUNTS)) // block + 1
    kv = [(torch.zeros(blocks, block, cfg.num_kv_heads, cfg.head_dim),
           torch.zeros(blocks, block, cfg.num_kv_heads, cfg.head_dim), None) for _ in range(cfg.num_layers)]
    table = torch.arange(blocks, dtype=torch.int32)[None]
    gen = torch.Generator().manual_seed(0)

    def forward(start: int, count: int) -> None:
        ids = torch.randint(0, cfg.vocab_size, (count,), generator=gen)
        positions = torch.arange(start, start + count)
        batch = AttentionBatch(slot_mapping=positions.clone(), block_tables=table,
                               prefix_lens=torch.tensor([start], dtype=torch.int32),
                               extend_lens=torch.tensor([count], dtype=torch.int32), is_decode=count == 1)
        with torch.inference_mode():
            model.compute_logits(model(ids, positions, batch, kv))

    def timed(count: int) -> float:
        for _ in range(2):
            forward(args.context, count)
        started = time.perf_counter()
        for _ in range(args.repeats):
            forward(args.context, count)
        return (time.perf_counter() - started) / args.repeats * 1000

    forward(0, args.context)
    dense = {n: timed(n) for n in COUNTS}
    if not model.pack_weights():
        print("oneDNN packing is not available here: only the dense path was measured")
        packed = dense
    else:
        packed = {n: timed(n) for n in COUNTS}
        from backend_engine.matmul_choice import choose_dense_rows
        print(f"the engine's own choice here (matmul_choice.py): dense weights for passes of up to "
              f"{choose_dense_rows(model)} rows, packed above")
        model.use_dense_rows(0)
    print(f"\nSmolLM2-135M fp32, one sequence, context {args.context}, {torch.get_num_threads()} threads, "
          f"ms per forward pass with logits\n")
    print(f"{'tokens':>6} {'dense ms':>9} {'packed ms':>10} {'dense/packed':>13} {'packed / 1-token':>17}")
    for n in COUNTS:
        print(f"{n:>6} {dense[n]:>9.1f} {packed[n]:>10.1f} {dense[n] / packed[n]:>12.2f}x "
              f"{packed[n] / packed[1]:>16.2f}x")


if __name__ == "__main__":
    main()
