"""The README's first example, run as written against `semcache serve` on its embedded defaults (SmolLM2),
prints what the README says it prints: a new user's first contact with the cache."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RunningServer, fresh_dirs

README = Path(__file__).resolve().parents[2] / "README.md"


def first_example() -> tuple[str, list[str]]:
    """The Python block under "Use it", and the outcome each of its `# X-Cache reason ...` comments promises."""
    text = README.read_text()
    block = re.search(r"## Use it.*?```python\n(.*?)```", text, re.S).group(1)
    promised = [line[2:].split()[:2] for line in block.splitlines() if re.match(r"# (HIT|MISS|PARTIAL) ", line)]
    return block, promised


@pytest.mark.slow
def test_the_readme_example_prints_what_the_readme_says():
    block, promised = first_example()
    assert promised == [["MISS", "no_candidate"], ["HIT", "duplicate"]]
    server = RunningServer(["serve"], env={**fresh_dirs(), "SEMCACHE_BACKEND_URL": "embedded"},
                           ready_path="/readyz", timeout=300)
    try:
        code = block.replace("http://127.0.0.1:8000", server.url)
        assert code != block                      # the example names the port `make run` serves on
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
    finally:
        server.stop()
    # an answer may run over several lines: each printed answer starts at its "X-Cache reason" pair
    out = run.stdout.rstrip("\n")
    marks = list(re.finditer(r"^(HIT|MISS|PARTIAL) (\S+) ", out, re.M))
    assert [[m.group(1), m.group(2)] for m in marks] == promised, run.stdout
    last_line = out.rsplit("\n", 1)[1]
    answers = [out[marks[0].end():marks[1].start()].rstrip("\n"),
               out[marks[1].end():len(out) - len(last_line)].rstrip("\n")]
    assert answers[0] and answers[0] == answers[1], run.stdout      # the cached answer, as given
    assert int(last_line) >= 0
