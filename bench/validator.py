"""classify + validate latency on the CPU (the gates on every hit candidate).

    python bench/validator.py [--n 200]

Embeddings of the turns come from the fingerprint step in the pipeline, so they are
warm here (the encoder's LRU); the number is the classifier head + rule features +
key facts + validator. A cold line shows the cost when the three texts must be encoded.
It asserts nothing.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fingerprint import Fingerprinter, TextEncoder  # noqa: E402
from validator import KeyFactExtractor, KeyFactValidator  # noqa: E402
from validator.change_intent import ChangeIntentClassifier  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    encoder = TextEncoder("e5-small")
    classifier, validator, extractor = ChangeIntentClassifier(Fingerprinter(encoder).embed), KeyFactValidator(), KeyFactExtractor()
    for mode in ("warm", "cold"):
        latencies = []
        for i in range(args.n if mode == "warm" else max(args.n // 10, 10)):
            budget = 3000 + (i if mode == "cold" else 0)
            cached = [{"role": "user", "content": f"Plan 3 days in Rome, budget {budget} euros"},
                      {"role": "assistant", "content": f"Day 1: Colosseum. Total {budget - 200} euros."}]
            new = cached + [{"role": "user", "content": f"Change the budget to {budget - 1000} euros."}]
            facts = extractor.for_entry(cached[:1], cached[1]["content"])
            if mode == "warm":
                classifier.classify(new, cached)
            started = time.perf_counter()
            classifier.classify(new, cached)
            validator.check(new, facts)
            latencies.append(time.perf_counter() - started)
        print(f"{mode}: classify + validate p50 {statistics.median(latencies) * 1000:.2f} ms, "
              f"p99 {statistics.quantiles(latencies, n=100)[98] * 1000:.2f} ms")


if __name__ == "__main__":
    main()
