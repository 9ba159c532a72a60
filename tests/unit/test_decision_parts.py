"""Pure parts of the decision pipeline: conversation signals, response framing, stream reading, usage
estimates, warm-up input, request features and metric rates."""
import json

import pytest

from gateway.cache.decision import CacheRequest, cached_messages, request_hash
from gateway.cache.responses import (StreamCapture, approx_prompt_tokens, approx_tokens, completion_body,
                                     estimate_usage, stream_chunks)
from gateway.cache.signals import is_negative, is_refinement, is_reset
from gateway.cache.warmup import check_entry, conversation_pairs
from gateway.chat import unsupported_feature
from gateway.errors import GatewayError
from gateway.metrics import GatewayMetrics

RESETS = ["start over", "Let's start over.", "ok, start again", "Forget what I said.", "forget everything",
          "ignore all of the above", "reset", "new conversation please", "重新开始", "忘了之前的吧", "从头开始吧",
          "我们重新来", "清空对话"]
NOT_RESETS = ["Reset the router to factory settings", "forget the museum, add a beach day",
              "What does git reset do?", "Can we start over with a 5 day plan for Osaka and a budget of 3000 "
              "dollars for the whole family next summer?", "重新开始计算预算的话是多少？这个问题要详细回答，包含每天的花费和交通"]
NEGATIVES = ["that's wrong", "No, that's not what I asked", "wrong", "Nope", "No, I meant Tuesday",
             "you misunderstood me", "不对，我不是这个意思", "错了", "答非所问", "你理解错了吧"]
NOT_NEGATIVES = ["Is that right?", "对不对？", "这样对不对", "What's wrong with my code?", "Is this the wrong way to cook rice?",
                 "不对称加密是什么"]


@pytest.mark.parametrize("text", RESETS)
def test_reset_phrases(text):
    assert is_reset(text)


@pytest.mark.parametrize("text", NOT_RESETS)
def test_not_resets(text):
    assert not is_reset(text)


@pytest.mark.parametrize("text", NEGATIVES)
def test_negative_phrases(text):
    assert is_negative(text)


@pytest.mark.parametrize("text", NOT_NEGATIVES)
def test_not_negatives(text):
    assert not is_negative(text)


@pytest.mark.parametrize("text", ["more perplexity", "continue", "Go on", "make it shorter", "Now make it more formal",
                                  "again", "rewrite it", "继续", "再详细点", "更简洁一些", "换一种说法"])
def test_refinements_of_the_last_answer(text):
    assert is_refinement(text)


@pytest.mark.parametrize("text", ["What is more important, speed or accuracy?", "Morning routine ideas?",
                                  "Continuing education courses near me?", "换个话题，Python怎么读文件？",
                                  "更新系统后电脑很卡怎么办？这个问题持续好几天了，重启也没有用，求帮忙看看原因"])
def test_not_refinements(text):
    assert not is_refinement(text)


