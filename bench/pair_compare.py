"""Two or more pair-model weight files on the same held-out pairs, at matched leaks: is a candidate better?

    python bench/pair_compare.py --dump val test              # the pairs left to the model, from today's build
    python bench/pair_compare.py --pairs /tmp/semcache-pairs-test.pkl validator/data/pair_model.safetensors:0.9902 \\
        /tmp/candidate/pair_model.safetensors:0.995

Each weight file runs as the gateway runs the judge in bf16 (`gateway.cache.service.bf16_judge` with that file's
weights, over the prepared e5 folder). For each: `same` recalled and changes let through at its own threshold and
at the thresholds that let 0.1%, 0.25% and 0.5% of the changes through, overall, by language and for the
hand-written pairs. `--ensemble` adds the mean of all the files' p(same) as one more judge (do two models'
errors differ enough to pay for a second pass?); its "own" threshold is the mean of theirs. Dump the pairs
before the data grows, so that an old and a new model meet on pairs neither trained on. It asserts nothing. (The project's own pairs only: never ../shared/eval.)
"""
from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "validator" / "training"))

from fingerprint.encoder import default_data_dir, resolve_encoder_dir  # noqa: E402
from gateway.cache.service import bf16_judge  # noqa: E402
from validator.pair_judge import PairTokens, batch, prejudge, view  # noqa: E402

LEAKS = (0.001, 0.0025, 0.005)


def dump(splits: list[str]) -> None:
    from build_pairs import build
    rows = build()
    for split in splits:
        keep = [{k: r[k] for k in ("new", "cached", "label", "lang", "source")} for r in rows
                if r["split"] == split and not prejudge(view(r["new"]), view(r["cached"])).label]
        path = Path(f"/tmp/semcache-pairs-{split}.pkl")
        path.write_bytes(pickle.dumps(keep))
        print(f"{split}: {len(keep)} pairs left to the model -> {path}")


def scores(weights: Path, seqs: list[list[int]], e5: Path) -> np.ndarray:
    runner = bf16_judge(e5, weights=weights)
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
    out = np.zeros(len(seqs))
    for start in range(0, len(order), 32):
        group = order[start:start + 32]
        ids, mask = batch([seqs[i] for i in group])
        out[group] = runner.run(ids, mask)[:, 0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", nargs="+", metavar="SPLIT")
    parser.add_argument("--pairs", type=Path)
    parser.add_argument("--ensemble", action="store_true", help="also the mean p(same) of all the weight files")
    parser.add_argument("models", nargs="*", metavar="WEIGHTS:THRESHOLD")
    args = parser.parse_args()
    if args.dump:
        return dump(args.dump)
    pairs = pickle.loads(args.pairs.read_bytes())
    models = default_data_dir() / "models"
    e5 = resolve_encoder_dir("e5-small", models_dir=models)[0]
    tokens = PairTokens(models / "pair-judge")
    seqs = [tokens.pair(view(r["new"]), view(r["cached"])) for r in pairs]
    same = np.array([r["label"] == "same" for r in pairs])
    parts = {"all": np.ones(len(pairs), bool), "en": np.array([r["lang"] == "en" for r in pairs]),
             "zh": np.array([r["lang"] == "zh" for r in pairs]),
             "written": np.array([r["source"] == "written" for r in pairs])}
    print(f"{len(pairs)} pairs ({same.sum()} same, {(~same).sum()} changes); cells: same recalled / changes through")
    judged = []
    for spec in args.models:
        weights, threshold = spec.rsplit(":", 1)
        started = time.perf_counter()
        p = scores(Path(weights), seqs, e5)
        judged.append((f"{weights} ({time.perf_counter() - started:.0f} s)", p, float(threshold)))
    if args.ensemble and len(judged) > 1:
        judged.append(("ensemble: mean p(same)", np.mean([p for _, p, _ in judged], axis=0),
                       float(np.mean([t for _, _, t in judged]))))
    for name, p, threshold in judged:
        report(name, p, threshold, same, parts)


def report(name: str, p: np.ndarray, threshold: float, same: np.ndarray, parts: dict[str, np.ndarray]) -> None:
    changes = np.sort(p[~same])[::-1]
    print(f"\n{name}")
    for label, t in [("own", threshold)] + [(f"{l:.2%}", float(changes[int(l * len(changes))]) + 1e-6)
                                            for l in LEAKS]:
        cells = "  ".join(f"{part} {(p[m & same] >= t).mean():.3f}/{int((p[m & ~same] >= t).sum())}"
                          for part, m in parts.items())
        print(f"  {label:>6} p(same) >= {t:.4f}: {cells}")


if __name__ == "__main__":
    main()
