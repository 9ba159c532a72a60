"""Two processes preparing the same model folder at once (workers starting together, a CLI beside a
server) both succeed and leave one complete folder: each writes under a name of its own."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PREPARE = """
import sys
from pathlib import Path
from backend_engine.loader import prepare_gguf, smollm2_gguf_path
print(prepare_gguf(smollm2_gguf_path(), Path(sys.argv[1])))
"""


def test_two_processes_preparing_the_engine_model_at_once_both_succeed(tmp_path):
    out = tmp_path / "lm"
    procs = [subprocess.Popen([sys.executable, "-c", PREPARE, str(out)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (stdout, stderr) in zip(procs, results):
        assert p.returncode == 0, stderr[-2000:]
        assert stdout.strip().endswith(str(out))
    assert (out / "model.safetensors").stat().st_size > 100_000_000
    assert (out / "config.json").exists() and (out / "tokenizer.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["lm"]        # no folder of either process left behind
