"""Text normalisation for fingerprints: half-width, numbers and units, volatile system-prompt parts.

Only what changes the cache key without changing meaning is normalised:
full-width forms, Chinese numerals, "8k" / "$8,000" / "eight thousand" written
as plain numbers, and, in system prompts, timestamps, dates, ids and names.
User text is otherwise left as written.
"""
from __future__ import annotations

import re

from validator.key_facts import nfkc

CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
             "九": 9}
CN_UNITS = {"十": 10, "百": 100, "千": 1000}
CN_BIG = {"万": 10_000, "亿": 100_000_000}
EN_NUMBERS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
              "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
              "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
              "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
EN_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}

_CN_NUM = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")
_EN_WORD = r"(?:%s|%s)" % ("|".join(EN_NUMBERS), "|".join(EN_SCALES))
_EN_NUM = re.compile(r"\b%s(?:(?:\s+and\s+|[\s-]+)%s)*\b(?!-)" % (_EN_WORD, _EN_WORD), re.I)
# a lone number word becomes digits only before a unit ("three nights"), not in "no one" or "one-way"
_EN_UNITS = re.compile(r"\s+(?:people|persons?|adults?|kids?|children|guests?|days?|nights?|weeks?|months?|"
                       r"years?|hours?|minutes?|dollars?|euros?|pounds?|yuan|rmb|items?|rooms?|tickets?|stars?|"
                       r"times|beds?|bags?|pieces?|seats?|points?|bullets?|bullet points|words?|sentences?|"
                       r"paragraphs?|lines?|steps?|ways?|examples?|tips?|ideas?|options?|commits?|cats?|dogs?)\b",
                       re.I)
_K_SUFFIX = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([kKwW]|万)(?![a-zA-Z])")
_CN_UNIT_AFTER = re.compile(r"(?:天|晚|夜|人|位|个|年|次|点|条|周|星期|小时|分钟|间|星|万|千|百|元|块|岁|公里|件|份|张|倍|层|"
                            r"杯|号|日|月)")
_ZH_PERCENT = re.compile(r"百分之(\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百]+)")      # 百分之七十九 is 79%
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_CURRENCY = re.compile(r"([$€£¥￥])\s*(\d[\d.]*)")
_CURRENCY_NAMES = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "CNY", "￥": "CNY"}

# volatile parts of system prompts
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_ISO_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b")
_DATE = re.compile(r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b|\b\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}\b|"
                   r"\d{4}年\d{1,2}月\d{1,2}[日号]|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s+\d{1,2}\s+\w+\s+\d{4}\b|"
                   r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2},?\s+\d{4}\b", re.I)
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:am|pm|AM|PM)?\b")
# an id: 12+ id characters with a digit, or 6+ digits. The digit is checked on the match (_mask_id), not in a
# lookahead: a lookahead re-scans the rest of a long run from every word boundary in it (quadratic)
_LONG_ID = re.compile(r"\b[A-Za-z0-9_-]{12,}\b|\b\d{6,}\b")
_ASCII_DIGIT = re.compile(r"[0-9]")
MAX_NUMBER = 10**18               # a spelled-out number beyond this ("hundred hundred ...") is left as written
_NAMED = re.compile(r"((?:user(?:name)?|name|customer|用户(?:名)?|姓名|客户)\s*[:：=]\s*)([^\n,，;；]+)", re.I)


def to_halfwidth(text: str) -> str:
    out = []
    for ch in text:
        code = ord(ch)
        if code == 0x3000:
            out.append(" ")
        elif 0xFF01 <= code <= 0xFF5E:
            out.append(chr(code - 0xFEE0))
        else:
            out.append(ch)
    return nfkc("".join(out))