def test_hit_stream_frames_like_an_openai_stream():
    text = "Day 1: Gion. 第一天去西湖断桥和苏堤，然后去雷峰塔。"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    chunks = stream_chunks(text, "m", usage, include_usage=True)
    assert chunks[-1] == b"data: [DONE]\n\n"
    objs = [json.loads(c[len(b"data: "):]) for c in chunks[:-1]]
    assert objs[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert "".join(o["choices"][0]["delta"].get("content", "") for o in objs if o["choices"]) == text
    assert objs[-2]["choices"][0]["finish_reason"] == "stop" and objs[-1]["choices"] == []
    assert objs[-1]["usage"] == usage and all(o["usage"] is None for o in objs[:-1])
    assert len({o["id"] for o in objs}) == 1 and all(o["object"] == "chat.completion.chunk" for o in objs)
    assert all(len(o["choices"][0]["delta"].get("content", "")) <= 8 for o in objs[1:-2] if "第" in text)
    no_usage = [json.loads(c[len(b"data: "):]) for c in stream_chunks(text, "m", usage, False)[:-1]]
    assert all("usage" not in o for o in no_usage) and no_usage[-1]["choices"][0]["finish_reason"] == "stop"


def test_capture_reads_text_usage_and_strips_what_the_client_did_not_ask_for():
    events = stream_chunks("hello there world", "m", {"prompt_tokens": 3, "completion_tokens": 3,
                                                      "prompt_tokens_details": {"cached_tokens": 2}}, True)
    raw = b"".join(events)
    kept = StreamCapture(strip_usage=False)
    assert b"".join(kept.feed(raw[i:i + 7]) for i in range(0, len(raw), 7)) + kept.flush() == raw
    capture = StreamCapture(strip_usage=True)
    out = b"".join(capture.feed(raw[i:i + 5]) for i in range(0, len(raw), 5)) + capture.flush()
    assert capture.text == "hello there world" and capture.complete and capture.model == "m"
    assert capture.usage["prompt_tokens_details"]["cached_tokens"] == 2
    sent = [json.loads(e[len("data: "):]) for e in out.decode().split("\n\n") if e and e != "data: [DONE]"]
    assert all("usage" not in o for o in sent) and all(o["choices"] for o in sent)
    assert out.endswith(b"data: [DONE]\n\n")


def test_capture_flags_incomplete_answers():
    cut = StreamCapture()
    cut.feed(b"".join(stream_chunks("partial answer", "m", {}, False)[:-2]))   # no finish, no [DONE]
    assert not cut.complete
    broken = StreamCapture()
    broken.feed(b'data: {"error": {"message": "boom"}}\n\n')
    assert broken.error and not broken.complete
    length = StreamCapture()
    events = [json.loads(e[6:]) for e in stream_chunks("abc", "m", {}, False)[:-1]]
    events[-1]["choices"][0]["finish_reason"] = "length"
    length.feed(b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n")
    assert not length.complete


def test_usage_estimate_scales_from_the_original_request():
    entry = {"answer_tokens": 40, "usage": {"prompt_tokens": 100, "prompt_chars": 400, "completion_tokens": 40}}
    usage = estimate_usage(entry, prompt_chars=200, prompt_estimate=7)
    assert usage["prompt_tokens"] == 50 and usage["completion_tokens"] == 40 and usage["total_tokens"] == 90
    assert usage["prompt_tokens_details"]["cached_tokens"] == 50
    # a warmed answer has no counts: both estimated from the text, never 0 for a non-empty answer
    warmed = estimate_usage({"answer_text": "Click 'Forgot password' on the sign-in page.", "answer_tokens": 0},
                            prompt_chars=120, prompt_estimate=38)
    assert warmed["prompt_tokens"] == 38 and warmed["completion_tokens"] == 11
    assert approx_tokens("退货需要在七天内申请") == 10 and approx_tokens("abcd efg") == 2 and approx_tokens("") == 0
    assert approx_prompt_tokens(["You are helpful.", "Hi"]) == 4 + 4 + 1 + 4
    body = completion_body("hi", "m", usage)
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "hi"} and body["object"] == "chat.completion"


def test_request_hash_and_cached_messages():
    a = [{"role": "user", "content": "hi"}]
    assert request_hash(a) == request_hash([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    assert request_hash(a) != request_hash([{"role": "user", "content": "hi!"}])
    assert not CacheRequest("t", "s", a).in_conversation
    assert CacheRequest("t", "s", [*a, {"role": "assistant", "content": "yo"}, *a]).in_conversation
    turns = {"request_text": json.dumps({"turns": a}), "answer_text": "hello"}
    assert cached_messages(turns) == [*a, {"role": "assistant", "content": "hello"}]
    assert cached_messages({"request_text": "not json", "answer_text": "x"}) == [{"role": "assistant", "content": "x"}]


def test_unsupported_features_bypass_the_cache():
    msgs = [{"role": "user", "content": "hi"}]
    assert unsupported_feature({"messages": msgs}) is None
    assert unsupported_feature({"messages": msgs, "n": 2}) == "n"
    assert unsupported_feature({"messages": msgs, "tools": [{"type": "function"}]}) == "tools"
    assert unsupported_feature({"messages": msgs, "response_format": {"type": "json_object"}}) == "response_format"
    assert unsupported_feature({"messages": msgs, "response_format": {"type": "text"}}) is None
    assert unsupported_feature({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "x"}}]}]}) == "content"
    assert unsupported_feature({"messages": [*msgs, {"role": "tool", "content": "42"}]}) == "tools"
    # the model continues an assistant prefill: its answer is not an answer to the messages before it
    assert unsupported_feature({"messages": [*msgs, {"role": "assistant", "content": "Sure:"}]}) == "prefill"
    assert unsupported_feature({"messages": [*msgs, {"role": "system", "content": "in French"}]}) == "prefill"
    # a named speaker: the cache keys messages by role and text, and "What's my name?" depends on who asks
    assert unsupported_feature({"messages": [{"role": "user", "content": "What's my name?", "name": "alice"}]}) \
        == "name"
    # a field the cache does not record changes what is asked, unless it asks for nothing
    assert unsupported_feature({"messages": msgs, "logit_bias": {"42": -100}}) == "logit_bias"
    assert unsupported_feature({"messages": msgs, "reasoning_effort": "high"}) == "reasoning_effort"
    assert unsupported_feature({"messages": msgs, "Bad Name\r\n": 1}) == "param"     # never a header's text
    for neutral in ({"logit_bias": {}}, {"echo": False}, {"modalities": ["text"]}, {"suffix": None},
                    {"user": "u1", "metadata": {"k": "v"}, "store": True, "stream": True, "seed": 3}):
        assert unsupported_feature({"messages": msgs, **neutral}) is None, neutral


