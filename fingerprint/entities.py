"""Active entities of a conversation: numbers with units, money, dates and durations (unit and date
patterns), names (jieba's part-of-speech tags in Chinese, capitalised spans in English, quoted spans), and
the words a negation governs (¬word:museum). No list of known places or products: names are found by form.

An entity is a string `kind:value`. Keyed kinds (money, duration units,
counts) hold one value at a time, so a later "raise it to 10k" replaces the
earlier budget; "without museums" adds `¬word:museum`, which a later mention of museums takes back.
"""
from __future__ import annotations

import re
from functools import lru_cache

from fingerprint.normalize import normalize_text

UNITS = {
    "money:CNY": ["元", "块", "块钱", "人民币", "CNY", "RMB", "yuan"],
    "money:USD": ["USD", "dollars", "dollar", "美元", "美金", "bucks"],
    "money:EUR": ["EUR", "euros", "euro", "欧元"], "money:GBP": ["GBP", "pounds", "英镑"],
    "money:JPY": ["JPY", "yen", "日元"],
    "day": ["days", "day", "天", "日游"], "night": ["nights", "night", "晚", "夜"],
    "week": ["weeks", "week", "周", "星期"], "hour": ["hours", "hour", "小时", "个小时"],
    "minute": ["minutes", "minute", "mins", "分钟"], "month": ["months", "month", "个月"],
    "person": ["people", "persons", "person", "adults", "adult", "guests", "travelers", "人", "个人", "位", "大人"],
    "child": ["kids", "kid", "children", "child", "个孩子", "小孩", "儿童"],
    "room": ["rooms", "room", "间房", "间"], "star": ["stars", "star", "星", "星级"],
    "percent": ["%", "percent", "折"], "km": ["km", "kilometers", "公里"], "kg": ["kg", "公斤"],
    "gb": ["GB"], "inch": ["inch", "inches", "英寸"], "item_count": ["items", "pieces", "件"],
    "year": ["years", "year", "年"], "times": ["times", "次"], "points": ["bullet points", "points", "bullets", "点", "条"],
    "words": ["words", "个字", "字"],
}
_UNIT_ALIASES = sorted(((alias, key) for key, aliases in UNITS.items() for alias in aliases),
                       key=lambda pair: -len(pair[0]))
# numbers are read from the first digit of a run only ((?<!\d)): a match tried from every digit of a long run
# backtracks through the rest of it each time (quadratic); a later start cannot match where the first did not
_NUM_UNIT = re.compile(r"(?<!\d)(\d+(?:\.\d+)?)[\s-]*(%s)(?![a-zA-Z])" % "|".join(re.escape(a) for a, _ in _UNIT_ALIASES),
                       re.I)
_BUDGET = re.compile(r"(?:budget|预算|spend|花费|price|价格|under|以内|不超过)\D{0,12}?(\d{3,})", re.I)
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\d{1,2}月\d{1,2}[日号]|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
                   r"[a-z]*\.?\s+\d{1,2}\b|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
                   r"tomorrow|tonight|today|weekend|yesterday)\b|周[一二三四五六日末]|星期[一二三四五六日天]|明天|后天|今天|"
                   r"今晚|周末|昨天|昨晚",
                   re.I)
_QUOTED = re.compile(r"[\"“「『]([^\"”」』]{2,40})[\"”」』]")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\b")
_NEGATION = re.compile(r"(?:\bwithout\b|\bno\b|\bnot\b|\bdon'?t\b|\bremove\b|\bdrop\b|\bskip\b|\bexclude\b|\bexcept\b|"
                       r"\bminus\b|不要|去掉|去除|删掉|排除|不去|别|不用|不想|除了|没有)", re.I)
_SURNAME_TITLE = re.compile(r"[王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程苏魏吕丁"
                            r"任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦方白邹孟熊秦邱江尹薛段雷侯龙史陶黎贺顾毛郝龚邵钱严武戴莫孔汤]"
                            r"(?:总|经理|先生|女士|老师|医生|律师|教授)")


