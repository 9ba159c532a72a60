"""Calibrates `promotion_answer_similarity`: how similar two answers to the same request are, against two
answers to neighbouring but different requests, on real conversations (the ShareGPT package).

Positives: first turns asked word for word in several conversations, with different answers (another
sample of the same answer). Negatives: for a sample of first turns, the nearest other first turn (question
cosine at least --near) and its answer: near-neighbour requests whose answers should not count as the
same answer (some are paraphrases, so the negatives are pessimistic). Question groups are split 70/30;
the bound is chosen on the 70% as the smallest value letting at most --max-false of the negatives agree,
and both rates are reported on the held-out 30%.

    python bench/promotion_bound.py [--sample 3000] [--max-false 0.05]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fingerprint import TextEncoder  # noqa: E402
from gateway.mine import _from_record  # noqa: E402
from gateway.replay.datasets import iter_sharegpt  # noqa: E402

ANSWER_CHARS = 1500


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=3000, help="first turns searched for negatives")
    parser.add_argument("--near", type=float, default=0.88, help="question cosine of a negative's neighbour")
    parser.add_argument("--max-false", type=float, default=0.05, help="negatives allowed to agree (fit split)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    rng = random.Random(args.seed)
    by_question: dict[str, list[str]] = defaultdict(list)
    for number, record in enumerate(iter_sharegpt()):
        turn = _from_record(record, number)
        if turn is not None and len(turn.question) <= 600:
            by_question[" ".join(turn.question.lower().split())].append(turn.answer[:ANSWER_CHARS])
    encoder = TextEncoder("e5-small")
    positives: list[tuple[str, str, str]] = []
    for question, answers in by_question.items():
        distinct = sorted(set(answers))
        pairs = list(combinations(distinct, 2))
        rng.shuffle(pairs)
        positives += [(question, a, b) for a, b in pairs[:10]]
    questions = rng.sample(sorted(by_question), min(args.sample, len(by_question)))
    vectors = encoder.encode(questions)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -1)
    negatives = []
    for i, question in enumerate(questions):
        j = int(np.argmax(sims[i]))
        if args.near <= sims[i, j] < 0.999:
            negatives.append((question, by_question[question][0], by_question[questions[j]][0]))
    groups = sorted({q for q, _, _ in positives} | {q for q, _, _ in negatives})
    rng.shuffle(groups)
    held = set(groups[:int(0.3 * len(groups))])

    def similarity(pairs):
        if not pairs:
            return np.zeros(0)
        a = encoder.encode([x for _, x, _ in pairs])
        b = encoder.encode([y for _, _, y in pairs])
        return np.sum(a * b, axis=1)
    split = {name: ([p for p in positives if (p[0] in held) == (name == "held")],
                    [n for n in negatives if (n[0] in held) == (name == "held")]) for name in ("fit", "held")}
    scores = {name: (similarity(pos), similarity(neg)) for name, (pos, neg) in split.items()}
    fit_pos, fit_neg = scores["fit"]
    candidates = sorted(set(np.round(np.concatenate([fit_pos, fit_neg]), 3)))
    bound = next((b for b in candidates if np.mean(fit_neg >= b) <= args.max_false), 1.0)
    print(f"ShareGPT first turns: {sum(len(v) for v in by_question.values())}, repeated questions with different "
          f"answers: {sum(1 for v in by_question.values() if len(set(v)) > 1)}")
    for name, (pos, neg) in scores.items():
        print(f"{name:>4}: positive pairs {len(pos)} (cosine p5 {np.percentile(pos, 5):.3f}, p50 "
              f"{np.percentile(pos, 50):.3f}), negative pairs {len(neg)} (p50 {np.percentile(neg, 50):.3f}, p95 "
              f"{np.percentile(neg, 95):.3f})")
    held_pos, held_neg = scores["held"]
    print(f"bound (fit: at most {args.max_false:.0%} of negatives agree): {bound:.3f}")
    print(f"held-out at {bound:.3f}: same-request answers agree {np.mean(held_pos >= bound):.3f}, "
          f"neighbouring requests' answers agree {np.mean(held_neg >= bound):.3f}")
    for b in (0.85, 0.88, 0.90, 0.92, 0.95):
        print(f"  at {b:.2f}: held-out positives agree {np.mean(held_pos >= b):.3f}, negatives "
              f"{np.mean(held_neg >= b):.3f}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
