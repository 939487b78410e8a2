"""The demo's database work, done in the demo's own process: create the database on the
embedded server, migrate, create the game server's table, and tell which months still need
games (so a second run seeds nothing it seeded before)."""

from __future__ import annotations

import asyncpg

from gomoku_archive.db import source
from gomoku_archive.db.migrate import migrate
from gomoku_archive.db.pool import CONNECTION_ERRORS, create_pool
from gomoku_archive.demo import DemoFailed
from gomoku_archive.profile.months import Month


async def create_database(maintenance_url: str, name: str) -> bool:
    """Create database ``name`` through the server's ``postgres`` database unless it exists;
    True when it was created."""
    try:
        conn = await asyncpg.connect(maintenance_url)
    except CONNECTION_ERRORS as exc:
        raise DemoFailed(f"cannot reach the embedded PostgreSQL: {exc}") from exc
    try:
        if await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
            return False
        await conn.execute(f'CREATE DATABASE "{name}"')  # name is ours, a constant
        return True
    finally:
        await conn.close()


async def prepare(database_url: str, games_table: str) -> set[str]:
    """Migrate, create the reference games table if missing, and return the months
    (``YYYY-MM``) in which a game finished already: the months seeded before."""
    pool = await create_pool(database_url, max_size=1)
    try:
        async with pool.acquire() as conn:
            await migrate(conn)
            await source.create_reference_table(conn, games_table)
            seeded = await source.months_with_candidates(conn, games_table)
    finally:
        await pool.close()
    return seeded


def contiguous_runs(months: list[Month]) -> list[tuple[Month, Month]]:
    """[2026-08, 2026-09, 2026-11] → [(2026-08, 2026-09), (2026-11, 2026-11)]: one
    ``seed-demo --from --to`` call per run of consecutive months."""
    runs: list[tuple[Month, Month]] = []
    for month in sorted(months):
        if runs and runs[-1][1].next() == month:
            runs[-1] = (runs[-1][0], month)
        else:
            runs.append((month, month))
    return runs
