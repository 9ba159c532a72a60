"""The rewording generator's request frames (validator/training/gen_rewordings.py): pure logic, no model.

A rewording is a `same` training pair, so a phrasing must keep the request: every phrasing of a frame that
parses again must parse as the same frame with the same core, never as another frame or a shorter core."""
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "validator" / "training"))
from gen_rewordings import FRAMES, frame_of, reframe  # noqa: E402

CORES = {"en": ["bake sourdough bread at home", "the history of the Roman empire", "a haiku about autumn rain"],
         "zh": ["在家里烤面包", "罗马帝国的历史", "一首关于秋雨的诗", "一封给房东的邮件"]}


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f"{f.lang}-{f.name}")
def test_every_phrasing_that_parses_keeps_its_frame_and_core(frame):
    parsed = 0
    for core in CORES[frame.lang]:
        for template in frame.render:
            text = template.format(c=core, v="is")
            found = frame_of(text, frame.lang)
            if found is None:
                continue
            parsed += 1
            if found[0].name == frame.name:
                assert found[1] == core, text
            else:       # read as a more general frame ("能帮我写X吗" as a request to 写X): the request is kept
                assert core in found[1] and found[0].name == "do_it", text
    assert parsed >= len(CORES[frame.lang])        # the frame reads its own phrasings back


def test_reframe_gives_other_phrasings_of_one_request_and_nothing_without_a_frame():
    rng = random.Random(0)
    out = reframe("How do I bake sourdough bread at home?", "en", rng, k=3)
    assert len(out) == 3 and len(set(out)) == 3
    assert all("bake sourdough bread at home" in o and o != "How do I bake sourdough bread at home?" for o in out)
    assert reframe("The weather was lovely in the mountains yesterday.", "en", rng) == []
    zh = reframe("怎么在家里烤面包？", "zh", rng, k=2)
    assert len(zh) == 2 and all("在家里烤面包" in o for o in zh)
