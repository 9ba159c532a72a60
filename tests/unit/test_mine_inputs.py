"""`semcache mine` reads the three log formats it promises, and takes each conversation's first turn."""
import json

import pytest

from gateway.mine import read_first_turns


def write(path, lines):
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n")
    return str(path)


def test_openai_messages_replay_sessions_and_sharegpt_lines(tmp_path):
    source = write(tmp_path / "logs.jsonl", [
        {"messages": [{"role": "system", "content": "You are Acme's help desk."},
                      {"role": "user", "content": "How do I reset my password?"},
                      {"role": "assistant", "content": "Use 'Forgot password'."},
                      {"role": "user", "content": "thanks"}]},
        {"session_id": "s2", "requests": [{"messages": [{"role": "user", "content": "怎么退货？"}],
                                           "answer": "在订单页申请退货。"}]},
        {"id": "sg3", "conversations": [{"from": "human", "value": "Do you ship to Canada?"},
                                        {"from": "gpt", "value": "Yes, in 4 to 6 days."}]},
        {"messages": [{"role": "user", "content": "no answer logged"}]},          # nothing to learn from
        {"messages": [{"role": "assistant", "content": "hello"}, {"role": "user", "content": "late"}]},
    ])
    turns, read = read_first_turns(source)
    assert read == 5
    assert [(t.conversation, t.question, t.answer) for t in turns] == [
        ("line-1", "How do I reset my password?", "Use 'Forgot password'."),
        ("s2", "怎么退货？", "在订单页申请退货。"),
        ("sg3", "Do you ship to Canada?", "Yes, in 4 to 6 days.")]
    assert turns[0].messages[0] == {"role": "system", "content": "You are Acme's help desk."}


def test_a_sharegpt_json_array_and_the_limit(tmp_path):
    path = tmp_path / "sharegpt.json"
    path.write_text(json.dumps([{"id": str(i), "conversations": [{"from": "human", "value": f"question {i}"},
                                                                 {"from": "gpt", "value": f"answer {i}"}]}
                                for i in range(5)]))
    turns, read = read_first_turns(str(path), limit=3)
    assert read == 3 and [t.answer for t in turns] == ["answer 0", "answer 1", "answer 2"]


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        read_first_turns(str(tmp_path / "missing.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": []}\nnot json\n')
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        read_first_turns(str(bad))