def test_warmup_items_are_checked_and_conversations_split():
    item = check_entry({"messages": [{"role": "user", "content": "q"}], "answer": "a"}, 0, 8)
    assert item["scope"] == "global" and item["tenant"] == "default"
    assert check_entry({"messages": [{"role": "user", "content": "q"}], "answer": "a", "session_id": "s"},
                       0, 8)["scope"] == "session"
    for bad in ({"messages": [], "answer": "a"}, {"messages": [{"role": "user", "content": "q"}]},
                {"messages": [{"role": "user", "content": "q"}], "answer": "a", "scope": "session"},
                {"messages": [{"role": "user", "content": "q"}], "answer": "a", "scope": "world"}, "text"):
        with pytest.raises(GatewayError) as exc:
            check_entry(bad, 3, 8)
        assert exc.value.status == 400 and "entries[3]" in exc.value.message
    conversation = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "q1"},
                                 {"role": "assistant", "content": "a1"}, {"role": "user", "content": "q2"},
                                 {"role": "assistant", "content": "a2"}], "session_id": "x"}
    pairs = conversation_pairs(conversation)
    assert [p["answer"] for p in pairs] == ["a1", "a2"] and len(pairs[1]["messages"]) == 4
    assert all(p["session_id"] == "x" for p in pairs)


def test_metric_rates():
    m = GatewayMetrics()
    for outcome, n in (("HIT", 3), ("PARTIAL", 1), ("MISS", 4), ("BYPASS", 2)):
        m.requests.labels(outcome).inc(n)
    m.pollution.inc()
    m.decision_seconds.labels("total").observe(0.004)
    rates = m.rates()
    assert rates["hit_rate"] == 3 / 8 and rates["partial_rate"] == 1 / 8
    assert rates["precision_proxy"] == pytest.approx(2 / 3) and rates["cache_pollution"] == 1
    assert m.decision_quantiles()["total"]["p50_ms_le"] == 5.0
    assert b"semcache_hit_rate 0.375" in m.render()


