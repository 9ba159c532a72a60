"""Active entities of a conversation: numbers with units, money, dates, durations, gazetteer places,
products and items, capitalised and quoted spans, and negated items (¬museum).

An entity is a string `kind:value`. Keyed kinds (money, duration units,
counts) hold one value at a time, so a later "raise it to 10k" replaces the
earlier budget; "without museums" removes `item:museum` and adds `¬item:museum`.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

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


def _term(name: str) -> str:
    """A regex for a gazetteer name: ASCII names need letter boundaries (\\b fails next to CJK)."""
    return r"(?<![A-Za-z0-9])%s(?![A-Za-z0-9])" % re.escape(name) if name.isascii() else re.escape(name)
_STOP_CAPS = {"I", "The", "A", "An", "And", "But", "Or", "Please", "Can", "Could", "What", "How", "Is", "Are", "Do",
              "Does", "My", "Your", "We", "You", "It", "This", "That", "Day", "Hi", "Hello", "Thanks", "Yes", "No",
              "Also", "Then", "Now", "Make", "Plan", "Add", "Remove", "Change", "Keep", "Use", "Write", "Tell"}


_BARE_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
_WORD_COUNTS = {"twice": "2", "once": "1", "thrice": "3", "两次": "2", "一次": "1"}


@lru_cache(maxsize=1)
def contrasts() -> list[tuple[re.Pattern, str, str]]:
    """Contrast axes (tone, transport, operation, ...): two requests naming different values of one
    axis ask for different things, however close their wording."""
    data = json.loads((Path(__file__).parent / "data" / "contrasts.json").read_text())
    entries = []
    for axis, values in data.items():
        for value, names in values.items():
            for name in names:
                entries.append((re.compile(_term(name), re.I), axis, value, len(name)))
    entries.sort(key=lambda e: -e[3])
    return [(p, axis, value) for p, axis, value, _ in entries]


@lru_cache(maxsize=1)
def gazetteer() -> list[tuple[re.Pattern, str]]:
    data = json.loads((Path(__file__).parent / "data" / "gazetteer.json").read_text())
    entries = []
    for kind, items in data.items():
        for canonical, names in items.items():
            for name in names:
                ascii_name = name.isascii()
                pattern = re.compile(_term(name), 0 if ascii_name and name[:1].isupper() and kind != "item" else re.I)
                entries.append((pattern, f"{kind}:{canonical}", len(name)))
    entries.sort(key=lambda e: -e[2])
    return [(p, key) for p, key, _ in entries]


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
    bare = [m.group(0) for m in _BARE_NUMBER.finditer(text)
            if not used[m.start()] and m.group(0) != keyed.get("money")]
    if bare:
        keyed["numbers"] = ",".join(bare)
    axes: dict[str, set[str]] = {}
    for pattern, axis, value in contrasts():
        if pattern.search(text):
            axes.setdefault(axis, set()).add(value)
    for axis, values in axes.items():
        keyed["axis:" + axis] = "+".join(sorted(values))
    named: list[tuple[int, str]] = []           # (position, key): named entities keep their order
    negated: set[str] = set()
    taken = bytearray(len(text))
    for pattern, key in gazetteer():
        for match in pattern.finditer(text):
            if taken.find(1, match.start(), match.end()) >= 0:
                continue
            taken[match.start():match.end()] = b"\x01" * (match.end() - match.start())
            window = text[max(0, match.start() - 14):match.start()]
            clause = re.split(r"[,.;!?，。；！？]|\band\b|\bbut\b|但是|但", window)[-1]
            if _NEGATION.search(clause):
                negated.add(key)
            else:
                named.append((match.start(), key))
    named += [(m.start(), "person:" + m.group(0)) for m in _SURNAME_TITLE.finditer(text)]
    named_sorted = [key for _, key in sorted(named)]
    for match in _QUOTED.finditer(text):
        named_sorted.append("quote:" + match.group(1).strip().lower())
    for match in _CAPITALISED.finditer(text):
        span = match.group(1)
        if span.split()[0] in _STOP_CAPS or taken[match.start()] or _DATE.fullmatch(span):
            continue
        named_sorted.append("name:" + span.lower())
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
    out = [f"{key}={value}" for key, value in sorted(keyed.items())]
    return out + named + sorted("¬" + key for key in negated)


def conflicts(a: list[str], b: list[str]) -> bool:
    """True when two entity lists cannot describe the same request."""
    def split(entities):
        keyed = dict(e.split("=", 1) for e in entities if "=" in e)
        named = [e for e in entities if "=" not in e and not e.startswith("¬")]
        negated = {e[1:] for e in entities if e.startswith("¬")}
        return keyed, named, negated

    ka, na, xa = split(a)
    kb, nb, xb = split(b)
    for key in ka.keys() & kb.keys():
        if key.startswith("axis:"):
            # several values may be named ("translate Chinese into English"); only disjoint choices conflict
            va, vb = set(ka[key].split("+")), set(kb[key].split("+"))
            if not (va <= vb or vb <= va):
                return True
        elif ka[key] != kb[key]:
            return True
    if xa != xb or (xa & set(nb)) or (xb & set(na)):
        return True
    places_a = [e for e in na if e.startswith(("place:", "product:", "person:"))]
    places_b = [e for e in nb if e.startswith(("place:", "product:", "person:"))]
    return places_a != places_b
