"""The ``/ops/`` templates rendered from view data alone: every value escaped, the notices, the
rebuild buttons, the self-refresh."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from gomoku_archive.jobs.month_view import month_statuses
from gomoku_archive.jobs.queue_view import JobOutcome, QueuedJob, QueueSnapshot
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from gomoku_archive.web.ops.page import (
    DASHBOARD,
    LOGIN,
    Dashboard,
    dashboard_context,
    login_context,
)
from gomoku_archive.web.pages.templating import render
from tests.unit.jobs.test_job_views import Mirror, published

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


MIRRORED = Settings(s3_bucket="archive-bucket", s3_prefix="db/")


def mirror_page(*rows: Any, settings: Settings | None = MIRRORED) -> str:
    months = month_statuses(
        first=Month(2026, 8), now=NOW, archives=rows, queue=None, locked_months=set()
    )
    data = Dashboard(
        NOW, Month(2026, 8), months, None, redis_error=None, database_error=None, settings=settings
    )
    return dashboard_page(data, csrf="abc", flash=None)


def test_the_s3_copy_state_shows_under_the_file() -> None:
    verified = replace(published("2026-08"), mirror=Mirror("db/2026-08.sgf.gz", NOW, NOW))
    failed_at = NOW - timedelta(hours=3)
    failing = replace(
        published("2026-09"), mirror=Mirror(failed_at=failed_at, error=f"S3 refused: {EVIL}")
    )
    html = mirror_page(verified, failing)
    assert "S3 copy verified" in html
    assert "S3 mirror failed" in html
    assert "S3 refused: &lt;script&gt;" in html
    assert "(3 h ago," in html, "the error shows its age"


def test_a_mirror_error_goes_once_the_bucket_is_no_longer_configured() -> None:
    failing = replace(published("2026-09"), mirror=Mirror(failed_at=NOW, error="S3 refused"))
    assert "S3 mirror failed" in mirror_page(failing)
    html = mirror_page(failing, settings=Settings())
    assert "S3 refused" not in html and "S3 copy" not in html


def test_a_mirror_error_goes_once_the_file_is_mirrored() -> None:
    # A verified copy with an error left on the row (a later try failed after it verified,
    # or the error predates the verification): the file is mirrored, no error is shown.
    mirrored = replace(
        published("2026-09"),
        mirror=Mirror("db/2026-09.sgf.gz", NOW, NOW, failed_at=NOW, error="S3 refused"),
    )
    html = mirror_page(mirrored)
    assert "S3 copy verified" in html
    assert "S3 refused" not in html


def test_a_copy_in_another_bucket_is_not_called_verified() -> None:
    elsewhere = replace(
        published("2026-09"), mirror=Mirror("db/2026-09.sgf.gz", NOW, NOW, bucket="old-bucket")
    )
    assert "no verified S3 copy yet" in mirror_page(elsewhere)


def test_behind_a_cdn_the_page_says_why_downloads_stay_local() -> None:
    settings = replace(MIRRORED, cdn_base_url="https://cdn.example.org")
    pending = replace(published("2026-09"), mirror=Mirror("db/2026-09.sgf.gz", NOW, NOW))
    html = mirror_page(pending, settings=settings)
    assert "downloads stay here: its CDN address has not been read anonymously yet" in html
    failed = replace(
        published("2026-09"),
        mirror=Mirror("db/2026-09.sgf.gz", NOW, NOW, cdn_error="answered HTTP 403"),
    )
    assert "downloads stay here: answered HTTP 403" in mirror_page(failed, settings=settings)
    read = replace(
        published("2026-09"),
        mirror=Mirror(
            "db/2026-09.sgf.gz",
            NOW,
            NOW,
            cdn_url="https://cdn.example.org/db/2026-09.sgf.gz",
            cdn_verified_at=NOW,
        ),
    )
    html = mirror_page(read, settings=settings)
    assert "S3 copy verified" in html and "downloads stay here" not in html


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


def test_the_health_line_reads_as_words_and_says_what_it_counts() -> None:
    """ "queued 0(since the worker started" ran into the parenthesis, and "jobs completed 1"
    beside "Recent results: none" looked like a lost result: the planner's runs are counted
    there and recorded under Last planner run."""
    queue = QueueSnapshot(
        taken_at=NOW,
        health_check="Nov-02 07:59:50 j_complete=1 j_failed=0 j_retried=0 j_ongoing=0 queued=0",
    )
    months = month_statuses(
        first=Month(2026, 8), now=NOW, archives=[], queue=queue, locked_months=set()
    )
    html = dashboard_page(
        Dashboard(NOW, Month(2026, 8), months, queue, redis_error=None, database_error=None),
        csrf="abc",
        flash=None,
    )
    text = " ".join(html.split())
    assert "jobs completed 1, failed 0, retried 0, running 0, queued 0 (since the worker" in text
    assert "the planner's runs included" in text
    assert (
        "the planner's runs, which the worker's count above includes, are under Last planner"
        in text
    )


def test_the_rebuild_confirmation_keeps_its_two_targets_apart() -> None:
    html = render(
        "ops/confirm_rebuild.html",
        month="2026-09",
        csrf="abc",
        reason="",
        max_reason=200,
        message=None,
    )
    assert '<p class="actions"><button type="submit">Rebuild 2026-09</button>' in html
    assert '<a href="/ops/" class="cancel">Cancel</a></p>' in html
    layout = render("ops/login.html", **login_context(message=None))
    assert ".actions { display: flex;" in layout and "gap: 0.75rem 1.5rem" in layout


def test_a_months_rebuild_reasons_show_under_its_file_escaped() -> None:
    """Why the published file was rebuilt, the last rebuild that kept it (same bytes) with its
    reason, and a failed rebuild's reason: operators see every one, as text."""
    kept = replace(
        published("2026-09"),
        rebuild_reason=f"scores {EVIL}",
        last_rebuild_at=NOW,
        last_rebuild_reason="checking & nothing changed",
    )
    plain = replace(published("2026-08"), last_rebuild_at=NOW)
    failed = replace(
        published("2026-10"),
        state="failed",
        failed_at=NOW,
        error="boom",
        rebuild_reason="late games",
    )
    html = mirror_page(kept, plain, failed)
    text = " ".join(html.split())
    assert "<script>" not in html
    assert "rebuilt because: scores &lt;script&gt;" in text
    assert "kept this file: checking &amp; nothing changed" in text
    assert "kept this file: no reason given" in text
    assert "rebuild asked because: late games" in text


def test_the_rebuild_confirmation_asks_why_and_shows_what_was_typed() -> None:
    html = render(
        "ops/confirm_rebuild.html",
        month="2026-09",
        csrf="abc",
        reason=f'"{EVIL}',
        max_reason=200,
        message="Not queued: say why, in one line.",
    )
    assert '<input id="rebuild-reason" name="reason" value="&#34;&lt;script&gt;' in html
    assert 'maxlength="200" required' in html
    assert 'id="reason-refused">Not queued: say why, in one line.</p>' in html
    assert "<script>" not in html
