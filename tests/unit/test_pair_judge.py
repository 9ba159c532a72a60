"""The pair judge (alignment, then the pair model) on held-out pairs, and the gates together on hard pairs.

Held out: the `test` groups of validator/training/build_pairs.py (every pair built from one base request is
on one side of the split), a fixed sample of 300 per source. Floors, with the numbers measured when the model
was trained in the model card (validator/data/pair_model.json): changes (`modify`, `switch`) judged `same` in
at most 1% of all sampled changes and 3% of any one source's, and `same` recalled in at least 40% overall.
"""
import random
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from fingerprint.encoder import native_bf16
from gateway.cache.service import judge_in_bf16
from tests.conftest import models_dir
from validator.pair_judge import LABELS, PairJudge, Verdict, card, view

CHANGE_LEAK_CEILING = 0.01            # over all sources
SOURCE_LEAK_CEILING = 0.03            # in any one source's sample (about 150-200 changes each)
SAME_RECALL_FLOOR = 0.40
PER_SOURCE = 300


@pytest.fixture(scope="module", params=["onnx", pytest.param("bf16", marks=pytest.mark.skipif(
    not native_bf16(), reason="bf16 serves only where the CPU multiplies it natively; emulated it is too slow here"))])
def judge(request):
    """Both ways the gateway runs the judge: the ONNX model, and bf16 where the encoder measured it cheaper."""
    from fingerprint.encoder import resolve_encoder_dir
    from gateway.cache.service import bf16_judge
    folder = Path(models_dir())
    e5 = resolve_encoder_dir("e5-small", models_dir=folder)[0]
    made = PairJudge.prepared(e5, folder, runner=bf16_judge(e5) if request.param == "bf16" else None)
    assert made.backend == request.param
    return made


@pytest.fixture(scope="module")
def held_out():
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "validator" / "training"))
    from build_pairs import build
    by_source = defaultdict(list)
    for row in build():
        if row["split"] == "test":
            by_source[row["source"]].append(row)
    rng = random.Random(0)
    return {source: rng.sample(rows, min(PER_SOURCE, len(rows))) for source, rows in sorted(by_source.items())}


def test_held_out_pairs_of_every_source(judge, held_out):
    assert len(held_out) >= 4                      # four generators, written apart
    same_hits = same_total = leaked = changed = 0
    for source, rows in held_out.items():
        labels = [judge.judge(r["new"], r["cached"]).label for r in rows]
        changes = [p for p, r in zip(labels, rows) if r["label"] != "same"]
        leak = sum(p == "same" for p in changes) / max(len(changes), 1)
        sames = [p for p, r in zip(labels, rows) if r["label"] == "same"]
        same_hits += sum(p == "same" for p in sames)
        same_total += len(sames)
        leaked += sum(p == "same" for p in changes)
        changed += len(changes)
        print(f"{source}: {len(rows)} pairs, changes judged same {leak:.3%}, "
              f"same recalled {sum(p == 'same' for p in sames) / max(len(sames), 1):.3f}")
        assert leak <= SOURCE_LEAK_CEILING, source
    print(f"all: changes judged same {leaked / changed:.3%}, same recalled {same_hits / same_total:.3f}")
    assert leaked / changed <= CHANGE_LEAK_CEILING and same_hits / same_total >= SAME_RECALL_FLOOR


def test_model_card_states_its_data_and_threshold():
    c = card()
    assert c["data"]["pairs"] >= 20_000 and len(c["data"]["by_source"]) >= 4
    assert 0.5 <= c["same_threshold"] < 1.0 and c["labels"] == list(LABELS)


def test_the_assembled_model_computes_what_was_trained(judge, held_out):
    """The model the gateway runs (ONNX, or bf16) gives the trained network's probabilities: the card's threshold was chosen
    on those, and p(same) of a same request sits within a few thousandths of it. INT8 layers moved p(same) by up
    to 0.78 on these pairs and halved `same` recall at the threshold; INT8 embedding tables alone move it by
    about 0.06 at most."""
    import numpy as np
    import torch

    from fingerprint.encoder import resolve_encoder_dir
    from validator.pair_judge import batch
    from validator.pair_network import trained_network
    rows = [r for source in sorted(held_out) for r in held_out[source][:10]]
    pairs = [(view(r["new"]), view(r["cached"])) for r in rows]
    network = trained_network(resolve_encoder_dir("e5-small", models_dir=Path(models_dir()))[0])
    ids, mask = batch([judge.tokens.pair(new, cached) for new, cached in pairs])
    with torch.no_grad():
        trained = network(torch.tensor(ids), torch.tensor(mask)).numpy()
    gap = np.abs(judge.probs(pairs) - trained)
    print(f"{len(pairs)} pairs: mean |dp| {gap.mean():.4f}, max {gap.max():.4f}")
    assert gap.mean() <= 0.01 and gap.max() <= 0.15


