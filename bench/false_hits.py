"""False-hit rate of the shipped thresholds on a large generated set, without HTTP.

    python bench/false_hits.py [--sessions 600] [--seed 7]

Runs the decision pipeline in-process over a labelled generated set (a seed
the other runs do not use) with every threshold at zero, then applies the
shipped per-domain `candidate` thresholds: a HIT is a request whose gates
passed with a score at or above its domain's threshold. Prints hits, false
hits and the 95% upper bound on the false-hit rate, overall and per domain.
It asserts nothing.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.replay.calibrate import threshold_sweep, upper_bound  # noqa: E402
from gateway.replay.generate import generate  # noqa: E402
from validator import RiskPolicy  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=600)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sessions = generate(args.sessions, seed=args.seed)
    started = time.perf_counter()
    rows = threshold_sweep(sessions)
    policies = RiskPolicy.load()
    by_domain: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])   # requests, reusable, hits, false hits
    for r in rows:
        d = by_domain[r["domain"] or "-"]
        d[0] += 1
        d[1] += r["label"] == "hit"
        if r["domain"] and r["passed"] and r["score"] is not None:
            policy = policies.policy(r["domain"])
            if policy.cacheable and policy.allow_direct_hit and r["score"] >= policy.candidate:
                d[2] += 1
                d[3] += r["label"] != "hit"
    print(f"{len(rows)} requests from {len(sessions)} sessions in {time.perf_counter() - started:.0f} s; "
          f"shipped thresholds (validator/data/risk_policy.json)")
    print(f"{'domain':>24} {'requests':>8} {'reusable':>8} {'hits':>6} {'false':>6} {'hit rate':>8} "
          f"{'false-hit rate':>14} {'95% bound':>10}")
    total = [0, 0, 0, 0]
    for domain, (n, reusable, hits, false) in sorted(by_domain.items()):
        total = [a + b for a, b in zip(total, (n, reusable, hits, false))]
        bound = upper_bound(false, n)
        print(f"{domain:>24} {n:>8} {reusable:>8} {hits:>6} {false:>6} {hits / n:>8.3f} {false / n:>14.5f} "
              f"{bound:>10.2e}")
    n, reusable, hits, false = total
    bound = upper_bound(false, n)
    print(f"{'all':>24} {n:>8} {reusable:>8} {hits:>6} {false:>6} {hits / n:>8.3f} {false / n:>14.5f} "
          f"{bound:>10.2e}")


if __name__ == "__main__":
    main()
