"""``gomoku-archive jobs`` on an 80-column terminal: no line longer than the terminal, file
names, job ids and words never broken across lines."""

from __future__ import annotations

import io
import re
from dataclasses import replace
from datetime import UTC, datetime

from rich.console import Console

from gomoku_archive.cli.jobs_view import render
from gomoku_archive.jobs.month_view import month_statuses
from gomoku_archive.jobs.queue_view import (
    JobOutcome,
    QueuedJob,
    QueueSnapshot,
    RunningInfo,
    WorkerSeen,
)
from gomoku_archive.profile.months import Month
from tests.unit.jobs.test_job_views import Row, published

NOW = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
FILE = "gomoku-party-2026-11-0123456789abcdef.sgf.gz"
FORCED = "export:2026-10:force:20261201T055959.123Z"
ERROR = (
    "ExportTimeout: the export took longer than its 900 s limit for 1234567 candidate games "
    "and was stopped before anything was published"
)


def screen(width: int, phase: str = "exporting") -> str:
    months = month_statuses(
        first=Month(2026, 8),
        now=NOW,
        archives=[
            replace(published("2026-11"), file_name=FILE),
            Row("2026-10", "failed", id=2, failed_at=NOW, error=ERROR),
        ],
        queue=None,
        locked_months=set(),
    )
    queue = QueueSnapshot(
        taken_at=NOW,
        queued=[
            QueuedJob(
                FORCED, "export_month", {"month": "2026-10", "force": True}, NOW, NOW, 1, True
            ),
            QueuedJob("mirror:17", "mirror_archive", {"archive_id": 17}, NOW, NOW, 0, False),
        ],
        running={FORCED: RunningInfo(FORCED, "worker-7f9c8d:4242", NOW, NOW, 1234567, 1, phase)},
        results=[
            JobOutcome(
                "export:2026-09",
                "export_month",
                False,
                3,
                NOW,
                NOW,
                NOW,
                {
                    "error": "ExportFailed",
                    "message": ERROR,
                },
            ),
        ],
        health_check="Dec-01 06:00:00 j_complete=3 j_failed=1 j_retried=0 j_ongoing=1 queued=1",
        planner_last_run={"at": NOW.isoformat(), "missing": ["2026-10"], "enqueued": ["2026-10"]},
        workers=[WorkerSeen("worker-7f9c8d:4242", NOW, NOW)],
    )
    out = io.StringIO()
    render(Console(file=out, width=width, color_system=None), queue, months)
    return out.getvalue()


def test_readable_at_80_columns() -> None:
    text = screen(80)
    assert max(len(line) for line in text.splitlines()) <= 80
    for whole in (FILE, FORCED, "mirror:17", "worker-7f9c8d:4242"):
        assert whole in text, f"{whole} was broken across lines"
    words = set(re.findall(r"[A-Za-z]+", ERROR))
    found = set(re.findall(r"[A-Za-z]+", text))
    assert words <= found, f"words broken: {words - found}"


def test_every_month_and_job_is_listed() -> None:
    text = screen(120)
    for expected in (
        "2026-11",
        "2026-10",
        "2026-08",
        "published",
        "failed",
        "missing",
        "In progress",
        "Queued",
        "Recent results",
        "last planner run",
    ):
        assert expected in text


def test_an_export_says_whether_it_is_still_counting() -> None:
    assert "counting on worker-7f9c8d:4242" in screen(120, "counting")
    assert "exporting on worker-7f9c8d:4242" in screen(120)


def test_a_result_line_fits_80_columns_whole() -> None:
    # An export's result line used to run to 82 characters and wrap its duration's unit ("s")
    # onto a line of its own.
    lines = screen(80).splitlines()
    result = next(line for line in lines if "export_month: failed" in line)
    assert result.strip().startswith("export_month: failed in 0.0 s, attempt 3, finished")
    assert len(result) <= 80
    assert all(line.strip() not in ("s", "s,") for line in lines)
