"""Who may cross users, and when two answers agree (gateway/cache/promotion.py), as pure logic."""
from dataclasses import dataclass, field

import numpy as np
import pytest

from gateway.cache.promotion import EvidenceJudge, PromotionConfig, facts_agree, unshareable
from gateway.cache.request_params import GenerationParams
from validator import RiskPolicy
from validator.key_facts import KeyFactExtractor


@dataclass
class Req:
    messages: list
    session_id: str | None = "s1"
    derived_session: bool = False
    params: GenerationParams = field(default_factory=GenerationParams)

    @property
    def in_conversation(self):
        return sum(1 for m in self.messages if m["role"] in ("user", "assistant")) > 1


def first(text, system=None):
    return Req(([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}])


def test_only_first_turns_without_personal_data_in_shareable_domains():
    support = RiskPolicy.for_domain("customer_support")
    assert unshareable(first("How do I reset my password?"), support) is None
    assert unshareable(first("How do I reset my password?", system="You are the help desk of Acme."), support) is None
    assert unshareable(first("My email is a.b@example.com, reset my password"), support) == "pii:email"
    assert unshareable(first("Reset it", system="The user is Jane, phone +1 415 555 2671"), support).startswith("pii:")
    convo = Req([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                 {"role": "user", "content": "How do I reset my password?"}])
    assert unshareable(convo, support) == "context"
    assert unshareable(Req(first("x").messages, session_id=None), support) == "no_session"
    assert unshareable(Req(first("x").messages, derived_session=True), support) == "no_session"
    for domain in ("medical_legal", "code_qa", "realtime", "doc_rewrite"):
        assert unshareable(first("How do I reset my password?"), RiskPolicy.for_domain(domain)) == f"policy:{domain}"
    # an answer cut by its own stop strings, sampled hot, seeded or penalised serves no other user
    for body in ({"stop": ["modem"]}, {"temperature": 1.6}, {"seed": 7}, {"presence_penalty": 2}):
        messages = first("How do I reset my modem?").messages
        assert unshareable(Req(messages, params=GenerationParams.from_body(body)), support) == "params"
    assert unshareable(Req(first("x?").messages, params=GenerationParams.from_body({"temperature": 0})),
                       support) is None


def test_medical_legal_never_qualifies_even_when_a_table_allows_it():
    table = RiskPolicy({"default": {"cacheable": True, "allow_direct_hit": True, "accept": 0.9, "candidate": 0.8,
                                    "global_scope": True}, "domains": {}})
    assert not table.policy("medical_legal").global_scope and table.policy("chitchat").global_scope


def test_facts_must_be_equal():
    x = KeyFactExtractor()
    a = x.extract("Refunds take 5 to 7 business days and cost $10.")
    assert facts_agree(a, x.extract("A refund costs $10 and takes 5 to 7 business days."))
    assert not facts_agree(a, x.extract("Refunds take 3 business days and cost $10."))
    assert not facts_agree(a, x.extract("Refunds take 5 to 7 business days and cost $15."))


class UnitEncoder:
    """Pure-logic stand-in: the same text gives the same vector, others a fixed angle apart."""
    def __init__(self, cosine):
        self.cosine = cosine

    def encode(self, texts):
        first = np.array([1.0, 0.0], dtype=np.float32)
        other = np.array([self.cosine, np.sqrt(1 - self.cosine ** 2)], dtype=np.float32)
        return np.stack([first if t == texts[0] else other for t in texts])


@pytest.mark.parametrize("cosine,agree", [(0.95, True), (0.85, False)])
def test_similarity_bound(cosine, agree):
    judge = EvidenceJudge(UnitEncoder(cosine), KeyFactExtractor(), PromotionConfig("auto", 3, 0.9))
    out = judge.agreement("Go to Settings, then Reset.", None, "Open Settings and press Reset.")
    assert out["agree"] is agree and out["facts_equal"]


def test_an_answer_with_personal_data_never_agrees():
    judge = EvidenceJudge(UnitEncoder(1.0), KeyFactExtractor(), PromotionConfig("auto", 3, 0.9))
    out = judge.agreement("Email support.", None, "Email support at jane.doe@example.com.")
    assert out["pii"] == ["email"] and not out["agree"]


def test_config_is_checked():
    with pytest.raises(ValueError):
        PromotionConfig("sometimes")
    with pytest.raises(ValueError):
        PromotionConfig("auto", 0)
