"""Pure fingerprint logic: normalisation, entities and their conflicts."""
import pytest

from fingerprint.entities import active_entities, conflicts, extract
from fingerprint.normalize import chinese_number, mask_volatile, normalize_text


@pytest.mark.parametrize("text,expected", [
    ("八千", 8000), ("一万二", 12000), ("一千二", 1200), ("一万零二", 10002), ("三百五", 350), ("十二", 12),
    ("两万五", 25000), ("二十", 20)])
def test_chinese_numerals(text, expected):
    assert chinese_number(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("预算八千元，三天两晚", "预算8000元,3天2晚"), ("budget 8k", "budget 8000"), ("$8,000 budget", "8000 USD budget"),
    ("eight thousand dollars", "8000 dollars"), ("twenty-five people", "25 people"), ("预算1万", "预算10000"),
    ("1.5万元", "15000元"), ("ＡＢＣ１２３，全角", "ABC123,全角"), ("a one-way ticket", "a one-way ticket"),
    ("no one came", "no one came"), ("推荐一款耳机", "推荐一款耳机")])
def test_normalize_text(text, expected):
    assert normalize_text(text) == expected


def test_volatile_system_prompt_parts_are_masked():
    a = mask_volatile("You are a helpful bot. Now: 2026-11-29T16:21:24Z. User: Alice, id 9f1c2a7e-4b3d-4e5f-8a9b-0c1d2e3f4a5b")
    b = mask_volatile("You are a helpful bot. Now: 2027-01-02T08:00:00Z. User: Bob, id 1a2b3c4d-0000-4e5f-8a9b-0c1d2e3f4a5b")
    assert a == b and "<time>" in a and "<name>" in a and "<id>" in a


def test_later_values_override_and_negations_remove():
    entities = active_entities(["Plan a 3-day trip to Hangzhou with a budget of 8000 yuan",
                                "raise the budget to 10k and no museums", "add West Lake"])
    assert "money=10000" in entities and "currency=CNY" in entities and "money=8000" not in entities
    assert "¬word:museum" in entities and "name:west lake" in entities
    assert "¬word:博物馆" in active_entities(["去掉博物馆"])
    assert active_entities(["去掉博物馆", "还是加上博物馆吧"]) == []         # mentioned again: taken back


def test_extract_units_places_negation_and_names():
    keyed, named, negated = extract("预算八千元，三天两晚杭州，不要博物馆，联系王总")
    assert keyed["money"] == "8000" and keyed["day"] == "3" and keyed["night"] == "2"
    assert "place:杭州" in named and negated == {"word:博物馆"}           # jieba's tag, not a list of places
    keyed, named, _ = extract("flights from Paris to Lyon, then the Eurostar")
    assert named.index("name:paris") < named.index("name:lyon") and "name:eurostar" in named
    _, named, _ = extract("我想去成都和重庆玩，找张伟帮忙")
    assert {"place:成都", "place:重庆", "person:张伟"} <= set(named)


@pytest.mark.parametrize("text,negated", [
    ("Rewrite it in no more than 150 words", set()),             # a limit: the value 150 carries it
    ("预算不超过200元，别超过三天", set()),
    ("keep it not longer than two pages", set()),
    ("Plan the trip without museums", {"word:museum"}),         # an item excluded
    ("不要博物馆", {"word:博物馆"}),
])
def test_a_negated_comparative_is_a_limit_not_an_excluded_item(text, negated):
    assert extract(text)[2] == negated


@pytest.mark.parametrize("a,b,conflict", [
    (["money=8000"], ["money=10000"], True),
    (["money=8000", "place:杭州"], ["money=8000", "place:杭州"], False),
    (["name:paris"], ["name:rome"], True),
    (["name:paris", "name:rome"], ["name:rome"], False),          # one more name: the pair judge reads it
    (["name:paris"], [], False),                                  # "that city": a reference, not a conflict
    (["word:museum"], ["¬word:museum"], True),
    (["¬word:museum"], [], True),                                 # an exclusion on one side only
    (["¬word:museum"], ["¬word:shopping"], True),                 # nothing excluded in common
    (["¬word:want", "¬word:spicy", "¬word:food"], ["¬word:spicy"], False),   # one exclusion, two reaches
    (["¬word:museum", "name:paris"], ["¬word:paris"], True),      # excluded on one side, named on the other
    (["numbers=4471"], ["numbers=5523"], True),
    (["money=8000"], [], False),
])
def test_conflicts(a, b, conflict):
    assert conflicts(a, b) is conflict


@pytest.mark.parametrize("a,b", [
    ("放10万一年能拿多少", "十万块投一年，收益大概多少"),                 # not 100000 + 一年 glued into 1000001
    ("电池健康百分之七十九，在哪换", "电池健康79%，在哪换"),
    ("Python怎么把一个列表按每5个一组切分？", "Python中如何将列表每5个元素分成一组？"),     # one is an article
    ("Integer 127==127 true but 128==128 false, why?", "Integer: 127 is equal but 128 is not, why?"),
])
def test_one_quantity_written_another_way_is_no_value_conflict(a, b):
    assert not conflicts(active_entities([a]), active_entities([b]))


def test_bare_numbers_keep_their_order():
    assert conflicts(active_entities(["what about 5/8?"]), active_entities(["what about 8/5?"]))
