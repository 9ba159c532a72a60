"""What alignment does with the hand-written pairs: settled as the same request, vetoed (by kind), or left to
the pair model, for the `same` rewordings and the `modify` edits of every group.

    python bench/alignment_vetoes.py [--folder validator/training/corpus/written_unseen] [--json OUT]

The table to read before and after a change to validator/alignment.py: a good change moves `same` pairs out of
the vetoes (to the model) and `modify` pairs into them, and never moves a `modify` pair to `settled`. With
--json it writes each pair's outcome, so two runs can be compared pair by pair. The project's own groups only
(never ../shared/eval). It asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "validator" / "training"))

from gen_written import FOLDER, _texts, groups  # noqa: E402

from validator.alignment import align  # noqa: E402


def outcome(cached: str, new: str) -> str:
    alignment = align(cached, new)
    return alignment.vetoed or ("settled" if not alignment.changed else "model")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, nargs="+", default=[FOLDER, FOLDER.parent / "written_unseen"])
    parser.add_argument("--json", type=Path, help="write every pair's outcome here")
    args = parser.parse_args()
    counts = {"same": Counter(), "modify": Counter()}
    pairs = {}
    for folder in args.folder:
        for g in groups(folder):
            for label in counts:
                for text in _texts(g.get(label)):
                    result = outcome(g["request"], text)
                    counts[label][result] += 1
                    pairs[f"{label}|{g['group']}|{text}"] = result
    kinds = sorted(set(counts["same"]) | set(counts["modify"]), key=lambda k: (k != "model", k != "settled", k))
    print(f"{'outcome':<12} {'same':>7} {'modify':>7}")
    for kind in kinds:
        print(f"{kind:<12} {counts['same'][kind]:>7} {counts['modify'][kind]:>7}")
    print(f"{'all':<12} {sum(counts['same'].values()):>7} {sum(counts['modify'].values()):>7}")
    if args.json:
        args.json.write_text(json.dumps(pairs, ensure_ascii=False))


if __name__ == "__main__":
    main()