_STOP_CAPS = {"I", "The", "A", "An", "And", "But", "Or", "Please", "Can", "Could", "What", "How", "Is", "Are", "Do",
              "Does", "My", "Your", "We", "You", "It", "This", "That", "Hi", "Hello", "Thanks", "Yes", "No",
              "Also", "Then", "Now", "Why", "When", "Where", "Which", "Who", "Would", "Should", "Will", "If",
              "Ok", "Okay", "OK", "Hey", "Dear"}
# jieba's part-of-speech tags for names: places, people, organisations, other proper nouns
_ZH_NAME_TAGS = {"ns": "place", "nr": "person", "nrt": "person", "nrfg": "person", "nt": "org", "nz": "name"}
_HAN = re.compile(r"[\u3400-\u9fff]")


_BARE_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
_WORD_COUNTS = {"twice": "2", "once": "1", "thrice": "3", "两次": "2", "一次": "1"}
_CLAUSE = re.compile(r"[,.;!?，。；！？]|\band\b|\bbut\b|但是|但")


def _chinese_names(text: str) -> list[tuple[int, int, str]]:
    """(start, end, key) of the names jieba tags in a text (part of speech, not a list of known names)."""
    from validator.alignment import posseg
    out, position = [], 0
    for piece in posseg().lcut(text):
        start = text.find(piece.word, position)
        if start < 0:
            continue
        position = start + len(piece.word)
        kind = _ZH_NAME_TAGS.get(piece.flag)
        if kind and len(piece.word) > 1 and _HAN.search(piece.word):
            out.append((start, position, f"{kind}:{piece.word}"))
    return out


# a negation before a comparative is a limit ("no more than 150 words", "不超过200元"), read as a value, not an
# item excluded: the comparatives of both languages (a closed class of the grammar)
_LIMIT = {"more", "less", "fewer", "over", "above", "below", "under", "exceed", "exceeding", "longer", "shorter",
          "later", "earlier", "than", "超过", "多于", "少于", "低于", "高于", "超出", "大于", "小于", "晚于", "早于"}


def _negated_words(text: str) -> set[str]:
    """The content words a negation governs, up to the end of its clause ("without museums", "不要博物馆")."""
    from validator.alignment import words
    out = set()
    for clause in _CLAUSE.split(text):
        if not _NEGATION.search(clause):
            continue
        seen_negation = False
        clause_words = words(clause)
        for i, w in enumerate(clause_words):
            if w.negation or _NEGATION.fullmatch(w.text):
                # alignment's words split 不超过 into 不 + 超过, so the comparative is always the next word
                seen_negation = i + 1 == len(clause_words) or clause_words[i + 1].text not in _LIMIT
            elif seen_negation and w.content and not w.number:
                out.add("word:" + w.text)
    return out


def _fmt(value: str) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else f"{number:g}"


def extract(text: str) -> tuple[dict[str, str], list[str], set[str]]:
    """(keyed values, ordered named entities, negated named entities) of one text."""
    keyed, named, negated = _extract(text)
    return dict(keyed), list(named), set(negated)


