"""Bad input (issue 13, B1-B7): each reproduction as a regression test, and property tests that the text
extractors never raise on arbitrary text and cost one pass over it."""
import hashlib
import json
import time
from datetime import date

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend_engine.protocol import OpenAIError, decode_body
from fingerprint.entities import _extract, active_entities, extract
from fingerprint.normalize import chinese_number, english_number, mask_volatile, normalize_text
from gateway.cache.decision import storable
from gateway.cache.signals import is_negative, is_refinement, is_reset
from gateway.chat import unsupported_feature
from gateway.errors import GatewayError
from gateway.settings import Settings
from gateway.upstream import Upstream, upstream_session_id
from gateway.validation import MAX_JSON_DEPTH, decode_json_object, is_cache_id, json_depth, session_id
from validator.alignment import align
from validator.key_fact_validator import KeyFactValidator
from validator.key_facts import KeyFactExtractor, message_text, resolve_dates
from validator.risk_policy import RiskPolicy

TODAY = date(2025, 6, 15)
PROPERTY = settings(derandomize=True, deadline=None, max_examples=300,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def nested(depth: int) -> bytes:
    """A JSON object whose arrays and objects nest `depth` levels."""
    return b'{"a":' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


# ---- B1: deep nesting --------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw", [nested(1000), b'{"a":' * 1000 + b"1" + b"}" * 1000, b"[" * 100_000,
                                 b'{"messages":' + b"[" * 5000])
def test_deep_nesting_is_a_400_not_a_recursion_error(raw):
    with pytest.raises(GatewayError) as gateway:
        decode_json_object(raw)
    assert (gateway.value.status, gateway.value.code) == (400, "invalid_json")
    with pytest.raises(OpenAIError) as engine:
        decode_body(raw)
    assert (engine.value.status, engine.value.code) == (400, "invalid_json")


def test_nesting_limit_is_exact_and_ignores_brackets_in_strings():
    assert decode_json_object(nested(MAX_JSON_DEPTH)) == {"a": json.loads(nested(MAX_JSON_DEPTH))["a"]}
    with pytest.raises(GatewayError, match="deeper than 64"):
        decode_json_object(nested(MAX_JSON_DEPTH + 1))
    text = '[[[{{ \\" ]]] "' * 100
    raw = json.dumps({"messages": [{"role": "user", "content": text}]}).encode()
    assert json_depth(raw) == 3
    assert decode_json_object(raw)["messages"][0]["content"] == text
    assert decode_body(raw)["messages"][0]["content"] == text


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:'),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                       max_size=3), max_leaves=30)


def depth_of(value) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    return 0


@PROPERTY
@given(json_values)
def test_json_depth_matches_the_structure(value):
    assert json_depth(json.dumps(value).encode()) == depth_of(value)


@pytest.mark.parametrize("messages", [[{"role": []}], [{"role": {"a": 1}, "content": "x"}],
                                      [{"role": "user", "content": [{"type": ["text"], "text": "x"}]}],
                                      [{"role": "user", "content": [{"type": {}, "text": "x"}]}]])
def test_unhashable_roles_and_part_types_are_a_400(messages):
    """Found by the fuzz suite: `role not in ROLES` raised TypeError for a list (a 500)."""
    from backend_engine.protocol import parse_chat
    from gateway.validation import validate_chat
    with pytest.raises(GatewayError) as error:
        validate_chat({"messages": messages}, 8)
    assert error.value.status == 400
    with pytest.raises(OpenAIError) as engine:
        parse_chat(json.dumps({"messages": messages}).encode())
    assert engine.value.status == 400


# ---- B2: non-ASCII session ids -----------------------------------------------------------------------------
def test_non_ascii_session_ids_are_read_from_every_source():
    assert session_id({}, {"user": "会话-1"}) == "会话-1"
    assert session_id({}, {"metadata": {"session_id": "会话-1"}}) == "会话-1"
    # a header sent as UTF-8 arrives decoded as Latin-1 (ASGI): read back as the client wrote it
    assert session_id({"x-session-id": "会话-1".encode().decode("latin-1")}, {}) == "会话-1"
    assert session_id({"x-session-id": "caf\xe9"}, {}) == "caf\xe9"          # Latin-1 that is not UTF-8


