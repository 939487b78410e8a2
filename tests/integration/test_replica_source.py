"""The games in another database (a read replica, the game server's own): the worker and the
``export`` command read them there through ``SOURCE_DATABASE_URL``, as a role that may only
SELECT the games table, while the archive's tables are in ``DATABASE_URL``'s database, which
has no games table at all (issue 26: the worker counted the month on the archive's pool)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest

from gomoku_archive.db.migrate import migrate
from gomoku_archive.db.source import create_reference_table
from tests.integration.conftest import DB_PREFIX, PG_ADMIN_DSN
from tests.integration.worker_support import (
    WorkerProcess,
    archive_states,
    cli_env,
    last_closed_month,
    run_cli,
    seed_month,
    wait_until,
    workers,
)

pytestmark = pytest.mark.slow

LAST = last_closed_month()


def _dsn(database: str, user: str = "postgres") -> str:
    base = PG_ADMIN_DSN.rsplit("/", 1)[0].replace("postgres@", f"{user}@", 1)
    return f"{base}/{database}"


@pytest.fixture
async def reader_dsn() -> AsyncIterator[str]:
    """A database of its own holding the games, and a role that may only SELECT them there."""
    name = DB_PREFIX + "src_" + uuid.uuid4().hex[:10]
    role = "gpa_replica_reader_" + uuid.uuid4().hex[:8]
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.execute(f"CREATE ROLE {role} LOGIN")
    try:
        conn = await asyncpg.connect(_dsn(name))
        try:
            await create_reference_table(conn, "games")
            await conn.execute(f"GRANT SELECT ON games TO {role}")
        finally:
            await conn.close()
        await seed_month(_dsn(name), LAST, 200)
        yield _dsn(name, role)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f"DROP ROLE IF EXISTS {role}")
        await admin.close()


@pytest.fixture
async def archive_dsn(pg_dsn: str) -> str:
    """The archive's database: migrated, and no games table."""
    conn = await asyncpg.connect(pg_dsn)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    return pg_dsn


async def test_the_worker_and_the_command_read_the_games_from_the_source_database(
    archive_dsn: str, reader_dsn: str, redis_url: str, tmp_path: Path
) -> None:
    env = cli_env(
        database_url=archive_dsn,
        redis_url=redis_url,
        first_month=LAST,
        SOURCE_DATABASE_URL=reader_dsn,
    )
    worker = WorkerProcess(env, tmp_path / "worker.log")
    with workers(worker):

        async def ended() -> list[dict[str, object]]:
            return worker.events("export_job")

        (job,) = await wait_until(ended, seconds=90, what="the export job to end")
    assert job["outcome"] == "published", worker.output()
    assert int(str(job["games"])) > 0 and job["candidates"] == 200 + job["excluded"]
    assert await archive_states(archive_dsn) == [(str(LAST), "published")]

    done = run_cli("export", "--month", str(LAST), "--force", env=env, timeout=90)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["outcome"] == "unchanged" and summary["games"] == job["games"]
