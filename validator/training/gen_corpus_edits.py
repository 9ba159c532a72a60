"""Pairs of minimal edits of REAL user turns (corpus/real_turns.jsonl), EN + ZH, for the change-intent model.

    python validator/training/gen_corpus_edits.py --out /tmp/edits.jsonl --seed 5 [--n 8000]

`generate(seed)` returns about 8,000 records, deterministically (standard library and jieba only):
  same    (~40%): punctuation, politeness added or dropped, case, a typo, full/half-width characters (ZH),
                  two comma-joined clauses reordered, the turn repeated exactly;
  modify  (~40%): a number changed; an entity / noun / verb / adjective (or -ly adverb) swapped for another of the
                  same kind seen in the corpus (ZH: jieba.posseg tags; EN: capitalised mid-sentence words,
                  position patterns and suffixes); a negation inserted or removed; a requirement clause taken
                  from another corpus turn added, or one of the turn's own dropped;
  switch  (~20%): the turn against a different corpus turn of the same language.
About 30% of pairs sit in a conversation: two other corpus turns with one-sentence placeholder answers come
first, identical in cached and new.

Record: {"cached": [user, assistant, ...], "new": [..., user], "label", "lang", "kind", "domain", "source":
"corpus_edits", "group": the real turn's id, "context": number of earlier exchanges}.
"""
from __future__ import annotations

import argparse
import json
import logging
import random
import re
from collections import Counter, defaultdict
from pathlib import Path

import jieba
import jieba.posseg as pseg

jieba.setLogLevel(logging.WARNING)

CORPUS = Path(__file__).resolve().parent / "corpus" / "real_turns.jsonl"
DEFAULT_N = 8000
LABEL_SHARE = {"same": 0.4, "modify": 0.4, "switch": 0.2}
CONTEXT_SHARE = 0.3

# relative weights of the kinds within a label (a kind that is short of candidates gives its share to the others)
KIND_WEIGHTS = {
    "same": {"punct": 1.0, "polite_add": 1.2, "polite_drop": 0.6, "case": 0.7, "typo": 1.2, "width": 0.8,
             "reorder": 0.6, "repeat": 0.4},
    "modify": {"number": 1.0, "entity": 1.0, "noun": 1.0, "verb": 0.8, "adj": 0.6, "adverb": 0.2,
               "negation_add": 0.8, "negation_drop": 0.5, "requirement_add": 1.0, "requirement_drop": 0.6},
}
SYMMETRIC = {"punct", "case", "typo", "width", "reorder", "number", "entity", "noun", "verb", "adj", "adverb"}

ANSWER = {"en": "Here is the answer.", "zh": "好的，以下是回答。"}
CONTEXT_ANSWERS = {"en": ["OK.", "Sure, here it is.", "Done, see above.", "Here is a short answer."],
                   "zh": ["好的。", "好的，已回答。", "明白，以上是回答。", "好的，这是简短的回答。"]}

# ---------------------------------------------------------------- shared helpers

_NUM = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\d])")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_END = ".?!。？！"


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _lower_first(text: str) -> str:
    first = re.match(r"[A-Za-z']+", text)
    if first and (first.group() == "I" or first.group().startswith("I'") or (len(first.group()) > 1 and first.group().isupper())):
        return text
    return text[:1].lower() + text[1:]


