"""alembic migrations of the cache database (run with `semcache migrate`)."""