def test_a_stored_answer_is_served_only_where_the_backend_could_have_given_it():
    from gateway.cache.request_params import GenerationParams, mismatch
    stored = GenerationParams.from_body({"model": "smollm2", "temperature": 0, "max_tokens": 200})
    entry = {"answer_text": "Paris is the capital of France.", "answer_tokens": 8,
             "usage": {"request": stored.record(), "model": "smollm2"}}
    ask = GenerationParams.from_body
    assert mismatch(ask({"model": "smollm2", "temperature": 0}), entry, allow_sampled=False) is None
    assert mismatch(ask({"model": "gpt-4o", "temperature": 0}), entry, True) == "model"
    assert mismatch(ask({"model": "smollm2", "max_tokens": 7}), entry, True) == "max_tokens"
    assert mismatch(ask({"model": "smollm2", "max_completion_tokens": 8}), entry, True) is None
    assert mismatch(ask({"model": "smollm2", "stop": "capital"}), entry, True) == "stop"
    assert mismatch(ask({"model": "smollm2", "stop": ["\n\n", "Berlin"]}), entry, True) is None
    assert mismatch(ask({"model": "smollm2"}), entry, allow_sampled=False) == "temperature"   # default T is 1
    assert mismatch(ask({"model": "smollm2"}), entry, allow_sampled=True) is None
    warmed = {"answer_text": "x" * 40, "answer_tokens": 0, "usage": {}}     # an operator's answer: any model
    assert mismatch(ask({"model": "gpt-4o"}), warmed, True) is None
    assert mismatch(ask({"model": "gpt-4o", "max_tokens": 9}), warmed, True) == "max_tokens"   # ~10 tokens
    assert ask({"stop": "x"}).key != ask({"stop": ["y"]}).key and ask({}).key == ask({"temperature": 1}).key


def test_an_answer_shaped_by_its_own_request_serves_only_requests_that_ask_the_same():
    """Found by an outside probe: an answer cut by the writer's stop string, or drawn at temperature 1.6, was
    served as a HIT to requests that asked for neither."""
    from gateway.cache.request_params import GenerationParams, mismatch
    ask = GenerationParams.from_body

    def written(**body):
        return {"answer_text": "The novel \"Moby Dick\" by ", "answer_tokens": 8,
                "usage": {"request": ask({"model": "smollm2", **body}).record(), "model": "smollm2"}}
    cut = written(temperature=0, stop=["Herman", "Melville"])
    assert mismatch(ask({"model": "smollm2", "temperature": 0}), cut, True) == "stop"
    assert mismatch(ask({"model": "smollm2", "temperature": 0, "stop": ["Herman"]}), cut, True) == "stop"
    assert mismatch(ask({"model": "smollm2", "temperature": 0, "stop": ["Melville", "Herman", "x"]}), cut,
                    True) is None                  # the backend would have stopped at the same place
    hot = written(temperature=1.6)
    assert mismatch(ask({"model": "smollm2", "temperature": 0}), hot, True) == "temperature"
    assert mismatch(ask({"model": "smollm2"}), hot, True) == "temperature"             # sampled at 1, not 1.6
    assert mismatch(ask({"model": "smollm2", "temperature": 1.6}), hot, True) is None
    assert mismatch(ask({"model": "smollm2", "temperature": 1.6, "top_p": 0.5}), hot, True) == "temperature"
    greedy = written(temperature=0)
    assert mismatch(ask({"model": "smollm2", "temperature": 0.7}), greedy, True) is None   # the mode serves
    penalised = written(temperature=0, presence_penalty=2.0)
    assert mismatch(ask({"model": "smollm2", "temperature": 0}), penalised, True) == "penalty"
    assert mismatch(ask({"model": "smollm2", "temperature": 0, "presence_penalty": 2}), penalised, True) is None
    assert mismatch(ask({"model": "smollm2", "temperature": 0, "frequency_penalty": 1}), greedy, True) == "penalty"
    assert ask({"temperature": 0}).plain and ask({}).plain
    assert not ask({"stop": "x"}).plain and not ask({"temperature": 1.6}).plain and not ask({"seed": 3}).plain
    assert not ask({"frequency_penalty": 0.5}).plain and not ask({"top_p": 0.9}).plain


