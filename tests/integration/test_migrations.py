"""Schema migrations on PostgreSQL: upgrades run under an advisory lock, so gateways, workers and
`semcache migrate` started together take turns; `serve --no-migrate` (or migrate_on_start = false) refuses
an outdated schema with a one-line error that says what to run."""
import os
import subprocess
import sys
import time

import psycopg
import pytest

from gateway.store.migrate import MIGRATION_LOCK_KEY
from tests import services
from tests.conftest import ROOT, free_port

HEADS = sorted(p.name.split("_")[0] for p in (ROOT / "migrations" / "versions").glob("[0-9]*.py"))


def cli(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gateway.cli", *args], cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def revisions(database: str) -> list[str]:
    with psycopg.connect(database, connect_timeout=5) as conn:
        return [row[0] for row in conn.execute("SELECT version_num FROM alembic_version")]


def test_migrations_wait_for_the_advisory_lock_and_concurrent_ones_take_turns(pg_url, tmp_path):
    env = {"SEMCACHE_DATABASE_URL": pg_url, "SEMCACHE_DATA_DIR": str(tmp_path)}
    with psycopg.connect(pg_url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        # four at once (replicas started together), all blocked while another process holds the lock
        runs = [cli("migrate", env=env) for _ in range(4)]
        time.sleep(4.0)
        assert all(run.poll() is None for run in runs), [run.communicate() for run in runs if run.poll() is not None]
        with psycopg.connect(pg_url) as probe:
            assert probe.execute("SELECT to_regclass('alembic_version')").fetchone()[0] is None
        holder.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
        results = [(run.wait(timeout=120), *run.communicate()) for run in runs]
    assert [code for code, _, _ in results] == [0, 0, 0, 0], results
    assert any("waiting for another process's schema migration" in err for _, _, err in results), results
    assert revisions(pg_url) == HEADS[-1:]
    # the lock is released: nobody holds it now
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT pg_try_advisory_lock(%s)", (MIGRATION_LOCK_KEY,)).fetchone()[0]


def test_serve_without_migrating_refuses_an_outdated_schema_in_one_line(pg_url, tmp_path):
    env = {"SEMCACHE_DATABASE_URL": pg_url, "SEMCACHE_DATA_DIR": str(tmp_path), "SEMCACHE_BACKEND_MODEL": "demo"}
    older = cli("migrate", "--revision", HEADS[-2], env=env)
    assert older.wait(timeout=120) == 0, older.communicate()
    for args, extra in ((["--no-migrate"], {}), ([], {"SEMCACHE_MIGRATE_ON_START": "false"})):
        serve = cli("serve", "--port", str(free_port()), *args, env={**env, **extra})
        assert serve.wait(timeout=120) == 2
        out, err = serve.communicate()
        assert "Traceback" not in err, err
        last = err.strip().splitlines()[-1]
        assert last == (f"semcache: error: the database {pg_url} is at schema revision {HEADS[-2]}, this version "
                        f"needs {HEADS[-1]}; run `semcache migrate` (or start `semcache serve` without --no-migrate)")
    assert revisions(pg_url) == [HEADS[-2]]            # refused, nothing changed


def test_an_unreachable_database_is_a_one_line_error(tmp_path):
    nowhere = services.with_database(services.with_host_port(services.configured_pg_url(), "127.0.0.1",
                                                             free_port()), "semcache")
    env = {"SEMCACHE_DATABASE_URL": nowhere, "SEMCACHE_DATA_DIR": str(tmp_path)}
    for args in (["migrate"], ["serve", "--port", str(free_port())]):
        run = cli(*args, env=env)
        assert run.wait(timeout=120) == 2
        err = run.communicate()[1]
        assert "Traceback" not in err, err
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"semcache: error: cannot migrate the database {nowhere}:"), last
        assert "refused" in last.lower(), last


@pytest.mark.parametrize("migrate", [True, False])
def test_open_store_upgrades_or_checks(pg_url, tmp_path, migrate):
    from gateway.store import StoreConfig, open_store
    from gateway.store.migrate import SchemaNotCurrent
    if migrate:
        store = open_store(pg_url, None, tmp_path, StoreConfig(dim=8), migrate=True)
        store.close()
        assert revisions(pg_url) == HEADS[-1:]
    else:
        with pytest.raises(SchemaNotCurrent, match="run `semcache migrate`"):
            open_store(pg_url, None, tmp_path, StoreConfig(dim=8), migrate=False)


def test_serve_with_workers_migrates_a_fresh_database_once_before_the_workers(pg_url, demo_backend):
    """`serve --workers 2` on an empty database: the parent upgrades it (under the lock), then the workers
    start and only check the schema; both come up."""
    from tests.conftest import RunningServer, fresh_dirs
    env = {"SEMCACHE_BACKEND_URL": demo_backend.url + "/v1", "SEMCACHE_DATABASE_URL": pg_url, **fresh_dirs()}
    server = RunningServer(["serve", "--workers", "2"], env=env, ready_path="/readyz", timeout=240)
    try:
        assert revisions(pg_url) == HEADS[-1:]
        import httpx
        workers = {httpx.get(server.url + "/healthz", timeout=10).headers["x-semcache-worker"] for _ in range(20)}
        assert server.alive() and workers
    finally:
        server.stop()
    log = open(server.log.name).read()
    assert "Traceback" not in log, log