def test_the_upstream_sees_an_ascii_session_id_distinct_per_tenant():
    derived = upstream_session_id("acme", "会话-1")
    assert derived.isascii() and len(derived) == 32 and int(derived, 16) >= 0
    assert derived == hashlib.sha256("acme\0会话-1".encode()).hexdigest()[:32]
    assert derived != upstream_session_id("globex", "会话-1")
    assert derived != upstream_session_id("acme", "会话-2")
    upstream = Upstream(httpx.MockTransport(lambda request: httpx.Response(200)), "http://backend",
                        httpx.Timeout(5.0))
    headers = upstream.headers("req-1", "会话-1\u2028😀", None, tenant_salt="acme")
    request = httpx.Request("POST", "http://backend/v1/chat/completions", headers=headers, content=b"{}")
    assert request.headers["x-session-id"] == upstream_session_id("acme", "会话-1\u2028😀")
    # non-ASCII tenant names (configured) and passed-through client credentials are sent as valid headers too
    passthrough = Upstream(httpx.MockTransport(lambda request: httpx.Response(200)), "http://backend",
                           httpx.Timeout(5.0), auth_passthrough=True)
    client_auth = "Bearer ключ".encode().decode("latin-1")
    headers = passthrough.headers("req-2", "s", client_auth, tenant_salt="租户")
    request = httpx.Request("POST", "http://backend/v1/chat/completions", headers=headers, content=b"{}")
    assert (b"authorization", "Bearer ключ".encode()) in request.headers.raw
    assert request.headers["x-cache-salt"].isascii() and headers["x-cache-salt"] != passthrough.headers(
        "req-3", None, None, tenant_salt="租户2")["x-cache-salt"]
    # a backend never sees a tenant's name (found by an outside probe: x-cache-salt was the name in clear)
    assert "acme" not in upstream.headers("req-4", None, None, tenant_salt="acme")["x-cache-salt"]


def test_passthrough_targets_are_valid_urls():
    """Found by the fuzz suite: a passed-through path or query with NUL, '?' or non-ASCII made httpx raise."""
    from gateway.passthrough import _upstream_target
    base = httpx.URL("http://backend:8001")
    for path, query in [("/a\x00b", b""), ("/a?b#c", b"a=\x00&b=\xff c"), ("/会话", b"x=%00"), ("/completions", b"")]:
        target, escaped = _upstream_target(path, query)
        url = base.copy_with(path=target, query=escaped or None)
        assert url.raw_path.startswith(b"/v1/") and url.raw_path.isascii()
    # found by an outside probe: the bundled engine's own routes take the gateway's notes, never a client's
    for path in ("/../metrics", "/semcache/prefetch", "/SemCache/draft", "semcache"):
        with pytest.raises(GatewayError) as error:
            _upstream_target(path, b"")
        assert error.value.status == 404


# ---- B4 / B5: NUL and other control characters in ids ---------------------------------------------------------
@pytest.mark.parametrize("bad", ["a\x00b", "a\r\nX-Injected: 1", "line\n", "\x7f", "esc\x1b[0m", "\x00"])
@pytest.mark.parametrize("where", ["header", "metadata", "user"])
def test_control_characters_in_a_session_id_are_a_400_naming_the_field(bad, where):
    headers, body = {}, {}
    if where == "header":
        headers["x-session-id"] = bad
    elif where == "metadata":
        body["metadata"] = {"session_id": bad}
    else:
        body["user"] = bad
    with pytest.raises(GatewayError) as error:
        session_id(headers, body)
    assert (error.value.status, error.value.code) == (400, "invalid_value")
    assert error.value.param == {"header": "X-Session-Id", "metadata": "metadata.session_id", "user": "user"}[where]


def test_cache_ids_are_32_hex_digits():
    assert is_cache_id("0123456789abcdef0123456789abcdef")
    for bad in ["", "abc", "0123456789abcdef0123456789abcde\x00", "0123456789ABCDEF0123456789ABCDEF",
                "0123456789abcdef0123456789abcdef0", "g" * 32, None, 42, ["a"]]:
        assert not is_cache_id(bad)


def test_what_is_stored_has_no_nul_and_no_infinity():
    value = {"a\x00": ["x\x00y", {"k": "\x00"}, 3, None, float("inf"), -float("inf"), float("nan"), 1.5],
             "t": ("\x00",)}
    assert storable(value) == {"a\ufffd": ["x\ufffdy", {"k": "\ufffd"}, 3, None, None, None, None, 1.5],
                               "t": ["\ufffd"]}
    assert "\x00" not in json.dumps(storable(value), ensure_ascii=False, allow_nan=False)