def chinese_number(text: str) -> int | None:
    """一万二 -> 12000, 八千 -> 8000, 三百五十 -> 350, 十二 -> 12; None if it is not a number."""
    if not text or any(ch not in CN_DIGITS and ch not in CN_UNITS and ch not in CN_BIG for ch in text):
        return None
    total, section, digit, last_unit = 0, 0, None, 1
    for ch in text:
        if ch in CN_DIGITS:
            digit = CN_DIGITS[ch]
        elif ch in CN_UNITS:
            section += (1 if digit is None else digit) * CN_UNITS[ch]
            last_unit, digit = CN_UNITS[ch], None
        else:                                              # 万 / 亿
            section += digit or 0
            total += (section or 1) * CN_BIG[ch]
            section, digit, last_unit = 0, None, CN_BIG[ch]
    if digit is not None:
        # "一万二" is 12000 and "一千二" 1200: a digit right after a unit takes the unit one below it
        follows_unit = len(text) > 1 and (text[-2] in CN_UNITS or text[-2] in CN_BIG)
        section += digit * (last_unit // 10 if follows_unit and last_unit >= 10 else 1)
    return total + section


def english_number(text: str) -> int | None:
    words = [w for w in re.split(r"[\s-]+", text.lower()) if w and w != "and"]
    if not words or not all(w in EN_NUMBERS or w in EN_SCALES for w in words):
        return None
    total, current = 0, 0
    for w in words:
        if w in EN_NUMBERS:
            current += EN_NUMBERS[w]
        elif w == "hundred":
            current = (current or 1) * 100
        else:
            total += (current or 1) * EN_SCALES[w]
            current = 0
        if current > MAX_NUMBER or total > MAX_NUMBER:
            return None
    return total + current


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def normalize_numbers(text: str) -> str:
    text = _THOUSANDS.sub("", text)
    # "8k", "1.5万" first, so that a 万 after Arabic digits is not read as a Chinese numeral
    text = _K_SUFFIX.sub(lambda m: _fmt(float(m.group(1)) * (1000 if m.group(2) in "kK" else 10_000)), text)

    def cn(match: re.Match) -> str:
        span = match.group(0)
        # a numeral run is a quantity before a unit (三天两晚, 一个人) or when it is a multi-character
        # number (一万二); "一款", "一下" and names such as 千岛湖, 三亚, 九寨沟 stay as written
        has_digit = any(ch in CN_DIGITS for ch in span)
        if not _CN_UNIT_AFTER.match(match.string, match.end()) and (len(span) < 2 or not has_digit):
            return span
        value = chinese_number(span)
        if value is None:
            return span
        # right after digits (10万一年: 100000 + 一年) the number stands apart, not glued into 1000001
        return (" " if match.start() and match.string[match.start() - 1].isdigit() else "") + str(value)

    text = _ZH_PERCENT.sub(lambda m: f"{m.group(1) if m.group(1)[0].isdigit() else chinese_number(m.group(1))}%", text)
    text = _CN_NUM.sub(cn, text)

    def en(match: re.Match) -> str:
        span = match.group(0)
        single = not re.search(r"[\s-]", span)
        if single and not _EN_UNITS.match(match.string, match.end()):
            return span
        value = english_number(span)
        return span if value is None else str(value)

    text = _EN_NUM.sub(en, text)
    text = _CURRENCY.sub(lambda m: f"{m.group(2)} {_CURRENCY_NAMES[m.group(1)]}", text)
    return text


def normalize_text(text: str) -> str:
    """Half-width + numbers; whitespace collapsed. Meaning-preserving."""
    text = normalize_numbers(to_halfwidth(text))
    return re.sub(r"[ \t]+", " ", text).strip()


def _mask_id(match: re.Match) -> str:
    return "<id>" if _ASCII_DIGIT.search(match.group(0)) else match.group(0)


def mask_volatile(system_prompt: str) -> str:
    """Mask what changes per request in a system prompt without changing its instructions."""
    text = to_halfwidth(system_prompt)
    text = _UUID.sub("<id>", text)
    text = _ISO_TIME.sub("<time>", text)
    text = _DATE.sub("<date>", text)
    text = _CLOCK.sub("<time>", text)
    text = _NAMED.sub(lambda m: m.group(1) + "<name>", text)
    text = _LONG_ID.sub(_mask_id, text)
    return re.sub(r"\s+", " ", text).strip()
