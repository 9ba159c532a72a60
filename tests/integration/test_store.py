"""The cache store on the real PostgreSQL and Redis (and SQLite): migrations, CRUD, lifecycle,
persistence through the index, and two replicas."""
import json
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from gateway.index import SearchFilter
from gateway.store import NewEntry, StoreConfig, open_store
from gateway.store.migrate import database_url, downgrade, make_engine, upgrade

ROOT = Path(__file__).resolve().parents[2]
DIM = 8


def vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def entry(seed: int, tenant="acme", session="s1", domain="travel_planning", version="v1", state="pending", scope="session"):
    return NewEntry(tenant=tenant, session_id=session, vector=vec(seed), tags={"intent_domain": domain},
                    answer_text=f"answer {seed}", system_prompt_version=version, context_fingerprint=f"{version}:{domain}",
                    key_facts={"money": "8000"}, state=state, scope=scope, answer_tokens=40)


def where(tenant="acme", session="s1", domain="travel_planning", version="v1"):
    return SearchFilter(tenant, session, domain, version)


@pytest.fixture(params=["postgresql", "sqlite"])
def store(request, tmp_path, pg_url, redis_url):
    url = pg_url if request.param == "postgresql" else None
    redis = redis_url if request.param == "postgresql" else None
    s = open_store(url, redis, tmp_path, StoreConfig(ready_delay_s=30.0, dim=DIM, max_entries=1000), migrate=True)
    yield s
    s.close()


def found(store, seed, **kw) -> list[str]:
    return [e["cache_id"] for e, _ in store.search(vec(seed), where(**kw), 5)]


def test_migrations_up_and_down(pg_url, tmp_path):
    for url in (database_url(pg_url, tmp_path), database_url(None, tmp_path)):
        engine = make_engine(url)
        upgrade(engine)
        assert {"cache_entries", "cache_events"} <= set(sa.inspect(engine).get_table_names())
        downgrade(engine)
        assert not {"cache_entries", "cache_events"} & set(sa.inspect(engine).get_table_names())
        upgrade(engine)
        assert "cache_entries" in sa.inspect(engine).get_table_names()
        engine.dispose()


def test_plain_postgresql_url_maps_to_the_installed_driver(tmp_path):
    assert database_url("postgresql://u@h:5432/db", tmp_path).startswith("postgresql+psycopg://")
    assert database_url(None, tmp_path) == f"sqlite:///{tmp_path / 'semcache.db'}"


def test_crud_and_stats(store):
    cid = store.write(entry(1))
    got = store.get(cid)
    assert got["state"] == "pending" and got["answer_text"] == "answer 1" and got["key_facts"] == {"money": "8000"}
    assert [e["cache_id"] for e in store.list_entries(tenant="acme")] == [cid]
    assert store.stats()["entries"] == {"pending": 1}


def test_pending_is_never_served_then_ready_after_the_delay(store):
    cid = store.write(entry(2))
    assert found(store, 2) == []
    assert store.promote_due() == []                                    # the delay has not passed
    assert store.promote_due(datetime.now(timezone.utc) + timedelta(seconds=31)) == [cid]
    assert found(store, 2) == [cid]
    assert store.get(cid)["state"] == "ready"


@pytest.mark.parametrize("signal", ["negative", "regenerate"])
def test_negative_signal_in_the_window_keeps_it_out(store, signal):
    cid = store.write(entry(3))
    store.feedback(cid, signal, session_id="s1")
    assert store.get(cid)["state"] == "invalid"
    store.promote_due(datetime.now(timezone.utc) + timedelta(seconds=31))
    assert found(store, 3) == []


def test_feedback_floor_leaves_an_entry_out_of_search(store):
    cid = store.write(entry(4, state="ready"))
    assert found(store, 4) == [cid]
    for _ in range(3):
        store.feedback(cid, "negative")
    assert store.get(cid)["feedback_score"] == -3 and found(store, 4) == []


