"""The ``/ops/`` templates rendered from view data alone: every value escaped, the notices, the
rebuild buttons, the self-refresh."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from gomoku_archive.jobs.ops_view import JobOutcome, QueuedJob, QueueSnapshot, month_statuses
from gomoku_archive.profile.months import Month
from gomoku_archive.web.ops.page import (
    DASHBOARD,
    LOGIN,
    Dashboard,
    dashboard_context,
    login_context,
)
from gomoku_archive.web.pages.templating import render
from tests.unit.test_ops_view import Mirror, published

NOW = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
EVIL = '<script>alert("x")</script>'


def dashboard_page(data: Dashboard, *, csrf: str, flash: tuple[str, str] | None) -> str:
    return render(DASHBOARD, **dashboard_context(data, csrf=csrf, flash=flash))


def login_page(*, message: str | None = None) -> str:
    return render(LOGIN, **login_context(message=message))


def test_every_value_is_escaped() -> None:
    queue = QueueSnapshot(
        taken_at=NOW,
        queued=[QueuedJob(f"export:2026-10{EVIL}", EVIL, {"month": EVIL}, NOW, NOW, 0, False)],
        results=[
            JobOutcome(
                "export:2026-09",
                "export_month",
                False,
                1,
                NOW,
                NOW,
                NOW,
                {"error": "ExportFailed", "message": EVIL},
            )
        ],
        health_check=EVIL,
        planner_last_run={"at": EVIL, "missing": [EVIL], "error": EVIL},
    )
    months = month_statuses(
        first=Month(2026, 8), now=NOW, archives=[], queue=queue, locked_months=set()
    )
    html = dashboard_page(
        Dashboard(NOW, Month(2026, 8), months, queue, redis_error=None, database_error=EVIL),
        csrf='"><b>',
        flash=("ok", EVIL),
    )
    assert "<script>" not in html
    assert '"><b>' not in html
    assert "&lt;script&gt;" in html


def test_redis_down_notice_and_rebuild_buttons() -> None:
    months = month_statuses(
        first=Month(2026, 8), now=NOW, archives=[], queue=None, locked_months=set()
    )
    html = dashboard_page(
        Dashboard(
            NOW, Month(2026, 8), months, None, redis_error="connection refused", database_error=None
        ),
        csrf="abc",
        flash=None,
    )
    assert 'id="redis-down"' in html
    assert "Redis unreachable" in html
    assert html.count('action="/ops/rebuild"') == 1 + 3  # the free form and one per closed month
    assert 'name="csrf" value="abc"' in html


def test_login_page_has_no_secrets() -> None:
    html = login_page(message="wrong")
    assert 'type="password"' in html
    assert "wrong" in html


def test_the_s3_copy_state_shows_under_the_file() -> None:
    verified = replace(published("2026-08"), mirror=Mirror("db/a", NOW, NOW))
    failing = replace(
        published("2026-09"), mirror=Mirror(failed_at=NOW, error=f"S3 refused: {EVIL}")
    )
    months = month_statuses(
        first=Month(2026, 8),
        now=NOW,
        archives=[verified, failing],
        queue=None,
        locked_months=set(),
    )
    html = dashboard_page(
        Dashboard(NOW, Month(2026, 8), months, None, redis_error=None, database_error=None),
        csrf="abc",
        flash=None,
    )
    assert "S3 copy verified" in html
    assert "S3 mirror failed" in html
    assert "S3 refused: &lt;script&gt;" in html


def test_the_dashboard_refreshes_itself_only_while_jobs_wait_or_run() -> None:
    def page(queued: list[QueuedJob]) -> str:
        queue = QueueSnapshot(taken_at=NOW, queued=queued)
        months = month_statuses(
            first=Month(2026, 8), now=NOW, archives=[], queue=queue, locked_months=set()
        )
        data = Dashboard(NOW, Month(2026, 8), months, queue, redis_error=None, database_error=None)
        return dashboard_page(data, csrf="abc", flash=None)

    job = QueuedJob("export:2026-10", "export_month", {"month": "2026-10"}, NOW, NOW, 0, False)
    assert '<meta http-equiv="refresh" content="10">' in page([job])
    assert 'http-equiv="refresh"' not in page([])
