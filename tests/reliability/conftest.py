"""The integration suite's fixtures (a fresh PostgreSQL database per test, the run's private
Redis), for the fault, race, Redis and load suites."""

from tests.integration.conftest import (  # noqa: F401 (fixtures are found by name)
    db_dsn,
    pg_dsn,
    pool,
    redis_base,
    redis_url,
    settings,
)
