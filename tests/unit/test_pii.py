"""The personal-data patterns that keep answers from crossing users, EN and ZH: each kind is found, and the
ordinary questions a help desk hears are not flagged (a false find only costs a promotion)."""
import random
import time

import pytest

from validator.pii import find_pii, has_pii, pii_kinds

FOUND = [
    ("Please send it to maria.lopez+work@mail.example.org today", "email"),
    ("我的邮箱是 zhang_wei88@qq.com", "email"),
    ("You can reach me on +1 (415) 555-2671.", "phone"),
    ("call 020 7946 0958 after six", "phone"),
    ("我的手机号是13812345678，请回电", "phone_cn"),
    ("手机 +86 139-1234-5678", "phone_cn"),
    ("身份证号：11010519491231002X", "national_id_cn"),
    ("SSN 078-05-1120 on file", "ssn"),
    ("card number 4111 1111 1111 1111 was charged twice", "card"),
    ("My order #A7781234 never arrived", "id_number_en"),
    ("tracking number is 1Z999AA10123456784", "id_number_en"),
    ("Account no. 00451239 is locked", "id_number_en"),
    ("我的订单号是 20231105889 还没发货", "id_number_zh"),
    ("运单号SF1234567890查不到", "id_number_zh"),
    ("会员号：VIP0099812", "id_number_zh"),
    ("Ship to 742 Evergreen Terrace please", "address_en"),
    ("I live at 221 Baker Street, London", "address_en"),
    ("地址是北京市朝阳区建国路88号", "address_zh"),
    ("送到幸福小区3栋", "address_zh"),
    ("My date of birth: 12/03/1988", "birth_date"),
    ("我的出生日期：1990年5月", "birth_date"),
    ("Hi, my name is Priya Raman and I need help", "name_en"),
    ("I'm Tomasz, the account owner", "name_en"),
    ("你好，我叫王小明", "name_zh"),
    ("本人姓名李华，申请退款", "name_zh"),
]

CLEAN = [
    "How do I reset my password?", "怎么重置密码？", "What is your refund policy for orders over 30 days?",
    "Can I change the shipping address on an order?", "订单怎么取消？", "会员有什么权益？", "运费怎么算？",
    "What's the difference between the Basic and Pro plans?", "I am trying to log in but it fails",
    "I'm unable to download the invoice", "Is the order of operations left to right?", "Top 10 phones of 2024",
    "How many days does delivery take to Canada?", "I am Canadian, do you ship here?", "Call me when it ships?",
    "My account is locked, what should I do?", "iPhone 15 case compatibility", "一年有365天", "2 + 2 = 4",
    "The meeting is at 10:30 on 2024-05-01", "Version 3.11.4 of Python", "退货需要几天？", "如何修改收货地址？",
]


@pytest.mark.parametrize("text,kind", FOUND)
def test_each_kind_is_found(text, kind):
    assert kind in pii_kinds(text), find_pii(text)


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_questions_are_not_flagged(text):
    assert not has_pii(text), find_pii(text)


def test_check_digits_decide_ids_and_cards():
    assert "national_id_cn" not in pii_kinds("11010519491231002Y")     # wrong check digit
    assert "card" not in pii_kinds("1234 5678 9012 3456")             # fails Luhn
    assert "card" in pii_kinds("5500 0000 0000 0004")


def test_any_text_is_safe_input():
    rng = random.Random(7)
    alphabet = "a1@.-_ #：号路订单 \n\t\x00é中+()"
    for _ in range(200):
        find_pii("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400))))
    assert find_pii(None) == [] and find_pii("") == []
    started = time.perf_counter()
    find_pii("1" * 300_000 + "@" * 100_000 + "订单号" * 50_000)      # long and adversarial: bounded work
    assert time.perf_counter() - started < 30
