"""A rebuild's reason from the operator to the downloader, on the real Redis and PostgreSQL:
``rebuild --reason`` queues it in the job's arguments, the worker's ``export_month`` keeps it
with the month's build, and a rebuild that changed the file shows it on ``/database/``, in the
feed and in the manifest; one that gave the same bytes (or an earlier file back) records it for
operators only, on the row that stays published."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import feedparser
import pytest
import structlog

from gomoku_archive.db import archive_store, source
from gomoku_archive.db.month_statuses import read_month_statuses
from gomoku_archive.db.pool import Pool
from gomoku_archive.errors import InvalidRebuildReason
from gomoku_archive.jobs.status_document import status_document
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from gomoku_archive.worker.export_jobs import export_month
from tests.integration.api_support import serving
from tests.integration.rows import game_row, utc
from tests.integration.worker_support import (
    cli_env,
    close_context,
    job_context,
    run_cli,
    seed_month,
)

AUG = Month(2026, 8)
NOW = datetime(2026, 9, 2, tzinfo=UTC)
REASON = "a late game <b>arrived</b> & was scored"


async def rows_of(pool: Pool) -> list[tuple[str, str | None, str | None, bool]]:
    """Every archive row of August (not its companions), oldest first: state, its own reason,
    its last rebuild's reason, whether a rebuild is recorded on it."""
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT state, rebuild_reason, last_rebuild_reason, last_rebuild_at IS NOT NULL AS r "
            "FROM archives WHERE month = '2026-08' AND companion_of IS NULL ORDER BY id"
        )
    return [(r["state"], r["rebuild_reason"], r["last_rebuild_reason"], r["r"]) for r in rows]


async def operators_view(pool: Pool) -> dict[str, Any]:
    months = await read_month_statuses(pool, first=AUG, now=NOW, queue=None, within_seconds=10)
    document = status_document(
        now=NOW, months=months, queue=None, redis_error=None, database_error=None
    )
    [august] = [m for m in document["months"] if m["month"] == "2026-08"]
    published: dict[str, Any] = august["published"]
    return published


async def test_a_reason_follows_its_rebuild_to_the_page_the_feed_and_the_manifest(
    settings: Settings, db_dsn: str, pool: Pool
) -> None:
    await seed_month(settings.database_url, AUG, 20)
    late = uuid.uuid4()
    ctx = await job_context(settings, pool, now=NOW, job_id="export:2026-08")
    try:
        first = await export_month(ctx, "2026-08")
        ctx["job_id"] = "export:2026-08:force:20260902T000000.000Z"
        same = await export_month(ctx, "2026-08", force=True, reason="checking  the\nscores")
        assert (first["outcome"], same["outcome"]) == ("published", "unchanged")
        # The same bytes: downloaders see nothing; operators see the rebuild and its reason.
        assert await rows_of(pool) == [("published", None, "checking the scores", True)]
        view = await operators_view(pool)
        assert (view["rebuildReason"], view["lastRebuildReason"]) == (None, "checking the scores")
        assert view["lastRebuildAt"] is not None

        async with pool.acquire() as conn:  # a late game arrives: the file changes
            await source.insert_games(
                conn, "games", [game_row(id=late, finished_at=utc(2026, 8, 9))]
            )
        ctx["job_id"] = "export:2026-08:force:20260902T000100.000Z"
        with structlog.testing.capture_logs() as logs:
            changed = await export_month(ctx, "2026-08", force=True, reason=REASON)
        assert changed["outcome"] == "published"
        [line] = [e for e in logs if e["event"] == "export_job"]
        assert line["rebuild_reason"] == REASON
        assert await rows_of(pool) == [
            ("superseded", None, "checking the scores", True),
            ("published", REASON, None, False),
        ]
        async with serving(db_dsn, pool) as client:
            manifest = await (await client.get("/api/v1/database")).json()
            page = await (await client.get("/database/")).text()
            feed = await (await client.get("/api/v1/database/feed.atom")).read()
        [month] = manifest["months"]
        assert manifest["schemaVersion"] == 1
        assert month["rebuildReason"] == REASON
        assert [p["rebuildReason"] for p in month["previousFiles"]] == [None]
        assert "arrived</b> & was" not in page
        assert "a late game &lt;b&gt;arrived&lt;/b&gt; &amp; was scored" in page
        entries = feedparser.parse(feed).entries
        assert entries[0].title == "2026-08 rebuilt: 21 games"
        assert entries[0].summary.endswith(f"Reason for the rebuild: {REASON}")

        async with pool.acquire() as conn:  # it was a test game after all: the first file again
            await conn.execute("DELETE FROM games WHERE id = $1", late)
        ctx["job_id"] = "export:2026-08:force:20260902T000200.000Z"
        restored = await export_month(ctx, "2026-08", force=True, reason="the late game was a test")
        assert restored["outcome"] == "restored"
        # The restored file keeps the reason it was first built for (none: the planner's);
        # the restore's own reason is the operators'.
        assert await rows_of(pool) == [
            ("published", None, "the late game was a test", True),
            ("superseded", REASON, None, False),
        ]
        async with pool.acquire() as conn:
            summaries = await archive_store.manifest_summaries(conn)
        [summary] = summaries
        assert summary.rebuild_reason is None
        assert [p.rebuild_reason for p in summary.previous] == [REASON]
    finally:
        await close_context(ctx)


@pytest.mark.parametrize("reason", ["r" * 201, "bidi \u202e", 42, ["a list"]])
async def test_a_job_whose_reason_is_not_plain_text_fails_for_good(
    settings: Settings, pool: Pool, reason: Any
) -> None:
    """Job arguments come from Redis: the worker checks the reason again before it builds."""
    ctx = await job_context(settings, pool, now=NOW, job_id="export:2026-08:force:x")
    try:
        with structlog.testing.capture_logs() as logs, pytest.raises(InvalidRebuildReason):
            await export_month(ctx, "2026-08", force=True, reason=reason)
    finally:
        await close_context(ctx)
    [line] = [e for e in logs if e["event"] == "export_job"]
    assert (line["outcome"], line["failure"]) == ("failed", "permanent")
    assert await rows_of(pool) == []


async def test_the_rebuild_command_queues_the_reason(db_dsn: str, redis_url: str) -> None:
    env = cli_env(database_url=db_dsn, redis_url=redis_url, first_month=AUG)
    done = run_cli("rebuild", "--month", "2026-08", "--reason", "  scores\nfixed ", env=env)
    assert done.returncode == 0, done.stderr
    again = run_cli("rebuild", "--month", "2026-08", "--reason", "another", env=env)
    assert "keeps the reason it was queued with" in again.stderr
    document = json.loads(run_cli("jobs", "--json", env=env).stdout)
    [queued] = document["jobs"]["queued"]
    assert queued["kwargs"] == {"month": "2026-08", "force": True, "reason": "scores fixed"}

    for bad, message in [("x" * 201, "at most 200 characters"), ("a\u202eb", "U+202E")]:
        refused = run_cli("rebuild", "--month", "2026-08", "--reason", bad, env=env)
        assert refused.returncode == 2
        assert refused.stderr.count("\n") == 1 and message in refused.stderr
        assert "Traceback" not in refused.stderr
    document = json.loads(run_cli("jobs", "--json", env=env).stdout)
    assert len(document["jobs"]["queued"]) == 1, "nothing more was queued"