@lru_cache(maxsize=8192)
def _extract(text: str) -> tuple[tuple, tuple, frozenset]:
    # cached per turn text: a follow-up request re-reads the same earlier turns
    text = normalize_text(text)
    keyed: dict[str, str] = {}
    for match in _NUM_UNIT.finditer(text):
        alias = match.group(2)
        key = next(k for a, k in _UNIT_ALIASES if a.lower() == alias.lower())
        if key.startswith("money:"):
            # the amount is the key fact; the currency only when stated
            keyed["money"] = _fmt(match.group(1))
            keyed["currency"] = key.split(":", 1)[1]
        else:
            keyed[key] = _fmt(match.group(1))
    if "money" not in keyed:
        budget = _BUDGET.search(text)
        if budget:
            keyed["money"] = _fmt(budget.group(1))
    for match in _DATE.finditer(text):
        keyed.setdefault("date", match.group(0).lower())
    for word, count in _WORD_COUNTS.items():
        if re.search(r"\b%s\b" % word if word.isascii() else word, text, re.I):
            keyed.setdefault("times", count)
    # characters already read as something (a number with its unit, a gazetteer name): a mask, not a list of
    # spans, so that each later match is checked in constant time however many came before
    used = bytearray(len(text))
    for m in _NUM_UNIT.finditer(text):
        used[m.start():m.end()] = b"\x01" * (m.end() - m.start())
    # the bare numbers in their order (5/8 is not 8/5), each once (a rewording may name one twice), without one,
    # which is what an article says (一个列表 / "a list"), as alignment reads it
    bare = dict.fromkeys(m.group(0) for m in _BARE_NUMBER.finditer(text)
                         if not used[m.start()] and m.group(0) != keyed.get("money") and m.group(0) != "1")
    if bare:
        keyed["numbers"] = ",".join(bare)
    named: list[tuple[int, str]] = []           # (position, key): named entities keep their order
    taken = bytearray(len(text))
    if _HAN.search(text):
        for start, end, key in _chinese_names(text):
            taken[start:end] = b"\x01" * (end - start)
            named.append((start, key))
    for match in _QUOTED.finditer(text):
        named.append((match.start(), "quote:" + match.group(1).strip().lower()))
    for match in _CAPITALISED.finditer(text):
        span = match.group(1)
        if span.split()[0] in _STOP_CAPS or taken[match.start()] or _DATE.fullmatch(span):
            continue
        named.append((match.start(), "name:" + span.lower()))
    negated = _negated_words(text)
    named_sorted = [key for _, key in sorted(named)]
    return tuple(keyed.items()), tuple(dict.fromkeys(named_sorted)), frozenset(negated)


def active_entities(user_texts: list[str]) -> list[str]:
    """Entities still in force after the user turns, oldest first: later values override earlier ones."""
    keyed: dict[str, str] = {}
    named: list[str] = []
    negated: set[str] = set()
    for text in user_texts:
        k, n, neg = extract(text)
        if "money" in k and "currency" not in k:      # "raise it to 10k" keeps the currency in force
            k = {**k, **({"currency": keyed["currency"]} if "currency" in keyed else {})}
        keyed.update(k)
        for key in neg:
            negated.add(key)
            if key in named:
                named.remove(key)
        for key in n:
            negated.discard(key)
            if key not in named:
                named.append(key)
        if negated:               # "add the museums back": a later plain mention takes a negation back
            from validator.alignment import content_words
            mentioned = {"word:" + w for w in content_words(text)} - set(neg)
            negated -= mentioned
    out = [f"{key}={value}" for key, value in sorted(keyed.items())]
    return out + named + sorted("¬" + key for key in negated)


def conflict(a: list[str], b: list[str]) -> str | None:
    """Why two entity lists cannot describe the same request: `value` (another budget, count or date: the
    same task with a changed constraint), `negation` (an exclusion on one side only, or nothing excluded in
    common, or an item excluded on one side and named on the other) or `names` (names on
    both sides and none in common: another place, person or product, so another task); None when they can."""
    def split(entities):
        keyed = dict(e.split("=", 1) for e in entities if "=" in e)
        named = [e for e in entities if "=" not in e and not e.startswith("¬")]
        negated = {e[1:] for e in entities if e.startswith("¬")}
        return keyed, named, negated

    ka, na, xa = split(a)
    kb, nb, xb = split(b)
    for key in ka.keys() & kb.keys():
        if ka[key] != kb[key]:
            return "value"
    # a negation's reach is read up to the end of its clause, so the same exclusion said in other words
    # ("I don't want spicy food" / "nothing spicy") governs other words around the one both exclude: two
    # sides that exclude something in common are left to the pair judge, which compares the whole turns
    if bool(xa) != bool(xb) or (xa and not xa & xb) or (xa & set(nb)) or (xb & set(na)):
        return "negation"
    # a name on one side only may be a reference ("that city"), which the pair judge reads
    return "names" if na and nb and not set(na) & set(nb) else None


def conflicts(a: list[str], b: list[str]) -> bool:
    """True when two entity lists cannot describe the same request."""
    return conflict(a, b) is not None
