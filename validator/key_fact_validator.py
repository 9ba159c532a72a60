"""Hard rules over key facts: a cached answer is rejected when the current request constrains
something the answer contradicts (budget, date, count, included/excluded items), or when a number
in the request contradicts the cached request context."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from validator.key_facts import KeyFactExtractor, message_text


@dataclass(frozen=True)
class Verdict:
    ok: bool
    reason: str = ""


def _answer_text(answer: dict) -> str:
    parts = (answer.get("list_items") or []) + (answer.get("named_items") or []) + [answer.get("text") or ""]
    return " ".join(parts).lower()


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


class KeyFactValidator:
    def __init__(self, extractor: KeyFactExtractor | None = None):
        self.extractor = extractor or KeyFactExtractor()

    def check(self, messages: list[dict], key_facts: dict, today: date | None = None) -> Verdict:
        """key_facts: what `KeyFactExtractor.for_entry` stored ({"answer": ..., "context": ...}),
        or the answer's facts alone."""
        current = next((message_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
        request = self.extractor.extract(current, today)
        answer = key_facts.get("answer", key_facts)
        context = key_facts.get("context")
        if context:
            # an item the cached request already asked for was answered as asked: the answer need not name it
            before = set(context.get("included") or [])
            request = {**request, "included": [i for i in request.get("included") or [] if i not in before]}
        for rule in (self._budget, self._dates, self._counts, self._excluded, self._included):
            verdict = rule(request, answer)
            if not verdict.ok:
                return verdict
        if context is not None:
            verdict = self._context_numbers(request, context)
            if not verdict.ok:
                return verdict
        return Verdict(True)

    @staticmethod
    def _budget(request: dict, answer: dict) -> Verdict:
        ceiling = request.get("budget_max")
        money = answer.get("money") or []
        if ceiling is not None and money and max(money) > ceiling:
            return Verdict(False, f"budget: request ≤ {_fmt(ceiling)}, answer {_fmt(max(money))}")
        return Verdict(True)

    @staticmethod
    def _dates(request: dict, answer: dict) -> Verdict:
        wanted, given = set(request.get("dates") or []), set(answer.get("dates") or [])
        if wanted and given and not wanted & given:
            return Verdict(False, f"date: request {min(wanted)}, answer {min(given)}")
        return Verdict(True)

    @staticmethod
    def _counts(request: dict, answer: dict) -> Verdict:
        for unit, values in (request.get("units") or {}).items():
            theirs = (answer.get("units") or {}).get(unit)
            if theirs and max(values) != max(theirs):
                return Verdict(False, f"count: request {_fmt(max(values))} {unit}, answer {_fmt(max(theirs))} {unit}")
        return Verdict(True)

    @staticmethod
    def _excluded(request: dict, answer: dict) -> Verdict:
        text = _answer_text(answer)
        for item in request.get("excluded") or []:
            if item and item in text:
                return Verdict(False, f"exclude: request excludes {item}, answer includes it")
        return Verdict(True)

    @staticmethod
    def _included(request: dict, answer: dict) -> Verdict:
        text = _answer_text(answer)
        for item in request.get("included") or []:
            head = item.split()[-1] if item.isascii() else item
            if head and head not in text:
                return Verdict(False, f"include: request asks for {item}, answer lacks it")
        return Verdict(True)

    @staticmethod
    def _context_numbers(request: dict, context: dict) -> Verdict:
        if request.get("budget_max") is not None and context.get("budget_max") is not None \
                and request["budget_max"] != context["budget_max"]:
            return Verdict(False, f"number: request budget {_fmt(request['budget_max'])}, "
                                  f"cached context {_fmt(context['budget_max'])}")
        for unit, values in (request.get("units") or {}).items():
            theirs = (context.get("units") or {}).get(unit)
            if theirs and set(values) != set(theirs):
                return Verdict(False, f"number: request {_fmt(max(values))} {unit}, cached context "
                                      f"{_fmt(max(theirs))} {unit}")
        mine, theirs = set(request.get("money") or []), set(context.get("money") or [])
        if mine and theirs and not mine & theirs:
            return Verdict(False, f"number: request {_fmt(max(mine))}, cached context {_fmt(max(theirs))}")
        return Verdict(True)
