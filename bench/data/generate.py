"""Write a labelled multi-turn conversation set (EN + ZH; travel, after-sales, code, rewriting) as JSONL.

    python bench/data/generate.py --sessions 200 --seed 0 --out bench/data/generated.jsonl \
        [--turns 6] [--repeat 0.42 --constraint 0.20 --hard-negative 0.14 --followup 0.10 --switch 0.14]

The generator itself is gateway/replay/generate.py (so `semcache replay --dataset generated` needs no file);
`semcache replay --dataset bench/data/generated.jsonl` replays a written set. It prints the label mix.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from gateway.replay.datasets import write_jsonl  # noqa: E402
from gateway.replay.generate import DEFAULT_RATES, generate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--out", default=str(Path(__file__).parent / "generated.jsonl"))
    for kind, rate in DEFAULT_RATES.items():
        parser.add_argument(f"--{kind.replace('_', '-')}", type=float, default=rate, dest=kind)
    args = parser.parse_args()
    rates = {kind: getattr(args, kind) for kind in DEFAULT_RATES}
    sessions = generate(args.sessions, seed=args.seed, turns=args.turns, rates=rates)
    write_jsonl(sessions, Path(args.out))
    requests = [r for s in sessions for r in s["requests"]]
    labels = Counter(r["label"] for r in requests)
    print(f"wrote {len(sessions)} sessions, {len(requests)} requests to {args.out}: "
          + ", ".join(f"{k} {v} ({v / len(requests):.0%})" for k, v in sorted(labels.items())))


if __name__ == "__main__":
    main()
