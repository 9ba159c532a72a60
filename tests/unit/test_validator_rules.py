"""Key facts, the key-fact validator's hard rules and the risk policy (pure logic, EN + ZH)."""
from datetime import date

import pytest

from validator import KeyFactExtractor, KeyFactValidator, RiskPolicy

TODAY = date(2026, 11, 29)          # a Sunday
extract = KeyFactExtractor().extract


@pytest.mark.parametrize("text,money,budget", [
    ("budget $8,000", [8000], 8000), ("预算八千元以内", [8000], 8000), ("一万二的预算", [], 12000),
    ("under 8k dollars", [8000], 8000), ("预算1.5万元", [15000], 15000), ("¥9499 in total", [9499], None)])
def test_money_and_budget(text, money, budget):
    facts = extract(text, TODAY)
    assert facts["money"] == money and facts["budget_max"] == budget


def test_units_dates_lists_and_items():
    facts = extract("三天两晚，两个人，下周五出发，不要博物馆，加上西湖", TODAY)
    assert facts["units"]["day"] == [3] and facts["units"]["night"] == [2] and facts["units"]["person"] == [2]
    assert facts["dates"] == ["2026-12-04"] and facts["excluded"] == ["博物馆"] and facts["included"] == ["西湖"]
    facts = extract("Plan three days for two people next Friday without museums, add Sintra\n- Day 1: Alfama\n"
                    "- Day 2: Belém", TODAY)
    assert facts["units"]["day"] == [3] and facts["dates"] == ["2026-12-04"] and facts["excluded"] == ["museum"]
    assert facts["list_items"] == ["Day 1: Alfama", "Day 2: Belém"] and "sintra" in facts["included"]
    assert extract("this weekend", TODAY)["dates"] == ["2026-12-05"]
    assert extract("明天", TODAY)["dates"] == ["2026-11-30"]


ANSWER = ("Day 1: the Louvre and a Seine cruise.\n- Hotel: 4500 euros\n- Flights: 4999 euros\n"
          "Total: 9499 euros for 3 days")
ANSWER_ZH = "第一天：西湖和灵隐寺。\n- 酒店：3000元\n- 门票：500元\n总计：7500元，3天"


def facts_for(request: str, answer: str) -> dict:
    return KeyFactExtractor().for_entry([{"role": "user", "content": request}], answer, TODAY)


@pytest.mark.parametrize("cached_request,answer,new_request,reason", [
    # single-number changes
    ("Plan 3 days in Paris, budget 10000 euros", ANSWER, "Plan 3 days in Paris, budget 8000 euros", "budget"),
    ("Plan 3 days in Paris, budget 10000 euros", ANSWER, "Plan 5 days in Paris, budget 10000 euros", "count"),
    ("杭州三天，预算八千元", ANSWER_ZH, "杭州三天，预算五千元", "budget"),
    ("杭州三天，预算八千元", ANSWER_ZH, "杭州五天，预算八千元", "count"),
    # negation flips
    ("Plan 3 days in Paris with museums", ANSWER, "Plan 3 days in Paris without the Louvre", "exclude"),
    ("杭州三天，去灵隐寺", ANSWER_ZH, "杭州三天，不要灵隐寺", "exclude"),
    # an item asked for that the answer lacks
    ("Plan 3 days in Paris", ANSWER, "Plan 3 days in Paris, add Versailles", "include"),
    ("杭州三天", ANSWER_ZH, "杭州三天，加上千岛湖", "include"),
    # a date the answer does not cover
    ("Paris trip on 2026-12-04", ANSWER + " starting 2026-12-04", "Paris trip on 2026-12-11", "date"),
])
def test_hard_pairs_are_rejected(cached_request, answer, new_request, reason):
    verdict = KeyFactValidator().check([{"role": "user", "content": new_request}],
                                       facts_for(cached_request, answer), TODAY)
    assert not verdict.ok and verdict.reason.startswith(reason), verdict


@pytest.mark.parametrize("cached_request,answer,new_request", [
    ("Plan 3 days in Paris, budget 10000 euros", ANSWER, "Could you plan three days in Paris for 10k euros?"),
    ("杭州三天，预算八千元", ANSWER_ZH, "预算8000块，杭州玩3天怎么安排"),
    ("Plan 3 days in Paris", ANSWER, "What would you do in Paris over 3 days?"),
])
def test_paraphrases_pass(cached_request, answer, new_request):
    verdict = KeyFactValidator().check([{"role": "user", "content": new_request}],
                                       facts_for(cached_request, answer), TODAY)
    assert verdict.ok, verdict


def test_budget_reason_names_both_numbers():
    verdict = KeyFactValidator().check([{"role": "user", "content": "budget 8000"}],
                                       {"money": [9499.0]}, TODAY)
    assert verdict.reason == "budget: request ≤ 8000, answer 9499"


def test_risk_policy_table():
    assert RiskPolicy.for_domain("chitchat").accept == pytest.approx(0.80)
    travel = RiskPolicy.for_domain("travel_planning")
    assert travel.accept == pytest.approx(0.88) and travel.key_fact_check and travel.allow_direct_hit
    code = RiskPolicy.for_domain("code_qa")
    assert code.accept >= 0.92 and code.cacheable and not code.allow_direct_hit
    for domain in ("realtime", "medical_legal"):
        policy = RiskPolicy.for_domain(domain)
        assert not policy.cacheable and not policy.allow_direct_hit
    assert RiskPolicy.for_domain("never-heard-of").cacheable


@pytest.mark.parametrize("text,volatile", [
    ("What's the weather in Paris right now?", True), ("AAPL stock price", True), ("今天上海天气怎么样", True),
    ("现在美元汇率多少", True), ("Plan 3 days in Paris", False), ("Python里怎么反转列表", False)])
def test_now_is_never_cacheable(text, volatile):
    assert RiskPolicy.is_volatile(text) is volatile


def test_policy_table_is_configurable(tmp_path):
    table = tmp_path / "policy.json"
    table.write_text('{"default": {"cacheable": true, "allow_direct_hit": true, "accept": 0.95, "candidate": 0.9},'
                     ' "domains": {"chitchat": {"cacheable": false}}}')
    custom = RiskPolicy.load(table)
    assert custom.policy("travel_planning").accept == 0.95 and not custom.policy("chitchat").cacheable
