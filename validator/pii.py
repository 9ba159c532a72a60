"""Personal data in a request or an answer, EN and ZH: what keeps an answer from crossing users.

A pattern set, each pattern tested on both languages (tests/unit/test_pii.py): e-mail addresses,
phone numbers (international, North American, mainland mobile 手机号), government ID numbers (身份证号 with
its check digit, US SSN), payment cards (Luhn), order / account / ticket numbers introduced by their
name (订单号 ...), street addresses, dates of birth, and names a user gives for themselves ("my name
is ...", "我叫..."). A match only ever blocks sharing (promotion, mined warm-up); it never changes an
answer, so the patterns lean towards finding too much.

Every quantifier is bounded and the text is scanned in one pass per pattern: any text is safe input.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

MAX_SCAN_CHARS = 200_000          # longer texts are scanned in this many characters from each end

_ID_WORDS_EN = (r"order|account|acct|customer|member(?:ship)?|tracking|invoice|ticket|case|reference|ref|booking|"
                r"confirmation|policy|reservation|card|passport|licen[cs]e|employee|student|patient|serial|"
                r"transaction|shipment|parcel|package|user|client|loyalty|subscription|contract|claim|id")
_ID_WORDS_ZH = (r"订单|账户|账号|帐号|帐户|会员|单号|运单|快递单|物流单|工单|发票|身份证|护照|驾驶证|驾照|卡号|银行卡|"
                r"编号|学号|工号|保单|合同|预订|订票|流水|交易|客户|用户|病历|医保|社保|车牌")

PATTERNS: dict[str, re.Pattern] = {
    "email": re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}"
                        r"(?![\w-])"),
    "phone_cn": re.compile(r"(?<!\d)(?:\+?86[\s-]?)?1[3-9]\d[\s-]?\d{4}[\s-]?\d{4}(?!\d)"),
    "phone": re.compile(r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?|\d{2,4}[\s.-])\d{3,4}[\s.-]\d{3,4}"
                        r"(?![\w-])"),
    "national_id_cn": re.compile(r"(?<![\dA-Za-z])\d{17}[\dXx](?![\dA-Za-z])"),
    "ssn": re.compile(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)"),
    "card": re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)"),
    "id_number_en": re.compile(
        rf"\b(?:{_ID_WORDS_EN})(?:[ -]?(?:number|no\.?|num|nr|#|id|code))?[ \t]{{0,3}}(?:is|was|=)?[ \t:#]{{0,3}}"
        r"(?=[A-Za-z0-9-]{0,29}\d)[A-Za-z0-9][A-Za-z0-9-]{3,29}\b", re.I),
    "id_number_zh": re.compile(
        rf"(?:{_ID_WORDS_ZH})(?:号码|号|码|编号|ID)?[\s:：#是为]{{0,4}}(?=[A-Za-z0-9-]{{0,29}}\d)[A-Za-z0-9][A-Za-z0-9-]{{3,29}}"),
    "address_en": re.compile(
        r"\b\d{1,6}[ \t]+(?:[A-Z][A-Za-z'.-]{0,20}[ \t]+){1,4}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|"
        r"Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Parkway|Pkwy|Highway|Hwy|Square|Sq)\b\.?"),
    "address_zh": re.compile(r"[\u4e00-\u9fff]{1,12}(?:路|街|大道|巷|弄|胡同)[\s]{0,2}\d{1,5}[\s]{0,2}(?:号|弄)"
                             r"|\d{1,4}(?:栋|幢|号楼)[\s]{0,2}\d{1,5}(?:室|号)"
                             r"|[\u4e00-\u9fff]{2,10}(?:小区|公寓|花园|大厦)[\s]{0,2}\d{1,4}(?:栋|幢|号楼|单元|号)"),
    "birth_date": re.compile(r"\b(?:date of birth|DOB|born on|birthday is)\b[\s:]{0,3}[A-Za-z0-9,./ -]{4,20}"
                             r"|(?:出生日期|出生于|生日是)[\s:：]{0,3}\d{2,4}", re.I),
    "name_en": re.compile(r"\b(?:[Mm]y (?:full )?name is|[Mm]y name's|[Cc]all me|I am|I'm|[Nn]ame:)"
                          r"[ \t]{1,3}(?!(?:a|an|the|not|so|very|just|trying|looking|having|going|getting|using|"
                          r"new|here|sure|sorry|unable|able|interested|wondering|curious|confused)\b)"
                          r"(?P<name>[A-Z][a-z]{1,20})(?:[ \t][A-Z][a-z]{1,20}){0,2}\b"),
    "name_zh": re.compile(r"(?:我叫|我的名字(?:是|叫)|本人(?:姓名|名叫|叫)|姓名[:：\s]{0,2}|我姓)[\u4e00-\u9fff]{1,4}"),
}
_NAME_EN_NOT = re.compile(r"^(?:English|Chinese|American|British|Canadian|French|German|Japanese|Korean|Indian|"
                          r"Spanish|Italian|Russian|Australian|Mexican|Brazilian|Happy|Sad|Fine|Good|Ok|Okay|Done|"
                          r"Ready|Back|Still|Also|Now|Here|Sorry|Unable|Able|Glad|Not|New)$")


@dataclass(frozen=True)
class PiiFinding:
    kind: str
    text: str


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _cn_id_valid(value: str) -> bool:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    check = "10X98765432"[sum(int(c) * w for c, w in zip(value[:17], weights)) % 11]
    return value[17].upper() == check


def _keep(kind: str, match: re.Match) -> bool:
    text = match.group(0)
    if kind == "card":
        digits = re.sub(r"\D", "", text)
        return 13 <= len(digits) <= 19 and _luhn(digits)
    if kind == "national_id_cn":
        return _cn_id_valid(text)
    if kind == "phone":
        return sum(c.isdigit() for c in text) >= 9
    if kind == "name_en":
        return not _NAME_EN_NOT.match(match.group("name"))
    return True


def find_pii(text: str) -> list[PiiFinding]:
    """Every personal detail found, in the order of the patterns."""
    if not isinstance(text, str) or not text:
        return []
    if len(text) > 2 * MAX_SCAN_CHARS:
        text = text[:MAX_SCAN_CHARS] + "\n" + text[-MAX_SCAN_CHARS:]
    found = []
    for kind, pattern in PATTERNS.items():
        for match in pattern.finditer(text):
            if _keep(kind, match):
                found.append(PiiFinding(kind, match.group(0).strip()))
    return found


def has_pii(*texts: str) -> bool:
    return any(find_pii(t) for t in texts)


def pii_kinds(*texts: str) -> list[str]:
    return sorted({f.kind for t in texts for f in find_pii(t)})