# ---- B6: the fingerprint's cost is bounded --------------------------------------------------------------------
def test_a_message_over_the_limit_is_not_modelled_by_the_cache():
    limit = Settings().max_cache_message_chars
    assert limit == 16_000
    at_limit = {"messages": [{"role": "user", "content": "a" * limit}]}
    assert unsupported_feature(at_limit, limit) is None
    over = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "a" * (limit + 1)}]}
    assert unsupported_feature(over, limit) == "too_long"
    parts = {"messages": [{"role": "user", "content": [{"type": "text", "text": "a" * 9000},
                                                       {"type": "text", "text": "b" * 9000}]}]}
    assert unsupported_feature(parts, limit) == "too_long"
    huge = {"messages": [{"role": "user", "content": "x" * 4_000_000}]}
    started = time.perf_counter()
    assert unsupported_feature(huge, limit) == "too_long"
    assert time.perf_counter() - started < 0.5


ADVERSARIAL = ["1", "9" * 50 + " ", "1k", "1.", " \n\t", "a-", "price of ", "Tokyo 1 day ", '"ab ', "hundred ",
               "一万二千", "2023-13-01 ", "\n- item", "name: x"]


@pytest.mark.parametrize("unit", ADVERSARIAL)
def test_extractors_cost_one_pass_over_a_long_text(unit):
    """16,000 characters (the cache's limit) of a repeated pattern: each extractor in well under a second or
    two. Before the fix, 4,000 digits took 26 s in key-fact extraction and 16 s in entity extraction, and a
    16,000-character system prompt of 'a-' took 2.6 s to mask."""
    text = (unit * (16_000 // len(unit) + 1))[:16_000]
    _extract.cache_clear()
    for name, run in [("key facts", lambda: KeyFactExtractor().extract(text, TODAY)),
                      ("entities", lambda: extract(text)), ("normalize", lambda: normalize_text(text)),
                      ("mask", lambda: mask_volatile(text)), ("volatile", lambda: RiskPolicy.is_volatile(text)),
                      ("alignment", lambda: align(text, text[::-1]))]:
        started = time.perf_counter()
        run()
        assert time.perf_counter() - started < 5.0, name


def test_key_facts_read_a_bounded_part_of_long_answers_and_conversations():
    """Each message may be under the cache's limit while the conversation holds megabytes: the context's facts
    come from its most recent part, an answer's from its head."""
    from validator.key_facts import MAX_FACT_CHARS
    turn = "Plan 3 days in Kyoto for 2 people, budget 2000 dollars, on 2024-05-01. " * 200       # 14,400 chars
    conversation = [{"role": "user", "content": f"{i}: {turn}"} for i in range(512)]
    answer = "Day 1: 1,850 dollars. " * 50_000                                                 # 1.1 MB
    started = time.perf_counter()
    facts = KeyFactExtractor().for_entry(conversation, answer, TODAY)
    assert time.perf_counter() - started < 5.0
    assert facts["context"]["budget_max"] == 2000 and facts["context"]["dates"] == ["2024-05-01"]
    assert facts["answer"]["money"][0] == 1850 and len(facts["answer"]["text"]) <= MAX_FACT_CHARS


# ---- B7: impossible dates and other untrusted text -----------------------------------------------------------------
def test_impossible_dates_are_skipped():
    text = "Test: assert parse('2023-13-01') fails; Feb 30 is no day; nor is 13月40日 or 2023-02-29. 2024-02-29 is."
    assert resolve_dates(text, TODAY) == ["2024-02-29"]
    facts = KeyFactExtractor().for_entry([{"role": "user", "content": "Write a date parser test for Feb 30"}],
                                         "def test():\n    assert parse('2023-13-01') is None  # 13月40日\n")
    assert facts["answer"]["dates"] == [] and facts["context"]["dates"] == []


def test_message_text_ignores_parts_that_are_not_text():
    message = {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "text": 5},
                                           {"type": "image_url"}, "junk"]}
    assert message_text(message) == "hi"
    assert message_text({"role": "assistant", "content": None}) == ""


def test_spelled_out_numbers_stay_bounded():
    assert english_number("two hundred and five") == 205
    assert english_number(" ".join(["hundred"] * 3000)) is None           # 100**3000 has 6,001 digits
    assert normalize_text("hundred " * 3000).startswith("hundred")


