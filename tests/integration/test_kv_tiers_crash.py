"""Crash safety of the disk KV tier: kill -9 the engine while it writes block files, damage some files,
restart, and check that only intact blocks are served (outputs equal a run without tiers), while the
damaged ones are detected by their checksum, skipped, counted and deleted."""
import json
import os
import signal
import threading
import time

import httpx
import torch

from backend_engine import EngineConfig, LLMEngine, SamplingParams
from backend_engine.disk_tier import decode_file
from backend_engine.loader import load_model
from tests.conftest import RunningServer

ARGS = ["backend", "--model", "demo", "--num-blocks", "16", "--max-model-len", "1024", "--kv-host-tier", "0",
        "--kv-disk-tier", "64MiB", "--kv-disk-dtype", "fp", "--kv-tier-policy", "load", "--speculative", "off"]


def prompts(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(100, 500, (100,), generator=g).tolist() for _ in range(n)]


def complete(url, prompt):
    r = httpx.post(url + "/v1/completions", json={"prompt": prompt, "max_tokens": 6, "temperature": 0},
                   timeout=60)
    r.raise_for_status()
    return r.json()


def metric(url, name):
    for line in httpx.get(url + "/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise KeyError(name)


def first_blocks(tier_dir):
    """Files holding the first block of a chain (a lookup always reads these first)."""
    out = []
    for path in sorted(tier_dir.glob("*.kvb")):
        raw = path.read_bytes()
        size = int.from_bytes(raw[8:12], "little")
        if json.loads(raw[12:12 + size])["parent"] is None:
            out.append(path)
    return out


def test_kill_while_writing_then_restart_serves_only_intact_blocks(tmp_path):
    sessions = prompts(12)
    server = RunningServer(ARGS + ["--data-dir", str(tmp_path)])
    stop = threading.Event()

    def traffic():                      # keeps the pool turning over: evicted blocks are written to disk
        i = 0
        while not stop.is_set():
            try:
                complete(server.url, sessions[i % len(sessions)] + [7] * (i % 3))
            except httpx.HTTPError:
                return
            i += 1

    worker = threading.Thread(target=traffic)
    worker.start()
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("kv_tier/*/*.kvb"))) < 30 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(server.proc.pid, signal.SIGKILL)         # mid-traffic: files may be half written
    stop.set()
    worker.join(timeout=30)
    server.proc.wait(timeout=10)
    server.log.close()

    (tier_dir,) = (tmp_path / "kv_tier").iterdir()          # one folder per model identity
    heads = first_blocks(tier_dir)
    assert len(heads) >= 4
    torn, flipped = heads[0], heads[1]
    torn.write_bytes(torn.read_bytes()[:-100])                    # a torn write
    raw = bytearray(flipped.read_bytes())
    raw[-40] ^= 0x01                                              # one flipped bit in the payload
    flipped.write_bytes(bytes(raw))
    (tier_dir / ".deadbeef.kvb.1.tmp").write_bytes(b"partial")   # what a killed writer leaves

    reference = LLMEngine(EngineConfig(model="demo", num_blocks=64, max_model_len=1024, kv_host_tier=0),
                          load_model("demo", max_model_len=1024))
    expected = [r["token_ids"] for r in reference.generate(sessions, SamplingParams(max_tokens=6, temperature=0))]

    server = RunningServer(ARGS + ["--data-dir", str(tmp_path)])
    try:
        assert not list(tier_dir.glob("*.tmp"))
        outputs = [complete(server.url, p) for p in sessions]
        exp_text = [reference.tokenizer.decode(t, skip_special_tokens=True) for t in expected]
        assert [o["choices"][0]["text"] for o in outputs] == exp_text
        cached = [o["usage"]["prompt_tokens_details"]["cached_tokens"] for o in outputs]
        assert sum(c > 0 for c in cached) >= 2                    # intact blocks were served from disk
        assert metric(server.url, "semcache_engine_kv_tier_corrupt_files_total") >= 2
        assert metric(server.url, 'semcache_engine_kv_tier_hits_blocks_total{tier="disk"}') > 0
        for path in (torn, flipped):    # deleted when found; if there again, rewritten whole by a later eviction
            if path.exists():
                decode_file(path.read_bytes())
    finally:
        server.stop()
