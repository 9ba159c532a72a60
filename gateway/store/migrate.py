"""Database URLs and alembic upgrades, run in-process (`semcache migrate`, and `serve` at start-up).

On PostgreSQL every upgrade and downgrade runs under a session-level advisory
lock on a fixed key, so gateways, workers and `semcache migrate` started at the
same time against one database migrate it one after the other: the first
upgrades, the others wait, then find the schema at head and do nothing.
"""
from __future__ import annotations

import contextlib
import logging
import time
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import DisconnectionError, SQLAlchemyError

log = logging.getLogger("semcache.gateway")

# The alembic scripts are the top-level `migrations` package, installed next to `gateway` (in the source tree
# and in site-packages alike), so an installed wheel finds its own copy, never a source tree's.
MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"
# pg_advisory_lock key of schema migrations (advisory locks are per database): "semcache" in ASCII
MIGRATION_LOCK_KEY = 0x73656D6361636865
PING_IDLE_S = 1.0        # a pooled PostgreSQL connection idle this long is pinged before use (_ping_when_idle)


class SchemaNotCurrent(ValueError):
    """The database's schema is not the one this version needs; the message says what to run (one line)."""


def database_url(url: str | None, data_dir: Path) -> str:
    """The SQLAlchemy URL: SQLite in the data dir by default; plain postgresql:// maps to psycopg 3."""
    if not url:
        data_dir.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{data_dir / 'semcache.db'}"
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _wal(dbapi_connection, _record):          # concurrent readers while one process writes
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=5000")
            cursor.close()
        return engine
    # a database that stops answering must fail a request in seconds (the cache then fails open), not hang it
    connect_args = {"connect_timeout": 5} if url.startswith("postgresql") and "connect_timeout" not in url else {}
    engine = create_engine(url, pool_size=10, max_overflow=20, pool_timeout=5, connect_args=connect_args)
    _ping_when_idle(engine)
    return engine


def _ping_when_idle(engine: Engine, idle_s: float = PING_IDLE_S) -> None:
    """Ping a pooled connection at checkout only when it sat idle for `idle_s`. A connection in steady use
    is not pinged: a ping per checkout (SQLAlchemy's `pool_pre_ping`) is a round trip per store call under
    load, and a connection that breaks while in use fails its statement, which marks the whole pool stale
    (SQLAlchemy invalidates it on a disconnect error) and the request fails open. An idle one is the one
    that a database restart or an idle timeout closed unseen: the ping finds it, and the pool connects again
    before the request uses it."""

    @event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_connection, record):
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection, record, _proxy):
        if time.monotonic() - record.info.get("idle_since", float("inf")) < idle_s:
            return
        try:
            cursor = dbapi_connection.cursor()
            try:
                cursor.execute("SELECT 1")
            finally:
                cursor.close()
        except Exception as exc:
            # the pool drops this connection and checks out another, or connects anew
            raise DisconnectionError(f"stale pooled connection: {exc.__class__.__name__}") from exc


def alembic_config(url: str) -> Config:
    if not (MIGRATIONS / "env.py").is_file():
        raise FileNotFoundError(f"the alembic migrations are missing from this installation ({MIGRATIONS}); "
                                "reinstall semcache-gateway")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def shown_url(engine: Engine) -> str:
    """The URL as the operator wrote it (no driver suffix), password hidden."""
    return engine.url.set(drivername=engine.url.get_backend_name()).render_as_string(hide_password=True)


@contextlib.contextmanager
def migration_lock(engine: Engine):
    """A connection holding the migration lock: pg_advisory_lock(MIGRATION_LOCK_KEY) on PostgreSQL (waits for
    another process's migration to finish); on SQLite a plain connection (the file lock serialises writers)."""
    with engine.connect() as connection:
        if engine.dialect.name != "postgresql":
            yield connection
            return
        key = {"key": MIGRATION_LOCK_KEY}
        if not connection.execute(text("SELECT pg_try_advisory_lock(:key)"), key).scalar():
            log.info("waiting for another process's schema migration (PostgreSQL advisory lock)",
                     extra={"fields": {"database": shown_url(engine), "lock_key": MIGRATION_LOCK_KEY}})
            connection.execute(text("SELECT pg_advisory_lock(:key)"), key)
        connection.commit()
        try:
            yield connection
        finally:
            try:
                connection.rollback()
                connection.execute(text("SELECT pg_advisory_unlock(:key)"), key)
                connection.commit()
            except SQLAlchemyError:           # the connection is gone, and its session-level lock with it
                pass


def _run(engine: Engine, action, revision: str) -> None:
    config = alembic_config(engine.url.render_as_string(hide_password=False))
    with migration_lock(engine) as connection:
        with connection.begin():
            config.attributes["connection"] = connection
            try:
                action(config, revision)
            except CommandError as exc:       # e.g. a revision this version does not know (a newer database)
                raise SchemaNotCurrent(f"cannot migrate the database {shown_url(engine)}: {exc}") from None


def upgrade(engine: Engine, revision: str = "head") -> None:
    _run(engine, command.upgrade, revision)


def downgrade(engine: Engine, revision: str = "base") -> None:
    _run(engine, command.downgrade, revision)


def schema_revisions(engine: Engine) -> tuple[set[str], set[str], set[str]]:
    """(the database's current revisions, the heads this version's migrations lead to, all it knows)."""
    script = ScriptDirectory.from_config(alembic_config(engine.url.render_as_string(hide_password=False)))
    with engine.connect() as connection:
        current = set(MigrationContext.configure(connection).get_current_heads())
    return current, set(script.get_heads()), {r.revision for r in script.walk_revisions()}


def check_schema(engine: Engine) -> None:
    """Raise SchemaNotCurrent unless the database is at this version's head revision."""
    current, heads, known = schema_revisions(engine)
    if current == heads:
        return
    shown = ", ".join(sorted(current)) or "none (no semcache tables)"
    if current - known:
        raise SchemaNotCurrent(f"the database {shown_url(engine)} is at schema revision {shown}, which this "
                               f"version of semcache does not know (its newest is {', '.join(sorted(heads))}); "
                               "run the semcache version that migrated it, or a newer one")
    raise SchemaNotCurrent(f"the database {shown_url(engine)} is at schema revision {shown}, this version needs "
                           f"{', '.join(sorted(heads))}; run `semcache migrate` (or start `semcache serve` "
                           "without --no-migrate)")


def prepare_database(url: str, migrate: bool = True) -> str:
    """What `semcache serve` does before it serves: upgrade to head under the migration lock (`migrate`), or
    check that the schema is current. Errors are one line (ValueError) naming the database and what to run.
    Returns the database URL, password hidden."""
    engine = make_engine(url)
    try:
        (upgrade if migrate else check_schema)(engine)
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise ValueError(f"cannot {'migrate' if migrate else 'check'} the database {shown_url(engine)}: "
                         f"{reason}") from None
    finally:
        engine.dispose()
    return shown_url(engine)
