"""Cache store: SQL (durable), Redis or in-process (hot copies, events), HNSW (search)."""
from __future__ import annotations

from pathlib import Path

from gateway.store.cache_store import CacheStore, NewEntry, StoreConfig
from gateway.store.hot import LocalHotStore, RedisHotStore
from gateway.store.migrate import check_schema, database_url, make_engine, upgrade


def open_store(database: str | None, redis_url: str | None, data_dir: Path, config: StoreConfig | None = None,
               migrate: bool | None = None, redis_prefix: str = "semcache") -> CacheStore:
    """The composition point: SQLite in the data dir unless a URL is given. `migrate`: True upgrades the
    schema to head (on PostgreSQL under the migration advisory lock), False only checks it is current
    (SchemaNotCurrent says to run `semcache migrate`), None upgrades SQLite and checks PostgreSQL."""
    url = database_url(database, data_dir)
    engine = make_engine(url)
    if migrate or (migrate is None and url.startswith("sqlite")):
        upgrade(engine)
    else:
        check_schema(engine)
    config = config or StoreConfig()
    if config.index_dir is None:
        config.index_dir = data_dir / "index"
    hot = RedisHotStore(redis_url, redis_prefix) if redis_url else LocalHotStore()
    return CacheStore(engine, hot, config)


__all__ = ["CacheStore", "LocalHotStore", "NewEntry", "RedisHotStore", "StoreConfig", "open_store"]
