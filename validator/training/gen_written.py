"""Pairs from hand-written groups: natural rewordings as `same`, minimal edits as `modify`.

    python validator/training/gen_written.py            # prints counts

The groups (corpus/written/*.jsonl, docs/validator.md) were written by seven separate writer sessions in
two rounds, each in a style of its own (English chat, Chinese chat, terse mixed traffic; then English at
work, Chinese consumers, formal Chinese at work, English learners: corpus/WRITER_BRIEF.md; then two more rounds
of four, corpus/SOURCES.md), without sight of the evaluation set or of the project's code. Each group holds a request in its conversation, the answer cached
for it, three rewordings that keep every specific, three minimal edits that change what is asked, an
unrelated request, and sometimes another history in which the same last message means something else.

The other generators' `same` pairs are form edits (punctuation, politeness, typos), which alignment settles
before the model runs; these are the only `same` pairs whose content words differ as people reword them.
"""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "corpus" / "written"


def _turns(history) -> list[dict]:
    if not isinstance(history, list):
        return []
    out = [{"role": m["role"], "content": str(m["content"])} for m in history
           if isinstance(m, dict) and m.get("role") in ("user", "assistant") and str(m.get("content", "")).strip()]
    # alternating user/assistant, ending with an answer: anything else is dropped, not guessed at
    if any(m["role"] != ("user", "assistant")[i % 2] for i, m in enumerate(out)) or len(out) % 2:
        return []
    return out


def _texts(values) -> list[str]:
    return [str(v).strip() for v in (values or []) if isinstance(v, str) and str(v).strip()]


def groups(folder: Path = FOLDER) -> list[dict]:
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if not line.strip():
                continue
            g = json.loads(line)
            if g.get("lang") not in ("en", "zh") or not str(g.get("request", "")).strip():
                continue
            out.append({**g, "group": f"{path.stem}-{n:03d}"})
    return out


def generate(seed: int = 23, folder: Path = FOLDER) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for g in groups(folder):
        history, request, answer = _turns(g.get("history")), str(g["request"]).strip(), str(g.get("answer", "")).strip()
        same, modify, switch = _texts(g.get("same")), _texts(g.get("modify")), _texts(g.get("switch"))
        same = [s for s in same if s != request]
        modify = [m for m in modify if m != request and m not in same]

        def row(cached_last: str, new_last: str, label: str, kind: str, new_history=None) -> None:
            cached = history + [{"role": "user", "content": cached_last}, {"role": "assistant", "content": answer}]
            new = (history if new_history is None else new_history) + [{"role": "user", "content": new_last}]
            rows.append({"cached": cached, "new": new, "label": label, "lang": g["lang"], "kind": kind,
                         "domain": g.get("domain", "other"), "group": g["group"]})

        for s in same:
            row(request, s, "same", "written_rewording")
        # rewordings of each other: the same request reached from another wording
        for a, b in zip(same, same[1:] + same[:1]):
            if a != b:
                row(a, b, "same", "written_rewording_pair")
        for m in modify:
            row(request, m, "modify", "written_edit")
            if same:
                row(rng.choice(same), m, "modify", "written_edit_of_rewording")
        for s in switch[:1]:
            row(request, s, "switch", "written_switch")
        other = _turns(g.get("other_history"))
        if other and other != history:
            row(request, request, "modify", "written_other_context", new_history=other)
    return rows


EVAL_CASE = {"same": ("hit", "paraphrase"), "modify": ("partial", "constraint_change"),
             "switch": ("miss", "topic_switch")}


def eval_cases(rows: list[dict]) -> list[dict]:
    """Pairs as `semcache eval` cases (docs/decision.md): the cached side warmed, the new side probed. Only
    first-hand pairs (a rewording or an edit of the request itself, the other history)."""
    out = []
    for n, r in enumerate(rows):
        if r["kind"] not in ("written_rewording", "written_edit", "written_switch", "written_other_context"):
            continue
        expected, category = EVAL_CASE[r["label"]]
        if r["kind"] == "written_other_context":
            expected, category = "miss", "coreference"
        out.append({"id": f"written-{r['lang']}-{r['group']}-{n:05d}", "lang": r["lang"], "domain": r["domain"],
                    "category": category, "system": "", "seed": r["cached"][:-1], "seed_answer": r["cached"][-1]["content"],
                    "probe": r["new"], "expected": expected})
    return out


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("--eval-out", help="write the held-out groups' pairs as `semcache eval` cases here")
    parser.add_argument("--split", nargs="+", default=["val", "test"], help="the groups written with --eval-out")
    args = parser.parse_args()
    rows = generate()
    print(len(groups()), "groups,", len(rows), "pairs")
    for key in ("label", "lang", "kind"):
        print(key, dict(Counter(r[key] for r in rows)))
    if args.eval_out:
        from build_pairs import split_of
        held = [r for r in rows if split_of("written", r["group"]) in args.split]
        cases = eval_cases(held)
        Path(args.eval_out).write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
        print(f"{len(cases)} cases of the {' and '.join(args.split)} groups written to {args.eval_out}")
