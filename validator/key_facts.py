"""Key facts of a text: money, numbers with units, dates (relative ones resolved), durations, counts,
list items and named items. Stored with each cache entry when it is written.

The number reading (full-width, 8k, 1.5万, $8,000, 八千, 一万二, 三天两晚) mirrors
fingerprint.normalize on purpose: the validator depends on no other package of
ours, so that it can be reasoned about (and replaced) on its own.
"""
from __future__ import annotations

import math
import re
import unicodedata
from datetime import date, timedelta

CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
EN_SMALL = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
            "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
            "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_EN_COMPOUND = re.compile(r"\b(%s)[-\s](%s)\b" % ("|".join(w for w, v in EN_SMALL.items() if v >= 20),
                                                   "|".join(w for w, v in EN_SMALL.items() if v < 10)), re.I)
# 2k, 1.5K, 1.5万, 8千, and the spoken 1万5 (15,000) and 3千5 (3,500): a digit run with its multiplier
_MULTIPLIED = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([kK]|万|千)(\d(?![\d.]))?(?![a-zA-Z])")
_MULTIPLIERS = {"k": 1000, "K": 1000, "千": 1000, "万": 10000}


def _multiplied(m: re.Match) -> str:
    unit = _MULTIPLIERS[m.group(2)]
    if m.group(3) and m.group(2) in "kK":
        return m.group(0)
    value = float(m.group(1)) * unit + (int(m.group(3)) * unit / 10 if m.group(3) else 0)
    return f"{value:g}" if value < 1e15 else m.group(0)


_SUPERSCRIPTS = re.compile("[\u2070\u00b9\u00b2\u00b3\u2074-\u207e\u207f\u2071]+")
_SUBSCRIPTS = re.compile("[\u2080-\u208e]+")


def nfkc(text: str) -> str:
    """Unicode compatibility folding (NFKC: full-width forms, ligatures), except that a superscript or subscript
    stays apart from what it follows: NFKC reads "2⁴" as "24" and "H₂O" as "H2O", another number; here they
    are "2^4" and "H_2O"."""
    text = _SUPERSCRIPTS.sub(lambda m: "^" + unicodedata.normalize("NFKC", m.group(0)), text)
    text = _SUBSCRIPTS.sub(lambda m: "_" + unicodedata.normalize("NFKC", m.group(0)), text)
    return unicodedata.normalize("NFKC", text)