def test_ttl_expiry(store):
    store.config.ttl_s["realtime"] = 1.0
    cid = store.write(entry(5, domain="realtime", state="ready"))
    assert found(store, 5, domain="realtime") == [cid]
    time.sleep(1.1)
    assert found(store, 5, domain="realtime") == []                    # expired entries are not served
    assert store.expire() == 1 and store.get(cid)["state"] == "invalid"


def test_never_cached_domains_are_not_indexed(store):
    store.write(entry(6, domain="medical_legal", state="ready"))       # TTL 0: written for audit, never served
    assert found(store, 6, domain="medical_legal") == []


def test_invalidation_by_version_session_tenant_domain(store):
    a = store.write(entry(10, state="ready", version="v1"))
    b = store.write(entry(11, state="ready", version="v2"))
    c = store.write(entry(12, state="ready", session="s2"))
    d = store.write(entry(13, state="ready", tenant="globex", version="v3"))
    e = store.write(entry(14, state="ready", domain="code_qa"))
    assert store.invalidate(system_prompt_version="v1") == 3           # a, c, e share v1
    assert found(store, 10) == [] and found(store, 11, version="v2") == [b]
    assert store.invalidate(tenant="globex") == 1 and found(store, 13, tenant="globex", version="v3") == []
    assert store.invalidate(session_id="s1") == 1 and found(store, 11, version="v2") == []
    with pytest.raises(ValueError):
        store.invalidate()
    assert {store.get(x)["state"] for x in (a, b, c, d, e)} == {"invalid"}


def test_scope_and_tenant_isolation(store):
    cid = store.write(entry(20, state="ready", session="s1"))
    assert found(store, 20, session="s9") == []                        # session scope by default
    assert store.promote_scope(cid)
    assert found(store, 20, session="s9") == [cid]                     # global pool of the same tenant
    assert found(store, 20, tenant="globex", session="s1") == []       # never another tenant


def test_eviction_keeps_used_entries(store):
    store.config.max_entries = 3
    ids = [store.write(entry(30 + i, state="ready")) for i in range(3)]
    store.record_hit(ids[0], saved_tokens=50)
    store.record_hit(ids[0], saved_tokens=50)
    store.feedback(ids[2], "positive")
    store.write(entry(33, state="ready"))
    states = [store.get(i)["state"] for i in ids]
    assert states == ["ready", "invalid", "ready"]                     # the unused, unrated one went
    assert store.get(ids[0])["hit_count"] == 2 and store.get(ids[0])["saved_tokens"] == 100


def replica(db, redis_url, data_dir):
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "integration" / "store_replica.py"), db or "",
                             redis_url or "", str(data_dir)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert json.loads(proc.stdout.readline())["ok"]
    return proc


