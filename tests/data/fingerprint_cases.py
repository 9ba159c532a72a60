"""Labelled fingerprint cases built from the hand-written seeds in fingerprint_seeds.json.

Per seed (52 conversations, EN + ZH, 7 domains), five multi-turn cases:
the opening alone; opening + answer + a follow-up; opening + answer + a
modification; and two topic switches into other seeds' openings (one in the
same language, one in the other). Seeds carry a split: `calib` seeds may tune
thresholds, `test` seeds are held out. Pairs: (opening, paraphrase) is
positive, (opening, hard negative) negative.
"""
from __future__ import annotations

import json
from pathlib import Path

SEEDS = json.loads((Path(__file__).parent / "fingerprint_seeds.json").read_text())


def _conv(seed: dict) -> list[dict]:
    return [{"role": "user", "content": seed["open"]}, {"role": "assistant", "content": seed["reply"]}]


def cases(split: str | None = None) -> list[dict]:
    out = []
    seeds = [s for s in SEEDS if split is None or s["split"] == split]
    for i, seed in enumerate(seeds):
        base = _conv(seed)
        out.append({"id": seed["id"] + ":open", "lang": seed["lang"], "messages": base[:1],
                    "domain": seed["domain"], "switch": False})
        out.append({"id": seed["id"] + ":follow", "lang": seed["lang"],
                    "messages": base + [{"role": "user", "content": seed["follow"]}],
                    "domain": seed["domain"], "switch": False})
        out.append({"id": seed["id"] + ":modify", "lang": seed["lang"],
                    "messages": base + [{"role": "user", "content": seed["modify"]}],
                    "domain": seed["domain"], "switch": False, "change": True})
        others = [s for s in seeds if s["domain"] != seed["domain"]]
        same_lang = [s for s in others if s["lang"] == seed["lang"]]
        other_lang = [s for s in others if s["lang"] != seed["lang"]]
        for pool, tag in ((same_lang, "switch"), (other_lang, "switch-x")):
            target = pool[(i * 7 + len(tag)) % len(pool)]
            out.append({"id": f"{seed['id']}:{tag}:{target['id']}", "lang": target["lang"],
                        "messages": base + [{"role": "user", "content": target["open"]}],
                        "domain": target["domain"], "switch": True})
    return out


def pairs(split: str | None = None) -> list[dict]:
    out = []
    for seed in SEEDS:
        if split is not None and seed["split"] != split:
            continue
        out.append({"lang": seed["lang"], "a": seed["open"], "b": seed["para"], "label": 1, "kind": "paraphrase"})
        out.append({"lang": seed["lang"], "a": seed["open"], "b": seed["neg"], "label": 0, "kind": seed["neg_kind"]})
    return out
