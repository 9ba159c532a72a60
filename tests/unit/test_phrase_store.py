"""The phrase store (backend_engine/phrase_store.py): the majority continuation of the longest gram that
occurs often enough, never across an answer's end; its binary search against a brute-force scan; and in the
engine, drafts from it keep greedy output identical while some of them are accepted."""
import random

from backend_engine import EngineConfig, LLMEngine
from backend_engine.loader import load_model
from backend_engine.phrase_store import MIN_COUNT, PhraseStore
from backend_engine.sampling import SamplingParams
from backend_engine.speculative import STORE_K, SpecState

ANSWERS = [[1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 8], [1, 2, 3, 9, 9], [7, 2, 3, 4, 6], [2, 3, 4, 5, 11]]


def test_the_continuation_most_occurrences_share_is_proposed():
    store = PhraseStore.build(ANSWERS)
    # "1 2 3" occurs 3 times: 4 follows twice, then 5 twice, then the answers end (or go on once only)
    assert store.propose([0, 1, 2, 3], 8) == [4, 5]
    # "2 3" occurs 5 times: 4 four times, then 5 three times, then 8 once and two ends: stop
    assert store.propose([6, 2, 3], 8) == [4, 5]
    assert store.propose([6, 2, 3], 1) == [4]                  # k bounds it
    assert store.propose([1, 2, 3], 0) == []


def test_rare_or_unseen_grams_propose_nothing():
    store = PhraseStore.build(ANSWERS)
    assert store.propose([9, 9], 4) == []                      # once only, and nothing follows it
    assert store.propose([5, 8], 4) == []                      # the end of an answer: never crosses it
    assert store.propose([42, 43, 44], 4) == []
    assert store.propose([3], 4) == []                         # one token is too little to go on
    assert PhraseStore.build([]).propose([1, 2], 4) == []
    # a rare 4-gram falls back to its 3-, then 2-gram
    assert store.propose([8, 1, 2, 3], 4) == [4, 5]


def test_the_binary_search_finds_every_occurrence(tmp_path):
    rng = random.Random(7)
    answers = [[rng.randrange(6) for _ in range(rng.randrange(1, 30))] for _ in range(60)]
    store = PhraseStore.build(answers)
    store.save(tmp_path / "phrases.npz")
    loaded = PhraseStore.load(tmp_path / "phrases.npz")
    for _ in range(200):
        gram = [rng.randrange(6) for _ in range(rng.randrange(1, 5))]
        expected = sum(a[i:i + len(gram)] == gram for a in answers for i in range(len(a)))
        lo, hi = loaded._range(gram)
        assert hi - lo == expected, gram
        assert all(loaded.stream[p:p + len(gram)].tolist() == gram for p in loaded.order[lo:hi])
        assert loaded.propose(gram, 3) == store.propose(gram, 3)


def test_store_proposals_move_neither_the_reference_cursor_nor_k():
    store = PhraseStore.build([[5, 6, 7, 8]] * MIN_COUNT)
    state = SpecState([1, 2, 3])
    proposal = state.propose([9, 5, 6], "auto", 10, store)
    assert proposal == [7, 8][:STORE_K] and state.from_store
    state.update(len(proposal), 1)
    assert state.cursor == 0 and state.k > STORE_K and state.accepted == 1 and state.proposed == len(proposal)
    assert state.propose([9, 5, 6], "draft", 10, store) == []  # draft mode: the reference only
    assert state.propose([9, 5, 6], "off", 10, store) == []
    # a reference continuation is preferred over the store's
    assert SpecState([5, 6, 1, 2]).propose([9, 5, 6], "auto", 10, store)[:2] == [1, 2]


def test_greedy_output_is_unchanged_and_store_drafts_are_accepted():
    loaded = load_model("demo", 1024)
    prompts = ["Tell me something about rivers and bridges.", "A second, different question about tea."]

    def run(phrases: bool):
        engine = LLMEngine(EngineConfig(model="demo", num_blocks=256, max_model_len=1024, speculative="ngram",
                                        phrase_drafts=phrases), loaded=loaded)
        ids = [engine.apply_chat_template([{"role": "user", "content": p}]) for p in prompts]
        out = engine.generate(ids, SamplingParams(max_tokens=40, temperature=0, ignore_eos=True))
        return [o["token_ids"] for o in out], engine.stats

    plain, without = run(False)
    # the store holds the first answer (twice: a continuation needs MIN_COUNT occurrences) and noise
    rng = random.Random(3)
    noise = [[rng.randrange(loaded.config.vocab_size) for _ in range(50)] for _ in range(20)]
    loaded.phrases = PhraseStore.build([plain[0]] * MIN_COUNT + noise)
    with_store, stats = run(True)
    assert with_store == plain
    assert stats.phrase_accepted_tokens > 0 and without.phrase_draft_tokens == 0
    assert stats.accepted_draft_tokens > without.accepted_draft_tokens
    loaded.phrases = None


def test_prepare_builds_the_store_once_with_the_models_tokenizer(tmp_path):
    import shutil

    from backend_engine.loader import DEMO_TOKENIZER_DIR
    from backend_engine.phrase_store import prepare
    for f in DEMO_TOKENIZER_DIR.iterdir():
        shutil.copy(f, tmp_path / f.name)
    texts = ["Here is a simple plan for the week.", "Here is a simple plan for your trip.", "Something else."]
    path = prepare(tmp_path, iter(texts), batch=2)
    store = PhraseStore.load(path)
    tokenizer = load_model("demo", 256).tokenizer
    ids = tokenizer.encode("Here is a simple plan for", add_special_tokens=False)
    assert len(store) == sum(len(tokenizer.encode(t, add_special_tokens=False)) for t in texts)
    assert store.propose(ids[:3], 4) == ids[3:7]             # both answers go on the same way
    assert prepare(tmp_path, iter(["never read"])) == path and PhraseStore.load(path).propose(ids[:3], 4)
