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
    lines = run.stdout.splitlines()
    outcomes = [line.split()[:2] for line in lines[:2]]
    assert outcomes == promised, run.stdout
    assert lines[0].split(maxsplit=2)[2] == lines[1].split(maxsplit=2)[2]     # the cached answer, as given
    assert int(lines[-1]) >= 0
