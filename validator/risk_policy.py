"""Risk policy per intent domain: whether answers may be cached, served directly, and at what similarity.

The table lives in data/risk_policy.json; `RiskPolicy.load(path)` reads another
one (or SEMCACHE_RISK_POLICY points at it). Anything that means "now" (prices,
weather, stocks, today) is never cacheable, whatever the domain.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DEFAULT_TABLE = Path(__file__).parent / "data" / "risk_policy.json"
# every repetition is bounded ("price of ... now" within 120 characters): each match attempt costs a constant,
# so a long text costs one pass (an unbounded ".*" re-scans the rest of the line from every "price of")
VOLATILE = re.compile(
    r"(?<![A-Za-z])(right now|currently|at the moment|today'?s?|tonight|this morning|latest|live|real[- ]time|"
    r"current (?:price|rate|weather|score|time)|stock price|share price|exchange rate|weather|forecast|"
    r"breaking news|headlines?|traffic|what time is it|price of .{0,120} now)(?![A-Za-z])|"
    r"现在|此刻|目前|今天|今晚|今日|最新|实时|天气|股价|汇率|行情|头条|路况|几点了|现价", re.I)


@dataclass(frozen=True)
class Policy:
    domain: str
    cacheable: bool
    allow_direct_hit: bool
    accept: float
    candidate: float
    key_fact_check: bool
    global_scope: bool = False      # an answer may be promoted across users by evidence (never medical_legal)


def stricter(a: Policy, b: Policy) -> Policy:
    """Both domains' rules at once (a session's entry classified into another domain than the new turn):
    the higher thresholds, direct hits and caching only where both allow them, key facts checked where either
    checks them."""
    if a == b:
        return a
    return Policy(a.domain if a.domain == b.domain else f"{a.domain}+{b.domain}",
                  a.cacheable and b.cacheable, a.allow_direct_hit and b.allow_direct_hit,
                  max(a.accept, b.accept), max(a.candidate, b.candidate), a.key_fact_check or b.key_fact_check,
                  a.global_scope and b.global_scope)


class RiskPolicy:
    def __init__(self, table: dict):
        self.default = table["default"]
        self.domains = table.get("domains", {})

    @classmethod
    def load(cls, path: Path | None = None) -> "RiskPolicy":
        path = Path(path or os.environ.get("SEMCACHE_RISK_POLICY") or DEFAULT_TABLE)
        return cls(json.loads(path.read_text()))

    @classmethod
    def for_domain(cls, domain: str, _table: "RiskPolicy | None" = None) -> Policy:
        """The policy of one domain from the default table (or `_table`)."""
        table = _table or _bundled()
        merged = {**table.default, **table.domains.get(domain, {})}
        return Policy(domain, bool(merged["cacheable"]), bool(merged["allow_direct_hit"]) and merged["cacheable"],
                      float(merged["accept"]), float(merged["candidate"]), bool(merged.get("key_fact_check", True)),
                      bool(merged.get("global_scope", True)) and bool(merged["allow_direct_hit"])
                      and bool(merged["cacheable"]) and domain != "medical_legal")

    def policy(self, domain: str) -> Policy:
        return RiskPolicy.for_domain(domain, self)

    @staticmethod
    def is_volatile(text: str) -> bool:
        """The request asks about something that changes by the minute: never cache it."""
        return bool(VOLATILE.search(text or ""))


@lru_cache(maxsize=1)
def _bundled() -> RiskPolicy:
    return RiskPolicy.load(DEFAULT_TABLE)
