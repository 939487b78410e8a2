"""A failing export end to end: a real worker records the failure on the month, arq keeps the
failed result, ``/ops/`` and ``gomoku-archive jobs`` show both, and the next planner run tries
the month again. Also the ``jobs`` and ``rebuild`` commands on their own."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from gomoku_archive.db.pool import Pool
from gomoku_archive.settings import Settings
from gomoku_archive.web.app import create_app
from tests.integration.worker_support import (
    archive_states,
    cli_env,
    last_closed_month,
    run_cli,
    seed_month,
)

LAST = last_closed_month()
TOKEN = "test-ops-token-of-at-least-32-characters"


def months_of(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["month"]: m for m in document["months"]}


def burst(env: dict[str, str]) -> str:
    """Run a worker until its queue is empty; its log."""
    done = run_cli("worker", "--burst", env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
async def test_a_failing_export_is_recorded_visible_and_tried_again(
    db_dsn: str, redis_url: str, pool: Pool
) -> None:
    await seed_month(db_dsn, LAST, 50)
    good = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST)
    broken = good | {"GAMES_TABLE": "games_typo"}  # a misconfiguration: a permanent failure

    log = burst(broken)
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    [summary] = [e for e in lines if e.get("event") == "export_job"]
    assert summary["outcome"] == "failed"
    assert summary["failure"] == "permanent"
    assert summary["error"].startswith("UndefinedTableError")

    # Recorded on the month...
    assert await archive_states(db_dsn) == [(str(LAST), "failed")]
    # ... shown by `gomoku-archive jobs`...
    jobs = run_cli("jobs", "--json", env=broken)
    assert jobs.returncode == 0, jobs.stderr
    document = json.loads(jobs.stdout)
    month = months_of(document)[str(LAST)]
    assert month["state"] == "failed"
    assert month["lastFailure"]["error"].startswith("UndefinedTableError")
    [result] = document["jobs"]["recentResults"]
    assert result["id"] == f"export:{LAST}"
    assert result["success"] is False
    assert result["error"].startswith("UndefinedTableError")
    assert document["jobs"]["plannerLastRun"]["enqueued"] == [str(LAST)]

    # ... and by /ops/.
    settings = Settings(database_url=db_dsn, redis_url=redis_url, ops_token=TOKEN)
    app = create_app(replace(settings, export_first_month=LAST), pool=pool)
    async with TestClient(TestServer(app)) as client:
        page = await client.get("/ops/", headers={"Authorization": f"Bearer {TOKEN}"})
        html = await page.text()
    assert 'state-failed">failed' in html
    assert "UndefinedTableError" in html
    assert f"export:{LAST}" in html
    assert 'state-failed">failure' in html  # the result row

    # The next planner run (here: the next worker's start-up) tries again, and it works now.
    log = burst(good)
    assert '"requeued": ["' + str(LAST) + '"]' in log
    assert [s for _, s in await archive_states(db_dsn)] == ["failed", "published"]
    document = json.loads(run_cli("jobs", "--json", env=good).stdout)
    month = months_of(document)[str(LAST)]
    assert month["state"] == "published"
    assert month["lastFailure"] is None  # older than the published file
    assert month["published"]["games"] == 50


async def test_rebuild_command_queues_a_forced_export(db_dsn: str, redis_url: str) -> None:
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST)
    done = run_cli("rebuild", "--month", str(LAST), env=env)
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip()
    assert job_id.startswith(f"export:{LAST}:force:")
    again = run_cli("rebuild", "--month", str(LAST), env=env)
    assert again.stdout.strip() == job_id
    assert "already waiting" in again.stderr

    document = json.loads(run_cli("jobs", "--json", env=env).stdout)
    [queued] = document["jobs"]["queued"]
    assert (queued["id"], queued["function"]) == (job_id, "export_month")
    assert queued["kwargs"] == {"month": str(LAST), "force": True}
    assert months_of(document)[str(LAST)]["state"] == "queued"


@pytest.mark.parametrize(
    ("month", "message"),
    [
        ("2099-01", "is not closed yet"),
        ("2001-01", "is before the first published month"),
    ],
)
async def test_rebuild_command_refuses_months_it_must_not_build(
    db_dsn: str, redis_url: str, month: str, message: str
) -> None:
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=LAST)
    done = run_cli("rebuild", "--month", month, env=env)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert message in done.stderr


async def test_commands_say_clearly_when_redis_is_down(db_dsn: str, tmp_path: Path) -> None:
    env = cli_env(database_url=db_dsn, redis_url="redis://127.0.0.1:1/0", first_month=LAST)
    rebuild = run_cli("rebuild", "--month", str(LAST), env=env)
    assert rebuild.returncode == 3
    assert rebuild.stderr.startswith(
        "gomoku-archive: error: cannot reach Redis at redis://127.0.0.1:1/0"
    )
    assert "Traceback" not in rebuild.stderr
    assert rebuild.stderr.count("\n") == 1

    # `jobs` still shows what the database knows, and says what it could not read.
    jobs = run_cli("jobs", "--json", env=env)
    assert jobs.returncode == 3
    document = json.loads(jobs.stdout)
    assert document["redis"]["ok"] is False
    assert months_of(document)[str(LAST)]["state"] == "missing"
    assert "Traceback" not in jobs.stderr
    # The worker waits for Redis instead: tests/integration/test_worker_redis_start.py.


async def test_commands_say_clearly_when_the_database_is_down(redis_url: str) -> None:
    env = cli_env(
        database_url="postgresql://postgres@127.0.0.1:1/nowhere",
        redis_url=redis_url,
        first_month=LAST,
    )
    jobs = run_cli("jobs", "--json", env=env)
    assert jobs.returncode == 3
    document = json.loads(jobs.stdout)
    assert document["database"]["ok"] is False
    assert document["redis"]["ok"] is True
    assert "cannot use the database" in jobs.stderr
    worker = run_cli("worker", env=env, timeout=60)
    assert worker.returncode == 3
    assert "gomoku-archive: error: cannot use the database" in worker.stderr
    assert "Traceback" not in worker.stderr
