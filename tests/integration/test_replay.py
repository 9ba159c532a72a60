"""`semcache replay` and `semcache calibrate` as users run them: real gateway processes per mode, the
bundled engine (demo model), a generated labelled set."""
import json
import os
import subprocess
import sys

from tests.conftest import ROOT, models_dir

KEYS = {"requests", "p50_ms", "p95_ms", "hit_rate", "partial_rate", "false_hit_rate", "saved_prefill_tokens",
        "saved_decode_tokens", "cache_pollution"}


def cli(args, timeout=600):
    env = {**os.environ, "SEMCACHE_MODELS_DIR": models_dir()}
    return subprocess.run([sys.executable, "-m", "gateway.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_replay_and_calibrate(tmp_path):
    out, plot, config = tmp_path / "results.json", tmp_path / "results.png", tmp_path / "semcache.toml"
    done = cli(["replay", "--dataset", "generated", "--sessions", "3", "--modes", "nocache,exact,semantic",
                "--model", "demo", "--out", str(out), "--plot", str(plot), "--concurrency", "3"])
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(out.read_text())
    assert set(results["modes"]) == {"nocache", "exact", "semantic"} and results["order"] == "interleaved"
    for mode, summary in results["modes"].items():
        assert KEYS <= set(summary), mode
        assert summary["requests"] == results["dataset"]["requests"] and summary["errors"] == 0
    assert results["modes"]["nocache"]["hit_rate"] == 0 and results["modes"]["nocache"]["prefix_reuse"] == 0
    assert results["modes"]["semantic"]["prefix_reuse"] > 0          # the session's KV prefix is reused
    # the generated repeats are reworded: the pair judge serves none of them at its threshold, and nothing wrong
    assert results["modes"]["semantic"]["false_hit_rate"] in (0, 0.0, None)
    assert "semantic vs nocache: p50" in done.stdout and "exact vs nocache" in done.stdout
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"
    assert len(results["sweep"]) == results["dataset"]["requests"]
    config.write_text('# tuned by hand\nlog_level = "info"\n')
    # no request passed the gates in three sessions: calibrate says so and leaves the file alone (the refusal,
    # --force and the tomlkit edit are in tests/unit/test_replay_parts.py)
    kept = cli(["calibrate", str(out), "--max-false-hit", "1e-3", "--config", str(config), "--force"])
    assert kept.returncode == 0, kept.stderr[-3000:]
    assert "none passed the gates" in kept.stdout
    assert config.read_text() == '# tuned by hand\nlog_level = "info"\n'
    bad = cli(["calibrate", str(out), "--max-false-hit", "2"])
    assert bad.returncode == 2 and "max-false-hit" in bad.stderr