TOKENS = ["9" * 500, "1" * 60, "0", "2023-13-01", "2024-02-29", "Feb 30", "Jan 1", "13月40日", "2月30日", "周五",
          "下周日", "next friday", "tomorrow", "hundred", "thousand", "and", "一万二", "亿亿亿", "八千", "三天两晚",
          "$", "$8,000", "8k", "1.5万", "1e309", "½", "١٢٣", "without", "no", "add", "budget", "under", "以内",
          "price of", "now", "- ", "\n", "1.", "第一天:", '"', "「", "Tokyo", "Paris", "王总", "\x00", "\r\n", "\t",
          "\u3000", "\ufeff", "😀", "Ｆｕｌｌ", "İ", "ß", "ﬁ", "%", "km", "days", "nights", "people", "个人", "元"]
texts = st.one_of(st.text(), st.text(alphabet=st.characters(codec="utf-8"), max_size=200),
                  st.lists(st.sampled_from(TOKENS) | st.text(max_size=5), max_size=40).map(" ".join),
                  st.lists(st.sampled_from(TOKENS), max_size=40).map("".join))


@PROPERTY
@given(texts)
def test_extractors_never_raise_on_arbitrary_text(text):
    extractor = KeyFactExtractor()
    facts = extractor.extract(text, TODAY)
    json.dumps(facts, allow_nan=False)                    # stored as JSON: no Infinity ("9" * 500)
    entry_facts = extractor.for_entry([{"role": "user", "content": text}], text, TODAY)
    json.dumps(entry_facts, allow_nan=False)
    KeyFactValidator().check([{"role": "user", "content": text[::-1]}], entry_facts, TODAY)
    KeyFactValidator().check([{"role": "user", "content": text}], {"answer": facts}, TODAY)
    keyed, named, negated = extract(text)
    active_entities([text, text[::-1]])
    normalize_text(text)
    mask_volatile(text)
    RiskPolicy.is_volatile(text)
    align(text, text[:10]), align(text[::-1], text)
    is_reset(text), is_negative(text), is_refinement(text)
    english_number(text), chinese_number(text)


@pytest.fixture(scope="module")
def fingerprinter():
    from fingerprint import Fingerprinter, TextEncoder
    return Fingerprinter(TextEncoder("e5-small"))


def test_the_fingerprint_reads_only_the_turns_it_uses(fingerprinter, monkeypatch):
    """Old turns cost nothing: only the current user message and the HISTORY_TURNS before it are normalised
    and encoded, and the result is the one those turns alone give."""
    import numpy as np

    import fingerprint.fingerprinter as module
    seen = []
    real = module.normalize_text
    monkeypatch.setattr(module, "normalize_text", lambda text: (seen.append(text), real(text))[1])
    conversation = []
    for i in range(50):
        conversation += [{"role": "user", "content": f"Plan day {i} of the Kyoto trip for 2 people, budget 3000"},
                         {"role": "assistant", "content": f"Day {i}: temples in the morning, a market later."}]
    conversation.append({"role": "user", "content": "Make day 49 cheaper, under 2000 yen"})
    full = fingerprinter.fingerprint(conversation)
    assert len(seen) == module.HISTORY_TURNS + 1
    seen.clear()
    fingerprinter.prime(conversation)
    assert len(seen) == module.HISTORY_TURNS
    tail = fingerprinter.fingerprint(conversation[-(module.HISTORY_TURNS + 1):])
    assert tail.context_view == full.context_view and tail.tags == full.tags
    assert np.allclose(tail.vector, full.vector, atol=1e-6)


def test_a_long_system_prompt_is_masked_from_its_tail(fingerprinter):
    import fingerprint.fingerprinter as module
    system = " ".join(f"Rule {i}: answer politely, in English, for customer 2024-05-{i % 28 + 1:02d}." for i in range(400))
    fp = fingerprinter.fingerprint([{"role": "system", "content": system}, {"role": "user", "content": "hi"}])
    assert fp.context_view.splitlines()[0] == "system: " + mask_volatile(system)[-module.SYSTEM_CHARS:]
    assert fp.system_prompt_version == hashlib.sha256(mask_volatile(system).encode()).hexdigest()[:16]
    short = fingerprinter.fingerprint([{"role": "system", "content": "Be brief. Today is 2024-05-01."},
                                       {"role": "user", "content": "hi"}])
    assert short.system_prompt_version == fingerprinter.system_prompt_version("Be brief. Today is 2024-05-01.")