def test_a_conversation_id_is_derived_from_its_opening():
    from gateway.chat import conversation_id
    opening = [{"role": "system", "content": "You are a guide."}, {"role": "user", "content": "Plan Kyoto."}]
    later = [*opening, {"role": "assistant", "content": "Day 1..."}, {"role": "user", "content": "And Osaka?"}]
    assert conversation_id("acme", opening) == conversation_id("acme", later)
    assert conversation_id("acme", opening) != conversation_id("globex", opening)
    other = [{"role": "system", "content": "You are a lawyer."}, opening[1]]
    assert conversation_id("acme", other) != conversation_id("acme", opening)
    assert conversation_id("acme", [{"role": "user", "content": "\ud800 broken"}]).startswith("conv-")


def test_an_entry_serves_only_where_its_earlier_turns_begin_the_conversation():
    """Found by an outside probe: two conversations that differed only in an instruction six turns back (no
    session id: one derived conversation) were served each other's answers; the judge reads two earlier turns."""
    from gateway.cache.decision import history_diverged, history_record

    def u(text):
        return {"role": "user", "content": text}

    def a(text):
        return {"role": "assistant", "content": text}
    early = [u("Plan a trip to Rome."), a("Sure."), u("Always answer in French."), a("D'accord."),
             u("Three days."), a("OK."), u("Budget 900 euros."), a("Noted.")]
    cached = early + [u("What should we eat on day one?")]
    entry = {"usage": {"history": history_record(cached)}}
    assert history_record(cached)["turns"] == 8
    assert not history_diverged(early + [u("What to eat on the first day?")], entry)      # a rewording
    assert not history_diverged(cached + [a("Pasta."), u("what should we eat on day one")], entry)  # asked again
    assert not history_diverged([{"role": "system", "content": "x"}] + early + [u("Day one food?")], entry)
    respaced = [dict(m, content="  " + m["content"].replace(" ", "   ")) for m in early]
    assert not history_diverged(respaced + [u("Day one food?")], entry)             # whitespace is not content
    other = early[:2] + [u("Always answer in German."), a("Gut.")] + early[4:]
    assert history_diverged(other + [u("What should we eat on day one?")], entry)
    assert history_diverged(early[:4] + [u("What should we eat on day one?")], entry)     # an earlier branch
    assert not history_diverged(early + [u("x")], {"usage": {}})                          # warmed before it existed
    assert history_record([u("first question")]) == {"turns": 0, "digest": history_record([u("q")])["digest"]}


def test_an_entry_serves_only_under_the_system_values_it_was_given():
    """Found by an outside probe: the prompt's version masks dates, times and names, so "Current date:
    2026-12-09" met the answer given under "…2026-12-07" ("Has my order arrived?": a stale yes) and "User name:
    Bob" the one given to Alice ("What's my name?"). The version still matches (the entry is found, for a
    PARTIAL and its draft); the exact values decide whether it may serve."""
    from gateway.cache.decision import system_digest, system_values_changed
    from fingerprint.fingerprinter import Fingerprinter

    def ask(system):
        return [{"role": "system", "content": system}, {"role": "user", "content": "Has my order arrived?"}]
    monday, wednesday = ask("Support bot. Current date: 2026-12-07."), ask("Support bot. Current date: 2026-12-09.")
    version = Fingerprinter.system_prompt_version
    assert version(None, "Support bot. Current date: 2026-12-07.") == \
        version(None, "Support bot. Current date: 2026-12-09.")                       # one version, as before
    entry = {"usage": {"system": system_digest(monday)}}
    assert system_values_changed(wednesday, entry)
    assert system_values_changed(ask("Support bot. User name: Bob."), {"usage": {"system": system_digest(
        ask("Support bot. User name: Alice."))}})
    assert not system_values_changed(ask("Support  bot.\nCurrent date: 2026-12-07."), entry)   # spacing only
    assert not system_values_changed(wednesday, {"usage": {}})                              # written before
    developer = [{"role": "developer", "content": "Current date: 2026-12-07."}, monday[1]]
    assert system_digest(developer) != system_digest(monday[1:])