def test_verdict_names_what_decided(judge):
    cached = [{"role": "user", "content": "Plan 3 days in Rome"}, {"role": "assistant", "content": "Day 1: ..."}]
    repeat = judge.judge([{"role": "user", "content": "plan 3 days in Rome, please!"}], cached)
    assert repeat.label == "same" and repeat.by == "alignment"
    more = judge.judge([{"role": "user", "content": "Plan 5 days in Rome"}], cached)
    assert more.label == "modify" and more.by == "veto:numbers"
    weekend = [{"role": "user", "content": "Plan a weekend in Rome"}, {"role": "assistant", "content": "Saturday: ..."}]
    other = judge.judge(weekend + [{"role": "user", "content": "How do I reverse a list in Python?"}], weekend)
    assert other.by == "veto:disjoint" and other.label == "modify"       # no content word in common
    thanks = judge.judge(weekend + [{"role": "user", "content": "Thanks, that helped!"}], weekend)
    assert thanks.by == "veto:disjoint" and thanks.label != "same"
    more = judge.judge([{"role": "user", "content": "Plan 3 relaxed days in Rome"}], cached)
    assert more.by == "veto:added" and more.label == "modify"       # asks for more: nothing it rewords
    changed = judge.judge([{"role": "user", "content": "Organise 3 days in Rome"}], cached)
    assert changed.by == "model" and abs(sum(changed.probs.values()) - 1) < 1e-3


def test_the_same_last_message_in_another_conversation_is_another_request(judge):
    rome = [{"role": "user", "content": "What should I see in Rome?"}, {"role": "assistant", "content": "The Forum."},
            {"role": "user", "content": "And what about food there?"}]
    oslo = [{"role": "user", "content": "What should I see in Oslo?"}, {"role": "assistant", "content": "The fjord."},
            {"role": "user", "content": "And what about food there?"}]
    verdict = judge.judge(oslo, rome + [{"role": "assistant", "content": "Carbonara."}])
    assert verdict.label != "same" and verdict.by == "veto:context_names"     # Oslo where Rome was
    assert view(oslo).context == ["What should I see in Oslo?"]
    weather = [{"role": "user", "content": "北京今天天气怎么样"}, {"role": "assistant", "content": "晴。"},
               {"role": "user", "content": "那明天呢？"}]
    other_city = [{"role": "user", "content": "上海今天天气怎么样"}, {"role": "assistant", "content": "多云。"},
                  {"role": "user", "content": "那明天呢？"}]
    assert judge.judge(other_city, weather + [{"role": "assistant", "content": "小雨。"}]).by == "veto:context_names"


def test_a_context_that_only_adds_a_name_is_left_to_the_model():
    """Only a name put where another was vetoes: a context that names what the other left unnamed may be the
    same conversation said more fully, and the model judges it."""
    from validator.pair_judge import prejudge
    seed = [{"role": "user", "content": "I want to visit a museum"}, {"role": "assistant", "content": "Which city?"},
            {"role": "user", "content": "What are the opening hours?"}, {"role": "assistant", "content": "9 to 5."}]
    probe = [{"role": "user", "content": "I want to visit a museum in Madrid"}, {"role": "assistant", "content": "OK."},
             {"role": "user", "content": "What are the opening hours?"}]
    assert prejudge(view(probe), view(seed)).by == "model"


def test_the_same_words_after_another_answer_are_not_served():
    """"The second one" points into the answer before it: when that answer differs, so may the request."""
    from validator.pair_judge import prejudge
    ask = [{"role": "user", "content": "Name three sights in Xi'an"}]
    seed = ask + [{"role": "assistant", "content": "1. Terracotta Army 2. Big Wild Goose Pagoda 3. City Wall"},
                  {"role": "user", "content": "How early must I book the second one?"}]
    probe = ask + [{"role": "assistant", "content": "1. Terracotta Army 2. Mount Hua 3. City Wall"},
                   {"role": "user", "content": "How early must I book the second one?"}]
    verdict = prejudge(view(probe), view(seed + [{"role": "assistant", "content": "A week ahead."}]))
    assert verdict.label == "modify" and verdict.by == "veto:answers"


HARD_PAIRS = [   # (cached request, cached answer, new request): none may be judged the same request
    ("Plan 3 days in Paris, budget 10000 euros", "Day 1 Louvre. Total 9499 euros.", "Plan 3 days in Paris, budget 8000 euros"),
    ("Plan 3 days in Paris with museums", "Day 1 Louvre and Orsay.", "Plan 3 days in Paris without museums"),
    ("Find a weekend trip from London by train", "Bath, 90 minutes by train.", "Find a weekend trip from London by car"),
    ("How do I cancel my premium subscription?", "Settings > Billing > Cancel.", "How do I upgrade my premium subscription?"),
    ("Write SQL to find duplicate emails", "SELECT email ... HAVING COUNT(*) > 1", "Write SQL to delete duplicate emails"),
    ("Summarize this in three bullet points: remote work", "- a\n- b\n- c", "Summarize this in five bullet points: remote work"),
    ("杭州三天，预算八千元", "第一天西湖。总计7500元。", "杭州三天，预算五千元"),
    ("杭州三天，去灵隐寺", "第一天灵隐寺和西湖。", "杭州三天，不要灵隐寺"),
    ("我的快递五天了还没到，帮我查一下", "包裹在配送站。", "我的快递五天了还没发货，帮我查一下"),
    ("帮我写SQL查出重复的邮箱", "SELECT email ...", "帮我写SQL删除重复的邮箱"),
    ("怎么取消自动续费的会员？", "在设置里关闭。", "怎么开通自动续费的会员？"),
    ("推荐一款坐飞机用的降噪耳机", "索尼和Bose。", "推荐一款跑步用的运动耳机"),
]


