"""tests/services.py: where the suite's PostgreSQL and Redis come from, and the loud reason when neither the
configured server nor a throwaway one can be had."""
import pytest

from tests import services
from tests.conftest import free_port


def test_urls_keep_everything_but_what_is_replaced():
    url = "postgresql://user:secret@db.example:6543/postgres?sslmode=disable"
    assert services.host_port(url) == ("db.example", 6543)
    assert services.host_port("postgresql://postgres@127.0.0.1/postgres") == ("127.0.0.1", 5432)
    assert services.host_port("redis://127.0.0.1/0") == ("127.0.0.1", 6379)
    assert services.with_host_port(url, "127.0.0.1", 7000) == \
        "postgresql://user:secret@127.0.0.1:7000/postgres?sslmode=disable"
    assert services.with_database(url, "semcache_x") == \
        "postgresql://user:secret@db.example:6543/semcache_x?sslmode=disable"
    assert services.with_host_port("redis://127.0.0.1:6379/0", "127.0.0.1", 1) == "redis://127.0.0.1:1/0"


def test_configured_urls_come_from_the_environment(monkeypatch):
    monkeypatch.delenv(services.PG_URL_VARIABLE, raising=False)
    monkeypatch.delenv(services.REDIS_URL_VARIABLE, raising=False)
    assert services.configured_pg_url() == "postgresql://postgres@127.0.0.1:5432/postgres"
    assert services.configured_redis_url() == "redis://127.0.0.1:6379/0"
    monkeypatch.setenv(services.PG_URL_VARIABLE, "postgresql://postgres@127.0.0.1:1/postgres")
    assert services.configured_pg_url().endswith(":1/postgres")


def test_nothing_configured_and_nothing_to_start_is_loud(monkeypatch):
    monkeypatch.setenv(services.PG_URL_VARIABLE, f"postgresql://postgres@127.0.0.1:{free_port()}/postgres")
    monkeypatch.setenv(services.REDIS_URL_VARIABLE, f"redis://127.0.0.1:{free_port()}/0")
    monkeypatch.setattr(services, "pg_binaries", lambda: (None, "no initdb anywhere"))
    monkeypatch.setattr(services, "redis_server_binary", lambda: (None, "no redis-server anywhere"))
    url, note = services._find_or_start("postgresql")
    assert url is None
    assert note.startswith("NO POSTGRESQL FOR THE TESTS: nothing answers at postgresql://") and \
        "no initdb anywhere" in note and "SEMCACHE_TEST_PG_URL" in note and "Debian package postgresql" in note
    url, note = services._find_or_start("redis")
    assert url is None and note.startswith("NO REDIS FOR THE TESTS") and "no redis-server anywhere" in note


def test_a_throwaway_postgresql_and_redis_start_and_stop():
    """What the suite does when nothing answers where configured (skipped where no server can be had)."""
    try:
        pg = services.PostgresServer(user="semcache")
    except services.Unavailable as exc:
        pytest.skip(str(exc))
    try:
        import psycopg
        database = pg.create_database("semcache")
        assert database.startswith("postgresql://semcache@127.0.0.1:")
        with psycopg.connect(database) as conn:
            assert conn.execute("SELECT current_user").fetchone()[0] == "semcache"
    finally:
        pg.stop()
    assert pg.proc.poll() is not None and not pg.root.exists()
    try:
        redis_server = services.RedisServer()
    except services.Unavailable as exc:
        pytest.skip(str(exc))
    try:
        import redis
        client = redis.Redis.from_url(redis_server.url)
        assert client.ping()
        redis_server.kill()
        redis_server.start()                          # back on the same port, empty
        assert redis.Redis.from_url(redis_server.url).ping()
    finally:
        redis_server.stop()
    assert redis_server.proc.poll() is not None
