"""Alignment of two user turns: what is a change (content words, numbers, negations) and what is not
(punctuation, case, width, politeness, filler, inflection, number spelling)."""
import pytest

from validator.alignment import align, content_words, words

NOT_CHANGES = [
    ("Plan a 3-day trip to Kyoto, please.", "could you plan a three day trip to kyoto?"),
    ("What are the best cities in Japan?", "what is the best city in japan"),
    ("Ｈｅｌｌｏ，帮我写个Python脚本", "hello,帮我写个python脚本"),
    ("帮我规划一个3天的杭州行程，预算5000元。", "请帮我规划一下三天的杭州行程，预算五千元，谢谢！"),
    ("给我推荐两款手机", "给我推荐2款手机"),
    ("那明天呢？", "那明天呢"),
]
CHANGES = [
    ("Plan a 3-day trip to Kyoto", "Plan a 4-day trip to Kyoto", "numbers"),
    ("I want museums in the plan", "I don't want museums in the plan", "negation"),
    ("我不想去博物馆", "我想去博物馆", "negation"),
    ("推荐一款拍照好的手机", "推荐一款跑步用的手机", None),
    ("Write SQL to find duplicate emails", "Write SQL to delete duplicate emails", None),
    ("Flights from Paris to Rome", "Flights from Rome to Paris", None),
    ("从北京到上海的高铁", "从上海到北京的高铁", None),
]


@pytest.mark.parametrize("cached,new", NOT_CHANGES)
def test_form_alone_is_not_a_change(cached, new):
    result = align(cached, new)
    assert not result.changed, result


@pytest.mark.parametrize("cached,new,veto", CHANGES)
def test_content_changes_are_found(cached, new, veto):
    result = align(cached, new)
    assert result.changed and result.vetoed == veto, result


def test_word_order_of_the_same_words_is_reported_as_reordered():
    result = align("Flights from Paris to Rome", "Flights from Rome to Paris")
    assert result.reordered and not result.added and not result.removed


def test_changed_spans_name_the_words():
    result = align("Write SQL to find duplicate emails", "Write SQL to delete duplicate emails")
    assert result.removed == ["find"] and result.added == ["delete"]
    assert result.record()["removed"] == ["find"]


def test_content_words_skip_grammar_and_keep_meaning():
    assert content_words("Could you please tell me the price of a Kindle?") == ["tell", "price", "kindle"]
    zh = content_words("麻烦帮我查一下从北京到上海的高铁票")
    assert {"北京", "上海", "高铁"} <= set(zh) and "麻烦" not in zh and "的" not in zh


def test_negations_are_marked_in_both_languages():
    assert any(w.negation for w in words("We can't take any flights"))
    assert any(w.negation for w in words("不要安排博物馆"))
    assert not any(w.negation for w in words("We can take any flights"))


@pytest.mark.parametrize("cached,new", [
    ("a budget around 1.5k", "a budget around 1500"), ("under 2K", "under 2,000"), ("预算1万5", "预算15000"),
    ("预算8千元", "预算八千元"), ("预算2.5万", "预算25000"), ("twenty-five dollars", "25 dollars"),
    ("meet at 5pm", "meet at 5 p.m."), ("ten percent off", "10% off"), ("seventeen people", "17 people"),
])
def test_a_number_spelled_another_way_is_not_a_change(cached, new):
    assert not align(cached, new).changed


@pytest.mark.parametrize("cached,new", [
    ("under 2k", "under 3000"), ("预算1万5", "预算16000"), ("at 5pm", "at 6 pm"), ("10% off", "20% off"),
    ("twenty-five dollars", "35 dollars"),
])
def test_another_number_in_another_spelling_is_still_vetoed(cached, new):
    assert align(cached, new).vetoed == "numbers"
