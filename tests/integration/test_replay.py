"""`semcache replay` and `semcache calibrate` as users run them: real gateway processes per mode, the
bundled engine (demo model), a generated labelled set."""
import json
import os
import subprocess
import sys
import tomllib

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
    assert set(results["modes"]) == {"nocache", "exact", "semantic"}
    for mode, summary in results["modes"].items():
        assert KEYS <= set(summary), mode
        assert summary["requests"] == results["dataset"]["requests"] and summary["errors"] == 0
    assert results["modes"]["nocache"]["hit_rate"] == 0 and results["modes"]["nocache"]["prefix_reuse"] == 0
    assert results["modes"]["semantic"]["prefix_reuse"] > 0          # the session's KV prefix is reused
    assert results["modes"]["semantic"]["hit_rate"] > 0
    assert "semantic vs nocache: p50" in done.stdout and "exact vs nocache" in done.stdout
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"
    assert len(results["sweep"]) == results["dataset"]["requests"]
    config.write_text('# tuned by hand\nlog_level = "info"\n')
    refused = cli(["calibrate", str(out), "--max-false-hit", "1e-3", "--config", str(config)])
    assert refused.returncode == 1 and "--force" in refused.stderr, refused.stderr[-3000:]   # a few dozen requests
    assert "not certified" in refused.stdout and "more requests" in refused.stdout
    assert config.read_text() == '# tuned by hand\nlog_level = "info"\n'
    calibrated = cli(["calibrate", str(out), "--max-false-hit", "1e-3", "--config", str(config), "--force"])
    assert calibrated.returncode == 0, calibrated.stderr[-3000:]
    assert "upper bound" in calibrated.stdout and config.read_text().startswith("# tuned by hand")
    data = tomllib.loads(config.read_text())
    assert data["log_level"] == "info" and data["thresholds"]
    for values in data["thresholds"].values():
        assert 0.7 <= values["candidate"] <= values["accept"] < 1
    bad = cli(["calibrate", str(out), "--max-false-hit", "2"])
    assert bad.returncode == 2 and "max-false-hit" in bad.stderr
