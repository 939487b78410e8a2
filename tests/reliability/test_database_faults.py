"""PostgreSQL backends terminated under an export and under a download (issue 12, failure 1).

An export whose reader, writer or both lose their backend must fail as a transient failure
(retried, then published), record its failure on its own row with the real error, and leave no
``building`` row or chunks behind; the CLI says so in one line and exits 3. A download whose
backend is terminated mid-query must be an aborted transfer, never a short 200."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import asyncpg
import pytest
from arq import Retry

from shared.db.pool import Pool
from shared.months import Month
from shared.settings import Settings
from tests.integration.api_support import publish_bytes, random_bytes, running_server
from tests.integration.worker_support import (
    WorkerProcess,
    cli_env,
    close_context,
    job_context,
    last_closed_month,
    seed_month,
    wait_until,
    workers,
)
from tests.reliability.fault_support import (
    archive_rows,
    fetchval,
    leftovers,
    streaming_backends,
    terminate,
)
from workers.jobs import export_month
from workers.retry_policy import FIRST_DELAY_SECONDS

AUG = Month(2026, 8)
AUG_KEY = 202608
TARGETS = ("reader", "writer", "all")
REAL_ERRORS = (
    "AdminShutdownError",
    "ConnectionDoesNotExistError",
    "DatabaseConnectionLost",  # an idle pooled session ended: asyncpg keeps no reason
)
SUMMARY: dict[str, list[str]] = {}


def pids_of(backends: object, target: str) -> list[int]:
    reader, writer = backends.reader, backends.writer  # type: ignore[attr-defined]
    return {"reader": [reader], "writer": [writer], "all": [reader, writer]}[target]


async def seed_big_month(dsn: str, month: Month = AUG) -> int:
    """A month whose export takes a few seconds and writes several chunk batches."""
    return await seed_month(dsn, month, 1500, copies=6)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
async def test_a_worker_export_that_loses_its_backend_is_retried_and_leaves_nothing(
    settings: Settings, pool: Pool, target: str
) -> None:
    dsn = settings.database_url
    await seed_big_month(dsn)
    from datetime import UTC, datetime

    now = datetime(2026, 9, 2, tzinfo=UTC)
    ctx = await job_context(settings, pool, now=now, job_id="export:2026-08", job_try=1)
    try:
        job = asyncio.create_task(export_month(ctx, "2026-08"))
        backends = await streaming_backends(dsn, AUG_KEY, seconds=60)
        await asyncio.sleep(0.5)  # well into the stream
        await terminate(dsn, pids_of(backends, target))
        with pytest.raises(Retry) as retry:
            await job
        assert retry.value.defer_score == FIRST_DELAY_SECONDS * 1000
        after_fault = await leftovers(dsn)
        rows = await archive_rows(dsn)
        ctx["job_try"] = 2
        second = await export_month(ctx, "2026-08")
    finally:
        await close_context(ctx)
    assert after_fault == {"building": 0, "orphan_chunks": 0}, rows
    [(month, state, error)] = rows
    assert (month, state) == ("2026-08", "failed")
    assert error is not None and error.startswith(REAL_ERRORS), error
    assert "InterfaceError" not in error
    assert second["outcome"] == "published"
    assert await leftovers(dsn) == {"building": 0, "orphan_chunks": 0}
    SUMMARY.setdefault("worker", []).append(f"{target}: {error.split(':')[0]}, retried, published")


def error_lines(stderr: str) -> list[str]:
    """stderr without the JSON log lines: what a person reads."""
    return [line for line in stderr.splitlines() if not line.startswith("{")]


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
async def test_a_cli_export_that_loses_its_backend_says_so_in_one_line(
    db_dsn: str, redis_url: str, target: str
) -> None:
    await seed_big_month(db_dsn)
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=AUG)
    proc = subprocess.Popen(
        [sys.executable, "-m", "shared.cli.main", "export", "--month", str(AUG)],
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        backends = await streaming_backends(db_dsn, AUG_KEY, seconds=60)
        await asyncio.sleep(0.5)
        await terminate(db_dsn, pids_of(backends, target))
        stdout, stderr = await asyncio.to_thread(proc.communicate, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, stderr
    [line] = error_lines(stderr)
    assert line.startswith("gomoku-archive: error: lost the database connection"), line
    for internal in ("Traceback", "InterfaceError", "asyncpg", "pool", "__aexit__", "Error:"):
        assert internal not in line, line
    assert stdout == ""
    assert await leftovers(db_dsn) == {"building": 0, "orphan_chunks": 0}, stderr
    [(_, state, error)] = await archive_rows(db_dsn)
    assert state == "failed" and error is not None and error.startswith(REAL_ERRORS)
    SUMMARY.setdefault("cli", []).append(f"{target}: exit 3, {line!r}")
