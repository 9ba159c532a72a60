"""The hand-written groups as pairs (validator/training/gen_written.py): labels by construction, bad groups dropped."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "validator" / "training"))

import gen_written  # noqa: E402

GROUP = {"lang": "en", "domain": "travel_planning",
         "history": [{"role": "user", "content": "I'm going to Lisbon in May."},
                     {"role": "assistant", "content": "Nice, May is warm there."}],
         "request": "What should I pack for 5 days?", "answer": "Light layers, a rain jacket, walking shoes.",
         "same": ["Packing list for a 5-day trip?", "what do i bring for five days", "What should I pack for 5 days?"],
         "modify": ["What should I pack for 12 days?", "What should I not pack for 5 days?"],
         "switch": ["Any good vegan restaurants?"],
         "other_history": [{"role": "user", "content": "I'm going to Oslo in January."},
                           {"role": "assistant", "content": "It will be cold."}]}


def write(folder: Path, groups: list) -> None:
    (folder / "t_01.jsonl").write_text("".join(json.dumps(g) + "\n" for g in groups))


def test_a_group_gives_rewordings_as_same_and_edits_as_changes(tmp_path):
    write(tmp_path, [GROUP])
    rows = gen_written.generate(folder=tmp_path)
    by_kind = {}
    for r in rows:
        by_kind.setdefault(r["kind"], []).append(r)
    # the rewording identical to the request is not a rewording
    assert [r["new"][-1]["content"] for r in by_kind["written_rewording"]] == GROUP["same"][:2]
    assert all(r["label"] == "same" for r in by_kind["written_rewording"] + by_kind["written_rewording_pair"])
    assert {r["new"][-1]["content"] for r in by_kind["written_edit"]} == set(GROUP["modify"])
    assert all(r["label"] == "modify" for r in by_kind["written_edit"] + by_kind["written_edit_of_rewording"])
    assert by_kind["written_switch"][0]["label"] == "switch"
    other = by_kind["written_other_context"][0]
    assert other["label"] == "modify" and other["new"][-1]["content"] == GROUP["request"]
    assert other["new"][:2] == GROUP["other_history"] and other["cached"][:2] == GROUP["history"]
    for r in rows:            # the cached side ends with its answer, the new side with a user turn
        assert r["cached"][-1] == {"role": "assistant", "content": GROUP["answer"]}
        assert r["new"][-1]["role"] == "user" and r["group"] == "t_01-000"


def test_malformed_histories_and_groups_are_dropped_not_guessed(tmp_path):
    broken = {**GROUP, "history": [{"role": "assistant", "content": "out of order"}], "other_history": "nope"}
    write(tmp_path, [broken, {"lang": "fr", "request": "Bonjour"}, {**GROUP, "request": "  "}])
    rows = gen_written.generate(folder=tmp_path)
    assert rows and all(r["cached"][0]["role"] == "user" and len(r["cached"]) == 2 for r in rows)
    assert not any(r["kind"] == "written_other_context" for r in rows)


def test_held_out_cases_follow_the_eval_schema(tmp_path):
    from gateway.replay.evaluate import load_cases
    write(tmp_path, [GROUP])
    cases = gen_written.eval_cases(gen_written.generate(folder=tmp_path))
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    loaded = load_cases(path)
    assert {c["expected"] for c in loaded} == {"hit", "partial", "miss"}
    assert sum(c["expected"] == "hit" for c in loaded) == 2


def test_the_shipped_corpus_is_large_and_in_both_languages():
    groups = gen_written.groups()
    assert len(groups) >= 600 and {g["lang"] for g in groups} == {"en", "zh"}