def _other_number(token: str, rng: random.Random, seen: list[str]) -> str:
    if "." in token:
        value = float(token)
        options = [value + d for d in (-1, -0.5, 0.5, 1, 2)] + [value * 2]
        options = [o for o in options if o > 0]
        new = f"{rng.choice(options):.{len(token.split('.')[1])}f}"
    else:
        value = int(token)
        options = [value + d for d in (-3, -2, -1, 1, 2, 3, 5, 10) if value + d >= 0] + [value * 2]
        if value >= 4:
            options.append(value // 2)
        if value >= 1000:  # years and large amounts: move by a realistic step
            options = [value + d for d in (-10, -5, -2, -1, 1, 2, 5, 10, 100)]
        same_len = [s for s in seen if len(s) == len(token) and s != token and "." not in s]
        if same_len and rng.random() < 0.3:
            return rng.choice(same_len)
        new = str(rng.choice(options))
        if token.startswith("0") and len(token) > 1:
            new = new.zfill(len(token))
    return new if new != token else str(int(float(token)) + 1)


def _replace_span(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


# ---------------------------------------------------------------- English vocabulary from the corpus

_EN_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+(?:[.:]\d+)*|[^\sA-Za-z\d]")
_DET = {"a", "an", "the", "my", "your", "this", "these", "some", "his", "her", "their", "our", "its"}
_AFTER_NOUN = {"of", "about", "for", "in", "on", "to", "with", "that", "which", "from", "and", "or", "at", "by", ",",
               ".", "?", "!", ";", ":", "is", "are", "was", "were"}
_NOT_VERB = {"what", "how", "why", "when", "where", "who", "which", "whom", "whose", "is", "are", "was", "were", "am",
             "do", "does", "did", "can", "could", "would", "should", "will", "shall", "may", "might", "must", "i",
             "my", "we", "you", "your", "the", "a", "an", "in", "on", "if", "as", "for", "there", "this", "that",
             "these", "those", "it", "hi", "hello", "hey", "please", "now", "also", "so", "and", "but", "given",
             "suppose", "assume", "yes", "no", "ok", "okay", "thanks", "thank", "then", "after", "before", "at",
             "with", "from", "by", "to", "of", "each", "every", "all", "any", "some", "our", "their", "his", "her",
             "one", "two", "three", "let's", "lets", "here", "based", "consider", "using", "like", "not", "just",
             "what's", "how's", "i'm", "i've", "i'd", "i'll", "is", "it's", "isn't", "don't", "does", "during"}
_NOUN_STOP = {"own", "best", "most", "same", "other", "following", "first", "next", "last", "whole", "new", "only",
              "main", "top", "following", "previous", "above", "below", "way", "one", "ones", "end", "use", "more",
              "less", "lot", "kind", "type", "number", "rest", "part", "thing", "things", "time", "fact", "case",
              "text", "answer", "response", "question", "story"}
_ADJ_SUFFIX = re.compile(r"^[a-z]{3,}(ous|ful|ive|able|ible|ical|less|ic)$")
_ADJ_STOP = {"music", "topic", "logic", "traffic", "picnic", "clinic", "republic", "arithmetic", "rhetoric", "archive",
             "table", "vegetable", "cable", "fabric", "relative", "executive", "representative", "objective",
             "alternative", "initiative", "native", "motive", "narrative", "detective", "perspective", "public",
             "comic", "mechanic", "graphic", "panic", "tonic", "magic", "critic", "cubic", "epic", "ethic", "basic"}
_ADV_STOP = {"only", "early", "family", "daily", "reply", "apply", "supply", "italy", "july", "fly", "ugly", "holy",
             "belly", "rely", "assembly", "jelly", "likely", "lonely", "monthly", "weekly", "yearly", "anomaly",
             "butterfly", "ally", "lily", "multiply", "comply", "imply", "deadly", "elderly", "friendly", "lovely",
             "silly", "costly", "hourly", "quarterly", "orderly", "supply", "bully", "curly", "chilly", "jolly",
             "sly", "nearly", "really", "mostly", "actually", "usually", "simply", "probably", "currently",
             "especially", "approximately", "totally", "fully", "highly", "respectively", "directly", "italy"}
_ENT_STOP = {"I", "I'm", "I'd", "I've", "I'll", "OK", "Ok", "Hi", "Hello", "Please", "Thanks", "A", "The"}
_SENT_START = set(".!?:;\n\"'(")


def _en_words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _EN_TOKEN.finditer(text)]


def _en_entities(text: str) -> list[tuple[str, int, int]]:
    """Spans of capitalised words that do not start a sentence (multi-word names kept together)."""
    toks = _en_words(text)
    spans, i = [], 0
    while i < len(toks):
        word, start, end = toks[i]
        prev = text[:start].rstrip()
        if (i > 0 and re.match(r"[A-Z][A-Za-z'\-]*$", word)
                and word not in _ENT_STOP and prev and prev[-1] not in _SENT_START):
            j = i
            while j + 1 < len(toks) and re.match(r"[A-Z][A-Za-z'\-]*$", toks[j + 1][0]) \
                    and toks[j + 1][1] == toks[j][2] + 1:
                j += 1
            spans.append((text[start:toks[j][2]], start, toks[j][2]))
            i = j + 1
            continue
        i += 1
    return spans


def _lead_skip(toks: list[tuple[str, int, int]]) -> int:
    i = 0
    while i < len(toks) and (toks[i][0].lower() in {"please", "now", "also", "then", "so", "hi", "hey", "hello", "ok",
                                                     "okay", "can", "could", "would", "you", "kindly"}
                             or toks[i][0] in {",", "!"}):
        i += 1
    return i


def _en_slots(text: str) -> dict[str, list[tuple[str, int, int]]]:
    """Words of the turn that fill a noun / verb / adjective / adverb slot (heuristic, see module doc)."""
    toks = _en_words(text)
    low = [t[0].lower() for t in toks]
    slots = {"noun": [], "verb": [], "adj": [], "adverb": []}
    lead = _lead_skip(toks)
    if lead < len(toks) - 1 and toks[lead][0].isalpha() and low[lead] not in _NOT_VERB \
            and low[lead + 1] in _DET | {"me", "some", "us", "it", "them", "all", "how", "what", "why", "down", "up",
                                         "out", "two", "three", "five", "ten"}:
        if lead == 0 or low[lead - 1] in {"please", ",", "now", "also", "then", "so", "kindly"}:
            slots["verb"].append(toks[lead])
    for i, (word, start, end) in enumerate(toks):
        lw = low[i]
        if not word.isalpha():
            continue
        nxt = low[i + 1] if i + 1 < len(toks) else "."
        prv = low[i - 1] if i > 0 else ""
        if prv in _DET and word.islower() and len(word) >= 3 and lw not in _NOUN_STOP and nxt in _AFTER_NOUN \
                and not _ADJ_SUFFIX.match(lw) and not lw.endswith(("ly", "ing")):
            slots["noun"].append((word, start, end))
        if prv == "to" and word.islower() and nxt in _DET | {"me", "it", "them", "us", "him", "some"} \
                and lw not in _NOT_VERB and not lw.endswith("ing"):
            slots["verb"].append((word, start, end))
        if word.islower() and len(word) >= 6 and lw.endswith("ing") and prv in {"for", "about", "of", "in", "and", "by"} \
                and lw not in {"something", "anything", "nothing", "everything", "morning", "evening", "during",
                               "building", "meeting", "wedding", "clothing", "thing", "string", "spring", "ceiling",
                               "following", "including", "according", "regarding", "setting", "pudding", "king"}:
            slots["verb"].append((word, start, end))
        if word.islower() and lw not in _ADJ_STOP and i + 1 < len(toks) and toks[i + 1][0].isalpha() \
                and (_ADJ_SUFFIX.match(lw) or prv in {"very", "more", "most", "too", "so", "quite", "really"}) \
                and not lw.endswith("ly"):
            slots["adj"].append((word, start, end))
        if word.islower() and len(word) >= 5 and lw.endswith("ly") and lw not in _ADV_STOP:
            slots["adverb"].append((word, start, end))
    return slots


# ---------------------------------------------------------------- Chinese vocabulary from the corpus

ZH_TAGS = {"entity": ("nr", "ns", "nt", "nz", "nrt"), "noun": ("n",), "verb": ("v",), "adj": ("a",), "numeral": ("m",)}
_ZH_VERB_STOP = {"可以", "需要", "应该", "没有", "不会", "不能", "就是", "还是", "可能", "能够", "觉得", "不是", "进行",
                 "是否", "不要", "知道", "认为", "成为", "不用", "作为", "属于", "出现", "存在", "有没有", "告诉"}
_ZH_CN_NUM = re.compile(r"^[一二两三四五六七八九十百千万几]+[个种条点项天位次家句段篇名本年岁]?$")
_ZH_NEG_INSERT = {"是": "不是", "能": "不能", "可以": "不可以", "会": "不会", "应该": "不应该", "需要": "不需要",
                  "要": "不要", "有": "没有", "能够": "不能够", "想": "不想", "喜欢": "不喜欢", "适合": "不适合",
                  "包括": "不包括", "考虑": "不考虑", "使用": "不使用", "提供": "不提供", "允许": "不允许"}
_ZH_NEG_REMOVE = {"不是": "是", "不能": "能", "不会": "会", "没有": "有", "不要": "要", "不用": "用", "无需": "需要",
                  "不需要": "需要", "不可以": "可以", "不应该": "应该", "不想": "想", "不喜欢": "喜欢", "别": "",
                  "不适合": "适合"}
_ZH_QUESTION = re.compile(r"[？?吗呢]|什么|怎么|为什么|如何|哪|多少|几|是否|是不是|能不能|有没有")
_EN_REQ_SENT = re.compile(r"^\s*(Please\s+)?(Keep|Limit|Use|Make sure|Answer|Respond|Reply|Format|Present|Include|"
                          r"Write (it|your answer|your response)|Do not|Don't|Avoid|Organize|Your (answer|response)|"
                          r"Output|Return|Separate|Be concise|Explain your|Show your|Provide|Start|End)\b")
# mined requirement clauses must be about the form of the answer, not about its content
_EN_REQ_FORM = re.compile(r"\b(words?|sentences?|paragraphs?|bullet|list|table|format|json|markdown|concise|brief|"
                          r"short|simple|tone|formal|casual|language|english|capital|lowercase|commas?|emoji|title|"
                          r"headings?|lines?|rhyme|step[- ]by[- ]step)\b", re.I)
_ZH_REQ_FORM = re.compile(r"(\d+|[一二三四五六七八九十百]+)\s*(个)?字|字以内|字左右|不超过|不少于|少于|表格|分点|简洁|"
                          r"简短|简要|用英文|用中文|英文回答|格式|JSON|json|列表|举例")
_EN_REQ_FRAG = re.compile(r"\b(in|under|within|in less than|in fewer than|in no more than|using no more than|with at most|"
                          r"with at least|in at least|in at most|using at most|using less than|in under)\s+"
                          r"(\d+|one|two|three|four|five|ten)\s+(words|sentences|paragraphs|bullet points|lines|"
                          r"characters|steps|points)\b")
EN_REQ_SEED = ["in under 100 words", "in three bullet points", "in one sentence", "as a table",
               "with two examples", "in simple terms"]
ZH_REQ_SEED = ["用表格列出", "不超过100字", "请分点回答", "用英文回答", "举两个例子", "简要回答"]


class Corpus:
    """The real turns plus the word pools drawn from them."""

    def __init__(self, path: Path = CORPUS):
        self.turns = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
        for i, t in enumerate(self.turns):
            t["id"] = t.get("ref") or f"turn-{i}"
        self.by_lang = {lang: [t for t in self.turns if t["lang"] == lang] for lang in ("en", "zh")}
        self.short = {lang: [t for t in ts if len(t["text"]) <= 200] for lang, ts in self.by_lang.items()}
        self.numbers = {lang: sorted({m.group() for t in ts for m in _NUM.finditer(t["text"])})
                        for lang, ts in self.by_lang.items()}
        # English pools
        self.en_entities: dict[str, list[str]] = defaultdict(list)
        pools: dict[str, Counter] = defaultdict(Counter)
        for t in self.by_lang["en"]:
            for span, _, _ in _en_entities(t["text"]):
                self.en_entities[t["source"]].append(span)
                pools["entity"][span] += 1
            for kind, items in _en_slots(t["text"]).items():
                for word, _, _ in items:
                    pools[kind][word.lower()] += 1
            t["slots"] = None
        self.en_pool = {kind: sorted(c) for kind, c in pools.items()}
        self.en_entities = {src: sorted(set(v)) for src, v in self.en_entities.items()}
        # Chinese pools (jieba.posseg)
        self.zh_pool: dict[str, list[str]] = {}
        self.zh_entity_by_tag: dict[str, list[str]] = {}
        zpools: dict[str, set] = defaultdict(set)
        for t in self.by_lang["zh"]:
            t["toks"] = [(w, f) for w, f in pseg.lcut(t["text"])]
            for w, f in t["toks"]:
                kind = self._zh_kind(w, f)
                if kind:
                    zpools[kind].add(w)
                    if kind == "entity":
                        zpools[f"entity:{f}"].add(w)
        self.zh_pool = {k: sorted(v) for k, v in zpools.items()}
        # requirement clauses
        self.en_req = sorted({*self._en_requirements(), *EN_REQ_SEED})
        self.zh_req = sorted({*self._zh_requirements(), *ZH_REQ_SEED})

    @staticmethod
    def _zh_kind(w: str, f: str) -> str | None:
        if f in ZH_TAGS["entity"] and len(w) >= 2 and _CJK.search(w):
            return "entity"
        if f == "n" and len(w) >= 2 and _CJK.search(w):
            return "noun"
        if f == "v" and len(w) >= 2 and w not in _ZH_VERB_STOP and not w.startswith(("不", "没")):
            return "verb"
        if f == "a" and _CJK.search(w) and not w.startswith("不"):
            return "adj"
        if f == "m" and _ZH_CN_NUM.match(w):
            return "numeral"
        return None

    def _en_requirements(self) -> list[str]:
        out = []
        for t in self.by_lang["en"]:
            sents = re.findall(r"[^.!?]+[.!?]?", t["text"])
            for s in sents[1:]:
                s = s.strip()
                if _EN_REQ_SENT.match(s) and _EN_REQ_FORM.search(s) and 10 <= len(s) <= 80 and "\n" not in s:
                    out.append(s if s[-1] in _END else s + ".")
            out += [m.group() for m in _EN_REQ_FRAG.finditer(t["text"])]
        return out

    def _zh_requirements(self) -> list[str]:
        out = []
        for t in self.by_lang["zh"]:
            clauses = [c.strip() for c in re.split(r"[，。；！？,;!?\n]", t["text"]) if c.strip()]
            out += [c.rstrip(".") for c in clauses[1:] if _ZH_REQ_FORM.search(c) and 3 <= len(c) <= 15]
        return out


# ---------------------------------------------------------------- edits: each returns the edited text or None

def _en_question(text: str) -> bool:
    return text.rstrip().endswith("?") or bool(re.match(
        r"(what|how|why|when|where|who|which|is|are|can|could|would|should|do|does|did|will)\b", text.lower()))


def same_punct(text, lang, rng, c, turn=None):
    s = text.rstrip()
    opts = []
    if lang == "en":
        if s and s[-1] in ".?!":
            opts += [s[:-1], s[:-1] + ("?" if s[-1] != "?" else "??"), s + s[-1]]
        else:
            opts += [s + ("?" if _en_question(s) else "."), s + "!"]
        if ", " in s:
            opts.append(s.replace(", ", " ", 1))
        if s.count(". ") == 1:
            opts.append(s.replace(". ", "; ", 1))
    else:
        if s and s[-1] in "。？！?.!":
            opts += [s[:-1], s[:-1] + ("？？" if s[-1] in "？?" else "！")]
            if s[-1] == "。" and _ZH_QUESTION.search(s):
                opts.append(s[:-1] + "？")
        else:
            opts.append(s + ("？" if _ZH_QUESTION.search(s) else "。"))
        if "，" in s:
            opts.append(s.replace("，", " ", 1))
            opts.append(s.replace("，", "", 1))
        if "、" in s:
            opts.append(s.replace("、", "，", 1))
    opts = [o for o in opts if o and o != text]
    return rng.choice(opts) if opts else None


def same_polite_add(text, lang, rng, c, turn=None):
    s = text.strip()
    if lang == "en":
        if re.match(r"(please|could you|can you|would you|hi|hello|hey)\b", s.lower()):
            return rng.choice([s + " Thanks!", s + " Thank you."]) if not re.search(r"thank", s.lower()) else None
        toks = _en_words(s)
        imperative = bool(toks) and toks[0][0].lower() in set(c.en_pool.get("verb", []))
        opts = [s + " Thanks!", s + " Thank you.", "Hi, " + _lower_first(s), "Hey! " + s]
        if imperative:
            body = _lower_first(s)
            opts += ["Please " + body, "Please " + body, "Could you " + body.rstrip(".!") + "?",
                     "Can you please " + body.rstrip(".!") + "?", s.rstrip(".!") + ", please."]
        return rng.choice(opts)
    if re.match(r"(请|麻烦|您好|你好)", s) or "谢谢" in s:
        return None
    question = bool(_ZH_QUESTION.search(s))
    thanks = s + "谢谢！" if s[-1] in "？?" else s.rstrip("。！!") + "，谢谢！"
    opts = ["你好，" + s, thanks, "您好，" + s]
    opts += ["请问" + s, "请问" + s] if question else ["请" + s, "请" + s, "麻烦" + s, "麻烦你" + s]
    return rng.choice(opts)


def same_polite_drop(text, lang, rng, c, turn=None):
    s = text.strip()
    if lang == "en":
        new = re.sub(r"^(hi|hello|hey)[,!.]?\s+", "", s, flags=re.I)
        m = re.match(r"^(please|kindly)\s+(\w)", new, flags=re.I)
        if m:
            new = _cap(new[m.start(2):])
        m = re.match(r"^(could|can|would) you( please)?\s+(\w.*?)\??$", new, flags=re.I)
        if m and m.group(3).split()[0].lower() in set(c.en_pool.get("verb", [])):
            new = _cap(m.group(3)) + "."
        new = re.sub(r",?\s*please([.?!])$", r"\1", new, flags=re.I)
        new = re.sub(r"\s*(thanks( a lot)?|thank you( very much)?)[.!]*$", "", new, flags=re.I).strip()
        return _cap(new) if new and new != s else None
    new = re.sub(r"^(你好|您好)[，,！!。]?", "", s)
    new = re.sub(r"^(请问|麻烦你|麻烦您|麻烦|请)", "", new)
    new = re.sub(r"[，,]?谢谢(你|您)?[。！!]*$", "", new)
    return new if new and new != s and len(new) >= 4 else None


def same_case(text, lang, rng, c, turn=None):
    if not re.search(r"[A-Za-z]", text):
        return None
    opts = [text.lower()]
    if lang == "en":
        opts += [_lower_first(text), text.lower()]
        if len(text) < 120:
            opts.append(text.upper())
    else:
        opts.append(text.upper())
    opts = [o for o in opts if o != text]
    return rng.choice(opts) if opts else None


def same_typo(text, lang, rng, c, turn=None):
    if lang != "en":
        return None
    words = [(w, s, e) for w, s, e in _en_words(text) if w.isalpha() and len(w) >= 5]
    if not words:
        return None
    new = text
    for w, s, e in sorted(rng.sample(words, 2 if len(words) > 12 and rng.random() < 0.3 else 1),
                          key=lambda x: -x[1]):
        i = rng.randrange(1, len(w) - 2)
        op = rng.choice(["swap", "drop", "double"])
        if op == "swap" and w[i] != w[i + 1]:
            typo = w[:i] + w[i + 1] + w[i] + w[i + 2:]
        elif op == "drop":
            typo = w[:i] + w[i + 1:]
        else:
            typo = w[:i] + w[i] + w[i:]
        new = _replace_span(new, s, e, typo)
    return new if new != text else None


_FULL = {",": "，", "?": "？", "!": "！", ":": "：", ";": "；", "(": "（", ")": "）"}


def same_width(text, lang, rng, c, turn=None):
    if lang != "zh":
        return None
    opts = []
    if any(ch in text for ch in _FULL.values()):
        half = text.translate({ord(v): k for k, v in _FULL.items()})
        opts.append(half)
    if any(ch in text for ch in _FULL):
        opts.append(text.translate({ord(k): v for k, v in _FULL.items()}))
    if re.search(r"[0-9A-Za-z]", text):
        opts.append(re.sub(r"[0-9A-Za-z]", lambda m: chr(ord(m.group()) + 0xFEE0), text))
    if re.search(r"[０-９Ａ-Ｚａ-ｚ]", text):
        opts.append(re.sub(r"[０-９Ａ-Ｚａ-ｚ]", lambda m: chr(ord(m.group()) - 0xFEE0), text))
    if "“" in text and "”" in text:
        opts.append(text.replace("“", '"').replace("”", '"'))
    opts = [o for o in opts if o != text]
    return rng.choice(opts) if opts else None


def same_reorder(text, lang, rng, c, turn=None):
    s = text.strip()
    if lang == "en":
        if re.search(r"[.?!]\s", s) or "\n" in s:
            return None
        m = re.match(r"^(If|When|Before|After|While|Although|Because|Since|Once|Given that)\s+([^,?]+),\s*([^,]+?)([.?!]?)$", s)
        if m and len(m.group(3).split()) >= 3:
            return f"{_cap(m.group(3))} {m.group(1).lower()} {m.group(2)}{m.group(4) or '.'}"
        parts = s.split(", ")
        if len(parts) == 2 and parts[1].endswith("?") and not parts[0].endswith("?") \
                and not re.match(r"(what|how|why|who|which|where|when)\b", parts[0].lower()) \
                and re.match(r"(what|how|why|who|which|where|when|can|could|should|would|is|are|do|does)\b", parts[1].lower()) \
                and len(parts[0].split()) >= 3:
            return f"{_cap(parts[1])} {_cap(parts[0])}."
        return None
    parts = s.split("，")
    if len(parts) != 2 or not parts[0] or not parts[1] or re.match(r"(你好|您好|请问|请)$", parts[0]):
        return None
    head, tail = parts
    if _ZH_QUESTION.search(tail) and not _ZH_QUESTION.search(head) and not re.match(r"(如果|因为|所以|但|而|那|还是|或|并|也|又|就|因此|然后|否则)", tail):
        if not tail.endswith(("？", "?")):
            tail += "？"
        return tail + head.rstrip("。") + "。"
    m = re.match(r"^(如果|假如|要是)(.+)", head)
    if m and tail.rstrip("。？?") and not tail.startswith(("那", "就")):
        end = tail[-1] if tail[-1] in "。？?" else "。"
        return tail.rstrip("。？?") + "，" + head + "的话" + end
    return None


def same_repeat(text, lang, rng, c, turn=None):
    return text


def _swap(text, spans, pool, rng, exclude_in_text=True):
    rng.shuffle(spans)
    for word, start, end in spans:
        cands = [p for p in pool if p.lower() != word.lower() and not (exclude_in_text and p.lower() in text.lower())]
        if cands:
            new = rng.choice(cands)
            if word[:1].isupper() and not new[:1].isupper():
                new = _cap(new)
            return _replace_span(text, start, end, new)
    return None


def mod_number(text, lang, rng, c, turn=None):
    nums = list(_NUM.finditer(text))
    if nums:
        m = rng.choice(nums)
        present = {x.group() for x in nums}
        for _ in range(5):  # not a number the turn already has ("100-200" must not become "100-100")
            new = _other_number(m.group(), rng, c.numbers[lang])
            if new not in present:
                return _replace_span(text, m.start(), m.end(), new)
        return None
    if lang == "zh":
        return _zh_swap(text, rng, c, "numeral", turn)
    words = {"one": "two", "two": "three", "three": "five", "four": "six", "five": "three", "six": "four",
             "ten": "twenty", "twice": "three times", "single": "double", "first": "second", "second": "third",
             "third": "first", "once": "twice", "half": "a third"}
    hits = [m for m in re.finditer(r"\b(" + "|".join(words) + r")\b", text, flags=re.I)]
    if not hits:
        return None
    m = rng.choice(hits)
    new = words[m.group().lower()]
    return _replace_span(text, m.start(), m.end(), _cap(new) if m.group()[0].isupper() else new)


class _Tok(tuple):
    word = property(lambda self: self[0])
    flag = property(lambda self: self[1])


def _zh_toks(text: str, turn: dict | None = None) -> list[_Tok]:
    toks = turn["toks"] if turn and turn.get("toks") and turn["text"] == text else pseg.lcut(text)
    return [_Tok((w, f)) for w, f in toks]


def _zh_swap(text, rng, c, kind, turn=None):
    toks = _zh_toks(text, turn)
    idx = [i for i, (w, f) in enumerate(toks) if Corpus._zh_kind(w, f) == kind]
    rng.shuffle(idx)
    for i in idx:
        w, f = toks[i]
        pool = c.zh_pool.get(f"entity:{f}", []) if kind == "entity" else c.zh_pool.get(kind, [])
        if kind == "entity" and len(pool) < 10:
            pool = c.zh_pool.get("entity", [])
        cands = [p for p in pool if p != w and p not in text and (kind != "numeral" or p[-1:] == w[-1:] or len(w) == 1)]
        if kind in ("noun", "verb"):  # keep the length so the sentence still reads naturally
            same_len = [p for p in cands if len(p) == len(w)]
            cands = same_len or cands
        if cands:
            return "".join(rng.choice(cands) if j == i else t for j, (t, _) in enumerate(toks))
    return None


def _mod_slot(kind):
    def edit(text, lang, rng, c, turn=None):
        if lang == "zh":
            return _zh_swap(text, rng, c, kind, turn) if kind != "adverb" else None
        if kind == "entity":
            spans = _en_entities(text)
            src = turn["source"] if turn else None
            pool = c.en_entities.get(src, []) if src else []
            if len(pool) < 10:
                pool = c.en_pool.get("entity", [])
            # keep the shape: one word for one word, several for several
            n = lambda s: len(s.split())  # noqa: E731
            for span in spans:
                shaped = [p for p in pool if n(p) == n(span[0])]
                if len(shaped) >= 5:
                    out = _swap(text, [span], shaped, rng)
                    if out:
                        return out
            return _swap(text, spans, pool, rng) if spans else None
        spans = _en_slots(text)[kind]
        if not spans:
            return None
        pool = c.en_pool.get(kind, [])
        if kind == "verb":  # -ing for -ing, base form for base form
            out = []
            for span in spans:
                ing = span[0].lower().endswith("ing")
                out.append((span, [p for p in pool if p.endswith("ing") == ing]))
            rng.shuffle(out)
            for span, sub in out:
                res = _swap(text, [span], sub, rng)
                if res:
                    return res
            return None
        return _swap(text, spans, pool, rng)
    return edit


def mod_negation_add(text, lang, rng, c, turn=None):
    if lang == "zh":
        toks = _zh_toks(text, turn)
        opts = []
        for i, (w, f) in enumerate(toks):
            prev = toks[i - 1].word if i else ""
            nxt = toks[i + 1].word if i + 1 < len(toks) else ""
            if w in _ZH_NEG_INSERT and f.startswith("v") and prev not in {"不", "没", "别", "是否", "不是"} and nxt != "不":
                opts.append(("".join(t.word for t in toks[:i]) + _ZH_NEG_INSERT[w] + "".join(t.word for t in toks[i + 1:])))
            if w == "需要" and f.startswith("v") and prev != "不":
                opts.append("".join(t.word for t in toks[:i]) + "无需" + "".join(t.word for t in toks[i + 1:]))
        m = re.match(r"^(请|麻烦)(.+)", text)
        if m and not m.group(2).startswith(("不", "别", "问")):
            opts.append(m.group(1) + rng.choice(["不要", "别"]) + m.group(2))
        return rng.choice(opts) if opts else None
    opts = []
    rules = [
        (r"\b(I|we|you|they)\s+(want|need|have|like|know|use|plan)\b", lambda m: f"{m.group(1)} don't {m.group(2)}"),
        (r"\b(I'm|I am)\s+(going|trying|looking|planning)\b", lambda m: f"{m.group(1)} not {m.group(2)}"),
        (r"\b(is|are|was|were)\s+(?!not\b|there\b|it\b|this\b|that\b|the\s+\w+\s*\?)([a-z]+)",
         lambda m: f"{m.group(1)} not {m.group(2)}"),
        (r"\b(I|we|they|it|this|that|he|she)\s+(should|must|can|could|will|would)\s+(?!not\b)([a-z]+)",
         lambda m: f"{m.group(1)} {m.group(2)} not {m.group(3)}"),
        (r"(?<!help )(?<!up )(?<!deal )(?<!start )\bwith\s+(?=[a-z])", lambda m: "without "),
        (r"(?<!without )\busing\b", lambda m: "without using"),
        (r"\b(and|,)\s+(use|include|mention|add|explain|show|list)\b", lambda m: f"{m.group(1)} do not {m.group(2)}"),
        (r"\bMake sure to\b", lambda m: "Make sure not to"),
    ]
    for pattern, repl in rules:
        for m in re.finditer(pattern, text):
            new = repl(m)
            if new:
                opts.append(text[:m.start()] + new + text[m.end():])
    return rng.choice(opts) if opts else None


def mod_negation_drop(text, lang, rng, c, turn=None):
    if lang == "zh":
        toks = _zh_toks(text, turn)
        opts = []
        for i, (w, f) in enumerate(toks):
            prev = toks[i - 1].word if i else ""
            nxt = toks[i + 1].word if i + 1 < len(toks) else ""
            head = "".join(t.word for t in toks[:i])
            tail = "".join(t.word for t in toks[i + 1:])
            if w in _ZH_NEG_REMOVE and not (prev and nxt and prev == nxt) and f != "l" and prev != w[1:]:
                if w == "别" and not f.startswith(("d", "v")):
                    continue
                opts.append(head + _ZH_NEG_REMOVE[w] + tail)
            elif w == "不" and nxt and prev != nxt and not nxt.startswith("不"):
                opts.append(head + tail)
        opts = [o for o in opts if len(o) >= 4]
        return rng.choice(opts) if opts else None
    rules = [
        (r"\b(do not|don't)\s+", lambda m, t: ""),
        (r"\b(does not|doesn't)\b", lambda m, t: "does"),
        (r"\b(is not|isn't)\b", lambda m, t: "is"),
        (r"\b(are not|aren't)\b", lambda m, t: "are"),
        (r"\b(cannot|can't|can not)\b", lambda m, t: "can"),
        (r"\b(will not|won't)\b", lambda m, t: "will"),
        (r"\b(should not|shouldn't)\b", lambda m, t: "should"),
        (r"\b(did not|didn't)\b", lambda m, t: "did"),
        (r"(?<!or )\bnot\s+", lambda m, t: ""),
        (r"\bwithout\b", lambda m, t: "with"),
        (r"\bnever\b", lambda m, t: "always"),
        (r"\bno\s+(?=[a-z])(?!more\b|longer\b|one\b|matter\b)", lambda m, t: ""),
    ]
    opts = []
    for pattern, repl in rules:
        for m in re.finditer(pattern, text, flags=re.I):
            new = text[:m.start()] + repl(m, text) + text[m.end():]
            if m.start() == 0 or text[:m.start()].rstrip()[-1:] in ".?!":
                new = new[:m.start()] + _cap(new[m.start():])
            opts.append(new)
    return rng.choice(opts) if opts else None


def mod_requirement_add(text, lang, rng, c, turn=None):
    s = text.strip()
    if lang == "en":
        pool = [r for r in c.en_req if _norm(r) not in _norm(s)]
        if "\n" in s:  # a multi-line turn: only whole sentences, on a line of their own
            return s + "\n" + rng.choice([r for r in pool if r[0].isupper()])
        req = rng.choice(pool)
        if req[0].islower():  # a fragment: before the final punctuation
            return (s[:-1] + " " + req + s[-1]) if s[-1] in ".?!" else s + " " + req + "."
        return (s if s[-1] in ".?!" else s + ".") + " " + req
    pool = [r for r in c.zh_req if r not in s]
    req = rng.choice(pool)
    if "\n" in s:
        return s + "\n" + req + "。"
    if s[-1] in "？?":  # after a question: a sentence of its own
        return s + req + "。"
    if s[-1] in "。！!.":
        return s[:-1] + "，" + req + s[-1]
    return s + "，" + req


def mod_requirement_drop(text, lang, rng, c, turn=None):
    s = text.strip()
    if lang == "en":
        sents = re.findall(r"[^.!?]+[.!?]?", s)
        opts = []
        for i, sent in enumerate(sents):
            if i and _EN_REQ_SENT.match(sent.strip()):
                opts.append("".join(sents[:i] + sents[i + 1:]).strip())
        for m in _EN_REQ_FRAG.finditer(s):
            opts.append((s[:m.start()].rstrip() + s[m.end():]).strip())
        opts = [o for o in opts if len(o) > 10]
        return rng.choice(opts) if opts else None
    if "\n" in s:
        return None
    pieces = re.split(r"([，。；！？,;!?])", s)
    opts = []
    for i in range(2, len(pieces), 2):
        if _ZH_REQ_FORM.search(pieces[i]) and len(pieces[i]) <= 25:
            rest = pieces[:i - 1] + pieces[i + 1:]
            opts.append("".join(rest).strip("，,"))
    opts = [o for o in opts if len(o) >= 5]
    return rng.choice(opts) if opts else None


EDITS = {
    "same": {"punct": same_punct, "polite_add": same_polite_add, "polite_drop": same_polite_drop, "case": same_case,
             "typo": same_typo, "width": same_width, "reorder": same_reorder, "repeat": same_repeat},
    "modify": {"number": mod_number, "entity": _mod_slot("entity"), "noun": _mod_slot("noun"),
               "verb": _mod_slot("verb"), "adj": _mod_slot("adj"), "adverb": _mod_slot("adverb"),
               "negation_add": mod_negation_add, "negation_drop": mod_negation_drop,
               "requirement_add": mod_requirement_add, "requirement_drop": mod_requirement_drop},
}


# ---------------------------------------------------------------- assembling the pairs

_CODE_WORDS = re.compile(r"\b(python|c\+\+|javascript|java|sql|code|function|script|program|regex|css|html|api|bash|"
                         r"algorithm)\b|代码|编程|函数|程序", re.I)
_REWRITE = re.compile(r"^(please\s+)?(rewrite|rephrase|paraphrase|edit|proofread|polish)\b|^(请)?(改写|重写|润色|修改)")


def domain_of(turn: dict) -> str:
    if turn["source"] in ("multiwoz21", "crosswoz"):
        return "travel"
    ref = turn["id"]
    m = re.match(r"(mtbench|mtbench_zh|vicuna)-(\d+)", ref)
    if m and ((m.group(1) != "vicuna" and 121 <= int(m.group(2)) <= 130) or (m.group(1) == "vicuna" and 61 <= int(m.group(2)) <= 67)):
        return "code"
    if _CODE_WORDS.search(turn["text"]):
        return "code"
    if _REWRITE.search(turn["text"].lower()):
        return "rewrite"
    return "other"


def _candidates(c: Corpus, rng: random.Random) -> dict:
    """label -> lang -> kind -> [(turn, original, edited)], at most one per turn and kind."""
    out: dict = {label: {lang: defaultdict(list) for lang in ("en", "zh")} for label in EDITS}
    for turn in c.turns:
        text, lang = turn["text"], turn["lang"]
        for label, kinds in EDITS.items():
            for kind, fn in kinds.items():
                r = random.Random(f"{rng.random()}")  # every (turn, kind) its own stream: stable under edits
                new = fn(text, lang, r, c, turn)
                if new is None or not new.strip():
                    continue
                new = new.strip() if kind != "repeat" else new
                if kind != "repeat" and new == text:
                    continue
                if label == "modify" and _norm(new) == _norm(text):
                    continue
                if kind in ("punct", "case", "width") and _norm(new) != _norm(text) and lang == "en":
                    continue
                out[label][lang][kind].append((turn, text, new))
    return out


def _allocate(target: int, weights: dict[str, float], avail: dict[str, int]) -> dict[str, int]:
    """Split `target` over kinds by weight, never over what a kind has; the rest goes to the others."""
    alloc = {k: 0 for k in weights}
    left, open_ = target, [k for k in weights if avail.get(k, 0) > 0]
    while left > 0 and open_:
        total = sum(weights[k] for k in open_)
        share = {k: max(1, int(left * weights[k] / total)) for k in open_}
        for k in open_:
            take = min(share[k], avail[k] - alloc[k], left)
            alloc[k] += take
            left -= take
        open_ = [k for k in open_ if alloc[k] < avail[k]]
    return alloc


def _conversation(c: Corpus, turn: dict, lang: str, rng: random.Random) -> list[dict]:
    others = [t for t in rng.sample(c.short[lang], 3) if t["id"] != turn["id"]][:2]
    prefix = []
    for other in others:
        prefix += [{"role": "user", "content": other["text"]},
                   {"role": "assistant", "content": rng.choice(CONTEXT_ANSWERS[lang])}]
    return prefix


def generate(seed: int, n: int = DEFAULT_N, corpus_path: Path = CORPUS) -> list[dict]:
    rng = random.Random(seed)
    c = Corpus(corpus_path)
    cands = _candidates(c, rng)
    share = {lang: len(c.by_lang[lang]) / len(c.turns) for lang in ("en", "zh")}
    picked: list[tuple[str, str, str, dict, str, str]] = []  # label, lang, kind, turn, cached text, new text
    for label in ("same", "modify"):
        for lang in ("en", "zh"):
            target = round(n * LABEL_SHARE[label] * share[lang])
            avail = {k: len(v) for k, v in cands[label][lang].items()}
            alloc = _allocate(target, KIND_WEIGHTS[label], avail)
            for kind in KIND_WEIGHTS[label]:
                for turn, orig, new in rng.sample(cands[label][lang][kind], alloc[kind]):
                    if kind in SYMMETRIC and rng.random() < 0.5:
                        orig, new = new, orig
                    picked.append((label, lang, kind, turn, orig, new))
    switch_total = n - len(picked)
    used: set[tuple[str, str]] = set()
    for lang in ("en", "zh"):
        pool = c.by_lang[lang]
        count = round(switch_total * share[lang]) if lang == "en" else switch_total - sum(p[0] == "switch" for p in picked)
        by_source = defaultdict(list)
        for t in pool:
            by_source[t["source"]].append(t)
        for turn in [pool[i % len(pool)] for i in rng.sample(range(len(pool) * 2), count)]:
            # half the partners from the same source (similar style), except in the task-oriented dialogue sets,
            # whose turns differ only in slot values (closer to `modify` than to a new request)
            same_src = turn["source"] not in ("multiwoz21", "crosswoz") and rng.random() < 0.5
            peers = by_source[turn["source"]] if same_src else [t for t in pool if t["source"] != turn["source"]]
            peers = peers or by_source[turn["source"]]        # a corpus of one source
            other = rng.choice(peers)
            while other["id"] == turn["id"] or _norm(other["text"]) == _norm(turn["text"]) \
                    or (turn["id"], other["id"]) in used:
                other = rng.choice(peers)
            used.add((turn["id"], other["id"]))
            picked.append(("switch", lang, "switch", turn, turn["text"], other["text"]))
    return to_records(picked, c, rng, "corpus_edits")


def to_records(picked: list[tuple], c: Corpus, rng: random.Random, source: str) -> list[dict]:
    """(label, lang, kind, turn, cached text, new text) as pair records, a share of them inside a conversation
    of other corpus turns, in shuffled order."""
    records = []
    for label, lang, kind, turn, cached_text, new_text in picked:
        prefix = _conversation(c, turn, lang, rng) if rng.random() < CONTEXT_SHARE else []
        records.append({
            "cached": prefix + [{"role": "user", "content": cached_text},
                                {"role": "assistant", "content": ANSWER[lang]}],
            "new": prefix + [{"role": "user", "content": new_text}],
            "label": label, "lang": lang, "kind": kind, "domain": domain_of(turn), "source": source,
            "group": turn["id"], "context": len(prefix) // 2,
        })
    rng.shuffle(records)
    return records


def run_cli(generate_fn, description: str, seed: int, n: int, fields: tuple[str, ...]) -> None:
    """A generator's command line: --out, --seed, --n, --corpus, --examples; writes and summarises the records."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--n", type=int, default=n)
    parser.add_argument("--corpus", default=str(CORPUS))
    parser.add_argument("--examples", type=int, default=0, help="print this many random records")
    args = parser.parse_args()
    records = generate_fn(args.seed, args.n, Path(args.corpus))
    with open(args.out, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} pairs to {args.out}")
    for field in fields:
        print(field, dict(sorted(Counter(r[field] for r in records).items())))
    for r in random.Random(args.seed).sample(records, min(args.examples, len(records))):
        print(json.dumps({k: r[k] for k in ("label", "lang", "kind", "group")}, ensure_ascii=False))
        print("   cached:", r["cached"][-2]["content"])
        print("   new:   ", r["new"][-1]["content"])


def main() -> None:
    run_cli(generate, __doc__.split("\n")[0], 5, DEFAULT_N, ("label", "lang", "kind", "domain", "context"))

if __name__ == "__main__":
    main()