def fold_number_forms(text: str) -> str:
    """One spelling per number: thousands separators dropped, multipliers applied (2k, 1万5, 8千), and English
    compound number words joined (twenty-five: 25). Key facts and alignment both read numbers through it, so
    a request that only spells a number another way changes neither."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = _MULTIPLIED.sub(_multiplied, text)
    return _EN_COMPOUND.sub(lambda m: str(EN_SMALL[m.group(1).lower()] + EN_SMALL[m.group(2).lower()]), text)
UNIT_WORDS = {
    "day": r"days?|天|日", "night": r"nights?|晚|夜", "person": r"people|persons?|adults?|guests?|个人|人|位",
    "hour": r"hours?|小时", "week": r"weeks?|周|星期", "room": r"rooms?|间", "star": r"stars?|星",
    "item": r"items?|件", "point": r"bullet points?|bullets?|points?|条|点",
}
MONEY_UNITS = r"元|块|人民币|RMB|CNY|yuan|USD|dollars?|美元|EUR|euros?|欧元|GBP|pounds?|英镑"
WEEKDAYS = {"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
            "一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
            "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
# facts are read from this much of a text at most (an answer's head, a request context's most recent part):
# the cost of extraction is bounded however long the answer or the conversation
MAX_FACT_CHARS = 20_000
MONTHS = {m: i + 1 for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                          "nov", "dec"])}
_CN_RUN = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")
_LIST_ITEM = re.compile(r"^[^\S\n]*(?:[-*•·]|\d+[.)、]|[一二三四五六七八九十]+、|第[一二三四五六七八九十\d]+[天步]?[:：])\s*(.+)$", re.M)
_BUDGET = re.compile(r"(?:budget|预算|under|below|within|no more than|at most|max(?:imum)?|不超过|最多|控制在)"
                     r"[^\d]{0,12}(\d+(?:\.\d+)?)|(?<!\d)(\d+(?:\.\d+)?)\s*(?:%s)?\s*(?:以内|以下|之内|的预算)" % MONEY_UNITS, re.I)
_MONEY = re.compile(r"(?:[$€£¥￥]\s*(\d+(?:\.\d+)?))|(?<!\d)(\d+(?:\.\d+)?)\s*(?:%s)(?![A-Za-z])" % MONEY_UNITS, re.I)
_EXCLUDE = re.compile(r"(?:without|no|not|remove|drop|skip|exclude|except|don'?t (?:want|include|go to))\s+"
                      r"(?:the\s+|any\s+)?([A-Za-z][\w' -]{1,30}?)(?=[,.;!?\n]|\s+(?:and|but|please)\b|$)|"
                      r"(?:不要|去掉|去除|删掉|排除|不去|别去|不想去|取消)([\u4e00-\u9fff]{1,8}?)(?=[，。,.;；!！?？和、]|$)",
                      re.I)
_INCLUDE = re.compile(r"(?:add|include|including|plus|also visit|with)\s+(?:a\s+|the\s+|an\s+)?"
                      r"([A-Za-z][\w' -]{1,30}?)(?=[,.;!?\n]|\s+(?:and|but|please)\b|$)|"
                      r"(?:加上|加一天去|加|增加|还要去|包括|包含)([\u4e00-\u9fff]{1,8}?)(?=[，。,.;；!！?？和、]|$)", re.I)
_QUOTED = re.compile(r"[\"“「『]([^\"”」』]{2,40})[\"”」』]")
# Text is untrusted: numbers are read from the first digit of a run only ((?<!\d) above), as a match tried from
# every digit of a long run backtracks through the rest of it each time; no pattern rescans unbounded text.


def chinese_number(text: str) -> int | None:
    total, section, digit, last_unit = 0, 0, None, 1
    for ch in text:
        if ch in CN_DIGITS:
            digit = CN_DIGITS[ch]
        elif ch in ("万", "亿"):
            total += ((section + (digit or 0)) or 1) * CN_UNITS[ch]
            section, digit, last_unit = 0, None, CN_UNITS[ch]
        elif ch in CN_UNITS:
            section += (1 if digit is None else digit) * CN_UNITS[ch]
            digit, last_unit = None, CN_UNITS[ch]
        else:
            return None
    if digit is not None:
        follows_unit = len(text) > 1 and text[-2] in CN_UNITS
        section += digit * (last_unit // 10 if follows_unit and last_unit >= 10 else 1)
    return total + section


_CN_MEASURE = re.compile(r"[元块天晚夜人位个小时周间星点条件岁次分钟年月号日倍层张份杯公里米斤]")


def _cn_quantity(match: re.Match) -> str:
    """A Chinese numeral run becomes digits only when it reads as a quantity: before a measure word,
    or a multi-character number (一万二). Names such as 千岛湖, 三亚, 九寨沟 stay as written."""
    run = match.group(0)
    before_measure = bool(_CN_MEASURE.match(match.string, match.end()))
    has_digit = any(ch in CN_DIGITS for ch in run)
    if not before_measure and (len(run) < 2 or not has_digit):
        return run
    value = chinese_number(run)
    if value is None:
        return run
    # right after digits (10万一年: 100000 + 一年) the number stands apart, not glued into 1000001
    return (" " if match.start() and match.string[match.start() - 1].isdigit() else "") + str(value)


def normalize(text: str) -> str:
    text = fold_number_forms(nfkc(text))
    text = _CN_RUN.sub(_cn_quantity, text)
    return re.sub(r"\b(%s)\b(?=\s+(?:%s))" % ("|".join(EN_SMALL), "|".join(UNIT_WORDS.values())),
                  lambda m: str(EN_SMALL[m.group(1).lower()]), text, flags=re.I)


def _num(value: str) -> float:
    return float(value)


def _nums(values) -> list[float]:
    """The numbers of digit strings, without those too large for a float ("9" * 500 is inf): no quantity
    anyone asked about, and not a number JSON (or the database) can hold."""
    return [n for n in map(_num, values) if math.isfinite(n)]


def _date(year: int, month: int, day: int) -> date | None:
    """A calendar date, or None for what only looks like one (2023-13-01, Feb 30, 13月40日)."""
    try:
        return date(year, month, day)
    except ValueError:
        return None


def resolve_dates(text: str, today: date) -> list[str]:
    """Dates named in a text, relative ones resolved against `today`. Text is untrusted: a match that is no
    calendar date is skipped, never raised."""
    out = []
    for m in re.finditer(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b", text):
        out.append(_date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in re.finditer(r"(\d{1,2})月(\d{1,2})[日号]", text):
        out.append(_date(today.year, int(m.group(1)), int(m.group(2))))
    for m in re.finditer(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})\b", text, re.I):
        out.append(_date(today.year, MONTHS[m.group(1).lower()], int(m.group(2))))
    relative = {"today": 0, "今天": 0, "tomorrow": 1, "明天": 1, "后天": 2, "day after tomorrow": 2}
    for word, days in relative.items():
        if re.search(r"(?<![A-Za-z])%s(?![A-Za-z])" % word, text, re.I):
            out.append(today + timedelta(days=days))
    if re.search(r"weekend|周末", text, re.I):
        out.append(today + timedelta(days=(5 - today.weekday()) % 7))
    for m in re.finditer(r"\b(next|this|on)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|"
                         r"(下|这|本)?(?:周|星期)([一二三四五六日天1-7])", text, re.I):
        target = WEEKDAYS[(m.group(2) or m.group(4)).lower()]
        if m.group(3) == "下":                       # 下周五: Friday of next week
            next_monday = today + timedelta(days=7 - today.weekday())
            out.append(next_monday + timedelta(days=target))
            continue
        ahead = (target - today.weekday()) % 7       # "next Friday": the first Friday after today
        out.append(today + timedelta(days=ahead or 7))
    return sorted({d.isoformat() for d in out if d is not None})


class KeyFactExtractor:
    def extract(self, text: str, today: date | None = None) -> dict:
        today = today or date.today()
        raw = (text or "")[:MAX_FACT_CHARS]
        text = normalize(raw)
        money = _nums(a or b for a, b in _MONEY.findall(text))
        budget = _nums(a or b for a, b in _BUDGET.findall(text))
        units: dict[str, list[float]] = {}
        for unit, pattern in UNIT_WORDS.items():
            for m in re.finditer(r"(?<!\d)(\d+(?:\.\d+)?)[\s-]*(?:%s)(?![A-Za-z])" % pattern, text, re.I):
                for number in _nums([m.group(1)]):
                    units.setdefault(unit, []).append(number)
        items = [m.strip() for m in _LIST_ITEM.findall(raw)]
        named = sorted({q.strip().lower() for q in _QUOTED.findall(raw)} |
                       {m.lower() for m in re.findall(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)", raw)})
        return {
            "text": raw[:4000],
            "money": money, "budget_max": min(budget) if budget else None, "units": units,
            "dates": resolve_dates(text, today), "list_items": items, "named_items": named,
            "excluded": sorted({(a or b).strip().lower().rstrip("s") for a, b in _EXCLUDE.findall(text)}),
            "included": sorted({(a or b).strip().lower().rstrip("s") for a, b in _INCLUDE.findall(text)}),
            "numbers": sorted(set(_nums(re.findall(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])", text)))),
        }

    def for_entry(self, messages: list[dict], answer_text: str, today: date | None = None) -> dict:
        """What is stored with a cache entry: the answer's facts and its request context's facts."""
        users = " \n".join(message_text(m) for m in messages if m.get("role") == "user")[-MAX_FACT_CHARS:]
        return {"answer": self.extract(answer_text, today), "context": self.extract(users, today)}


def message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) else ""