@pytest.mark.parametrize("cached_request,answer,new_request", HARD_PAIRS)
def test_hard_pairs_are_not_the_same_request(judge, cached_request, answer, new_request):
    cached = [{"role": "user", "content": cached_request}, {"role": "assistant", "content": answer}]
    verdict: Verdict = judge.judge([{"role": "user", "content": new_request}], cached)
    assert verdict.label != "same", verdict


def test_the_judge_takes_the_encoder_thread_budget():
    """`encoder_threads` (cores / workers under `serve --workers N`, 1 beside an in-process engine on 2 cores)
    bounds the pair judge's threads as well; torch keeps its count per OS thread, so only a thread that runs
    the models takes it, and no other thread of the process (the engine's step loop) loses its own."""
    import threading

    import torch

    from gateway.cache.service import load_gates
    before = torch.get_num_threads()
    fingerprinter, judge, _ = load_gates(models_dir=Path(models_dir()), encoder_threads=1)
    encoder = fingerprinter.encoder
    # the judge runs as the encoder measured best, but never quantised: INT8 encoder, fp32 (or bf16) judge
    assert judge.backend == ("bf16" if judge_in_bf16(encoder) else "onnx")
    if encoder.backend == "bf16":
        seen = {}

        def decide_in_a_worker_thread():
            torch.set_num_threads(2)                # what a fresh thread of a 2-core process starts with
            encoder.encode(["a sentence this test encodes once, in its own thread"])
            seen["encoder"] = torch.get_num_threads()
            torch.set_num_threads(2)
            ids, mask = np.ones((1, 8), dtype=np.int64), np.ones((1, 8), dtype=np.int64)
            judge.runner.run(ids, mask)             # the network itself (judge() may settle a pair without it)
            seen["judge"] = torch.get_num_threads()
        worker = threading.Thread(target=decide_in_a_worker_thread)
        worker.start()
        worker.join()
        assert seen == {"encoder": 1, "judge": 1}
        assert torch.get_num_threads() == before    # this thread's count is its own
    else:
        assert judge.session.get_session_options().intra_op_num_threads == 1
        assert encoder._session.get_session_options().intra_op_num_threads == 1


def test_the_trained_network_reaches_another_runner_under_hf_names_without_being_built():
    """`hf_state` (what the bf16 runner reads) gives exactly the trained float32 network's tensors."""
    from fingerprint.encoder import resolve_encoder_dir
    from validator.pair_network import hf_names, hf_state, trained_network
    e5 = resolve_encoder_dir("e5-small", models_dir=Path(models_dir()))[0]
    state = hf_state(e5)
    network = trained_network(e5)
    names = hf_names(len(network.layers)) | {"head.weight": "head.weight", "head.bias": "head.bias"}
    expected = {names[k]: v for k, v in network.state_dict().items()}
    assert set(state) == set(expected) and len(state) == len(expected)
    for name, value in expected.items():
        assert state[name].dtype == value.dtype and state[name].shape == value.shape, name
        assert state[name].equal(value), name


def test_an_assembled_model_is_reused_for_the_same_weights_whatever_their_mtime(tmp_path):
    import json
    import os
    import shutil

    from validator.pair_network import WEIGHTS_FILE, assemble, assembly_source
    weights = tmp_path / "weights.safetensors"
    shutil.copy(WEIGHTS_FILE, weights)
    out = tmp_path / "pair-judge"
    out.mkdir()
    (out / "model.onnx").write_bytes(b"assembled before")
    (out / "source.json").write_text(json.dumps(assembly_source(weights, True)))
    os.utime(weights, (1e9, 1e9))                # a fresh checkout: same bytes, another mtime
    assert assemble(tmp_path / "no-e5-needed", out, weights) == out
    assert (out / "model.onnx").read_bytes() == b"assembled before"
    # other weights are another model: the stamp no longer matches
    changed = tmp_path / "changed.safetensors"
    changed.write_bytes(weights.read_bytes()[:-1] + bytes([weights.read_bytes()[-1] ^ 1]))
    assert assembly_source(changed, True) != json.loads((out / "source.json").read_text())
    assert assembly_source(weights, False) != assembly_source(weights, True)