def ask(proc, **cmd) -> dict:
    proc.stdin.write(json.dumps(cmd) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_entries_survive_a_restart_through_the_index(backend, tmp_path, pg_url):
    db = pg_url if backend == "postgresql" else None
    first = replica(db, None, tmp_path)
    a = ask(first, op="write", tenant="acme", session="s1", vector=vec(40).tolist(), answer="A")["cache_id"]
    ask(first, op="checkpoint")
    b = ask(first, op="write", tenant="acme", session="s1", vector=vec(41).tolist(), answer="B")["cache_id"]
    first.stdin.write(json.dumps({"op": "crash"}) + "\n")   # B is only in the database: the next start replays it
    first.stdin.flush()
    first.wait(timeout=10)
    second = replica(db, None, tmp_path)
    for cid, seed in ((a, 40), (b, 41)):
        reply = ask(second, op="wait_found", tenant="acme", session="s1", vector=vec(seed).tolist(), cache_id=cid,
                    timeout=0.1)
        assert reply["ok"] and reply["indexed"] == 2
    ask(second, op="exit")
    second.wait(timeout=10)
    assert (tmp_path / "index" / "index.bin").exists()


def test_two_replicas_see_ready_entries_and_invalidations_within_a_second(tmp_path, pg_url, redis_url):
    other = replica(pg_url, redis_url, tmp_path / "b")
    store = open_store(pg_url, redis_url, tmp_path / "a", StoreConfig(ready_delay_s=0.0, dim=DIM), migrate=True)
    try:
        cid = store.write(entry(50, state="ready"))
        seen = ask(other, op="wait_found", tenant="acme", session="s1", vector=vec(50).tolist(), cache_id=cid)
        assert seen["ok"] and seen["after_s"] < 1.0
        mine = ask(other, op="write", tenant="acme", session="s1", vector=vec(51).tolist(), answer="from B")
        deadline = time.monotonic() + 1.0
        while mine["cache_id"] not in found(store, 51) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert mine["cache_id"] in found(store, 51)
        store.invalidate(cache_id=cid)
        gone = ask(other, op="wait_found", tenant="acme", session="s1", vector=vec(50).tolist(), cache_id=cid,
                   present=False)
        assert gone["ok"] and gone["after_s"] < 1.0
    finally:
        ask(other, op="exit")
        other.wait(timeout=10)
        store.close()


def test_a_promotion_pass_reaches_the_other_replica_as_one_message(tmp_path, pg_url, redis_url):
    import redis
    other = replica(pg_url, redis_url, tmp_path / "b")
    store = open_store(pg_url, redis_url, tmp_path / "a", StoreConfig(ready_delay_s=30.0, dim=DIM), migrate=True)
    channel = redis.Redis.from_url(redis_url).pubsub(ignore_subscribe_messages=True)
    channel.subscribe("semcache:events")
    channel.get_message(timeout=0.5)                  # the subscription is live before anything is published
    try:
        ids = [store.write(entry(60 + i)) for i in range(12)]
        seqs = {store.get(cid)["seq"] for cid in ids}
        promoted = store.promote_due(now=datetime.now(timezone.utc) + timedelta(seconds=31))
        assert set(ids) <= set(promoted)
        carrying, deadline = [], time.monotonic() + 3.0
        while sum(len(m) for m in carrying) < len(seqs) and time.monotonic() < deadline:
            message = channel.get_message(timeout=0.1)
            if message:
                ours = [e for e in json.loads(message["data"]).get("events", []) if e.get("seq") in seqs]
                if ours:
                    carrying.append(ours)
        assert [len(m) for m in carrying] == [12]     # one message, not one per entry
        assert all(e["kind"] == "ready" and "vector_b64" in e for e in carrying[0])
        for i, cid in enumerate(ids):
            seen = ask(other, op="wait_found", tenant="acme", session="s1", vector=vec(60 + i).tolist(), cache_id=cid)
            assert seen["ok"], (i, seen)
            assert store.hot.get(cid)["state"] == "ready"
    finally:
        channel.close()
        ask(other, op="exit")
        other.wait(timeout=10)
        store.close()


def test_cli_migrate_and_index_rebuild(pg_url, tmp_path):
    env = {**__import__("os").environ, "SEMCACHE_DATABASE_URL": pg_url, "SEMCACHE_DATA_DIR": str(tmp_path)}
    run = lambda *args: subprocess.run([sys.executable, "-m", "gateway.cli", *args], cwd=ROOT, env=env,  # noqa: E731
                                       capture_output=True, text=True, timeout=120)
    up = run("migrate")
    assert up.returncode == 0 and "upgraded to head" in up.stdout
    store = open_store(pg_url, None, tmp_path, StoreConfig(dim=384), migrate=False)
    wide = lambda seed, **kw: NewEntry(**{**entry(seed, **kw).__dict__,  # noqa: E731
                                          "vector": np.resize(vec(seed), 384) / np.linalg.norm(np.resize(vec(seed), 384))})
    store.write(wide(60, state="ready"))
    store.write(wide(61))                                            # pending: not indexed
    with pytest.raises(ValueError, match="384-d"):
        store.write(entry(62))                                       # wrong dimension: refused, nothing written
    store.close()
    rebuilt = run("index", "rebuild")
    assert rebuilt.returncode == 0 and "1 searchable entries" in rebuilt.stdout, rebuilt.stderr
    down = run("migrate", "--down")
    assert down.returncode == 0
    engine = make_engine(database_url(pg_url, tmp_path))
    assert "cache_entries" not in sa.inspect(engine).get_table_names()
    engine.dispose()


def test_catch_up_converges_an_index_that_missed_events(store, tmp_path):
    """Another replica's events never reach this one (it has no Redis): its writes, invalidations, scope
    changes and promotions reach this index through catch_up, and a restart replays from the last sync."""
    url = store.engine.url.render_as_string(hide_password=False)
    other = open_store(url, None, tmp_path / "other", StoreConfig(ready_delay_s=0.0, dim=DIM, max_entries=1000),
                       migrate=False)

    def ready_seqs(s) -> set[int]:
        return {e["seq"] for e in s.list_entries(state="ready", limit=1000) if e["feedback_score"] >= -2}
    try:
        a = other.write(entry(70, state="ready"))
        b = store.write(entry(71, state="ready"))
        pending = store.write(entry(72))
        seq = {cid: store.get(cid)["seq"] for cid in (a, b, pending)}
        assert seq[a] not in store.index                                   # the event never arrived
        assert store.catch_up()["added"] >= 1 and set(store.index.labels()) == ready_seqs(store)
        other.invalidate(cache_id=b)                                       # a state change, not a new row
        assert other.promote_scope(a, "global")
        other.promote_due(datetime.now(timezone.utc) + timedelta(seconds=31))   # `pending` made ready over there
        changes = store.catch_up()
        assert changes["removed"] == 1 and changes["rescoped"] == 1 and changes["added"] == 1, changes
        assert set(store.index.labels()) == ready_seqs(store) == {seq[a], seq[pending]}
        assert store.index.scope_of(seq[a]) == "global"
        assert found(store, 70, session="someone-else") == [a]             # global: every session finds it
        store.checkpoint()
        c = other.write(entry(73, state="ready"))                          # after the checkpoint
    finally:
        other.close()
    store.close()
    again = open_store(url, None, tmp_path, StoreConfig(ready_delay_s=30.0, dim=DIM, max_entries=1000),
                       migrate=False)
    try:
        assert set(again.index.labels()) == ready_seqs(again) and again.get(c)["seq"] in again.index
    finally:
        again.close()


def test_search_reads_only_the_hits_at_or_above_the_floor(store):
    near_id = store.write(entry(70, state="ready"))
    store.write(entry(71, state="ready"))
    read: list = []
    entries = store.entries
    store.entries = lambda hits: read.append(list(hits)) or entries(hits)
    hits = store.nearest(vec(70), where(), 5)
    assert len(hits) == 2 and max(s for _, s in hits) > 0.99
    floor = sorted(s for _, s in hits)[-1] - 1e-4                    # only the exact match is that close
    assert [e["cache_id"] for e, _ in store.search(vec(70), where(), 5, min_score=floor)] == [near_id]
    assert [seq for seq, _ in read[-1]] == [hits[0][0]]
    assert store.search(vec(70), where(), 5, min_score=1.5) == [] and read[-1] == []


def test_an_idle_pooled_connection_the_server_closed_is_replaced_unseen(pg_url, tmp_path):
    from gateway.store import migrate
    engine = make_engine(database_url(pg_url, tmp_path))
    with engine.connect() as conn:
        pid = conn.execute(sa.text("SELECT pg_backend_pid()")).scalar()
    with make_engine(database_url(pg_url, tmp_path)).connect() as admin:         # a restart, as the pool sees it
        assert admin.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid}).scalar()
    time.sleep(migrate.PING_IDLE_S + 0.2)
    with engine.connect() as conn:                 # the same pooled connection, pinged: it is replaced
        assert conn.execute(sa.text("SELECT pg_backend_pid()")).scalar() != pid
    engine.dispose()
