"""The pair judge's trade-off on its held-out pairs: `same` recalled against changes let through, by threshold.

    python bench/pair_curve.py [--split val test] [--thresholds 0.9 0.95 0.97 0.98 0.99 0.995]

Runs the judge as the gateway runs it (the assembled ONNX model from the data dir: float32 layers, INT8
embedding tables) over the `val` and
`test` groups of validator/training/build_pairs.py. Alignment settles some pairs without the model
(`prejudge`); the table counts only the pairs left to the model, where the threshold matters: for each
threshold on p(same), the share of `same` pairs recalled and of `modify`/`switch` pairs judged `same`
(leaked), by language. The last line is the shipped threshold (validator/data/pair_model.json). It is
the curve to read before moving the threshold or retraining: a better model moves recall up at the same
leak. It asserts nothing. (The project's own pairs only: never ../shared/eval.)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "validator" / "training"))

from build_pairs import build  # noqa: E402

from fingerprint.encoder import default_data_dir, resolve_encoder_dir  # noqa: E402
from gateway.cache.service import bf16_judge  # noqa: E402
from validator.pair_judge import PairJudge, card, prejudge, view  # noqa: E402

BATCH = 16


def model_scores(judge: PairJudge, rows: list[dict]) -> tuple[list[dict], int]:
    """(pairs left to the model, each with its p(same)); and how many alignment settled."""
    views = [(view(r["new"]), view(r["cached"])) for r in rows]
    left = [i for i, (new, cached) in enumerate(views) if not prejudge(new, cached).label]
    out = []
    for start in range(0, len(left), BATCH):
        group = left[start:start + BATCH]
        for i, p in zip(group, judge.probs([views[i] for i in group])):
            out.append({"same": rows[i]["label"] == "same", "lang": rows[i].get("lang") or "-", "p": float(p[0])})
    return out, len(rows) - len(left)


def line(scored: list[dict], threshold: float) -> str:
    cells = []
    for lang in ("all", "en", "zh"):
        rows = [r for r in scored if lang == "all" or r["lang"] == lang]
        same = [r["p"] >= threshold for r in rows if r["same"]]
        changes = [r["p"] >= threshold for r in rows if not r["same"]]
        cells.append(f"{np.mean(same) if same else 0:6.3f} {np.mean(changes) if changes else 0:7.4f}")
    return "   ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", nargs="+", default=["val", "test"])
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.9, 0.95, 0.97, 0.98, 0.99, 0.995])
    parser.add_argument("--backend", nargs="+", choices=("onnx", "bf16"), default=["onnx"],
                        help="how the judge runs; several: each over the same pairs, and how often they disagree")
    parser.add_argument("--source", nargs="+", help="only the pairs of these sources (build_pairs.py's names)")
    args = parser.parse_args()
    models = default_data_dir() / "models"
    e5 = resolve_encoder_dir("e5-small", models_dir=models)[0]
    judges = {b: PairJudge.prepared(e5, models, runner=bf16_judge(e5) if b == "bf16" else None)
              for b in args.backend}
    shipped = float(card()["same_threshold"])
    rows = build()
    for split, backend in [(s, b) for s in args.split for b in args.backend]:
        chosen = [r for r in rows if r["split"] == split and (not args.source or r["source"] in args.source)]
        started = time.perf_counter()
        scored, settled = model_scores(judges[backend], chosen)
        took = time.perf_counter() - started
        n_same = sum(r["same"] for r in scored)
        if backend != args.backend[0]:
            first, _ = model_scores(judges[args.backend[0]], chosen)
            flips = sum((a["p"] >= shipped) != (b["p"] >= shipped) for a, b in zip(first, scored))
            gap = max(abs(a["p"] - b["p"]) for a, b in zip(first, scored))
            print(f"\n{backend} against {args.backend[0]}: {flips} of {len(scored)} pairs on the other side of the "
                  f"shipped threshold; largest |p(same) difference| {gap:.4f}")
        print(f"\n{split} ({backend}): {len(chosen)} pairs, {settled} settled by alignment, {len(scored)} to the model "
              f"({n_same} same, {len(scored) - n_same} changes), {took:.0f} s")
        print(f"{'p(same) >=':>10}   {'all: recall  leak':>17}   {'en: recall  leak':>17}   {'zh: recall  leak':>17}")
        for threshold in sorted(set(args.thresholds)):
            print(f"{threshold:>10.3f}   {line(scored, threshold)}")
        print(f"{shipped:>10.3f}   {line(scored, shipped)}   (shipped)")


if __name__ == "__main__":
    main()
