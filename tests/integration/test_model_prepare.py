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


def test_the_engine_reads_its_model_from_the_models_dir(tmp_path):
    """Found by an outside probe: with SEMCACHE_MODELS_DIR set, the engine still prepared SmolLM2 again into
    <data dir>/models (538 MB, about 20 s) and without its phrase store."""
    from backend_engine.loader import resolve_model_dir
    from tests.conftest import models_dir
    shared = Path(models_dir())
    prepared = resolve_model_dir("smollm2", models_dir=shared)            # where the suite prepared it
    data_dir = tmp_path / "data"
    assert resolve_model_dir("smollm2", data_dir, shared) == prepared
    assert not (data_dir / "models").exists()                           # nothing written under the data dir
    done = subprocess.run([sys.executable, "-m", "gateway.cli", "backend", "--help"], capture_output=True,
                          text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert "--models-dir" in done.stdout
