"""What the ``/ops/`` pages show, as template contexts: ``ops/dashboard.html`` and
``ops/login.html`` (autoescaped, no scripts) render them. Built from the same view data as
``gomoku-archive jobs``; the few decisions the markup needs (may this month be rebuilt? does
the page reload itself?) are made here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from gomoku_archive.errors import InvalidMonth
from gomoku_archive.jobs.month_view import (
    ArchiveFacts,
    MonthStatus,
    describe_ranges,
    describe_running,
)
from gomoku_archive.jobs.planning import export_refusal
from gomoku_archive.jobs.queue_view import (
    JobOutcome,
    QueuedJob,
    QueueSnapshot,
    RunningInfo,
    parse_health_check,
)
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from gomoku_archive.storage.s3 import cdn_address, object_key

DASHBOARD = "ops/dashboard.html"
LOGIN = "ops/login.html"
CONFIRM_REBUILD = "ops/confirm_rebuild.html"

REFRESH_SECONDS = 10
"""How often the dashboard reloads itself while jobs are queued or running (no JavaScript)."""


@dataclass(frozen=True, slots=True)
class Dashboard:
    now: datetime
    first_month: Month
    months: Sequence[MonthStatus]
    queue: QueueSnapshot | None
    redis_error: str | None
    database_error: str | None
    settings: Settings | None = None
    """For the mirror's notes: which bucket, prefix and CDN count now."""


@dataclass(frozen=True, slots=True)
class MirrorNote:
    """One line about a published file's copy in the bucket, as the current settings see it."""

    kind: Literal["verified", "not_redirected", "failed", "pending"]
    text: str
    at: datetime | None = None
    age_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class MonthRow:
    status: MonthStatus
    rebuildable: bool
    build_seconds: float | None
    mirror: MirrorNote | None = None
    ranges: str | None = None
    """The build under way: its ranges done, running, queued and failed, rate, time left,
    waits."""
    running_ranges: tuple[str, ...] = ()
    """Each range a worker holds: which worker, how long it waited, how far it is."""


@dataclass(frozen=True, slots=True)
class RunningRow:
    job: QueuedJob
    info: RunningInfo | None


@dataclass(frozen=True, slots=True)
class ResultRow:
    result: JobOutcome
    details: str
    """What a successful job reported (games, excluded, bytes, file, reason), as text."""


def login_context(*, message: str | None = None) -> dict[str, Any]:
    return {"message": message}


def dashboard_context(
    data: Dashboard, *, csrf: str, flash: tuple[str, str] | None
) -> dict[str, Any]:
    queue = data.queue
    busy = queue is not None and bool(queue.queued)
    return {
        "data": data,
        "csrf": csrf,
        "flash": flash,
        "queue": queue,
        "health": parse_health_check(queue.health_check) if queue is not None else None,
        "months": [_month_row(status, data) for status in data.months],
        "running": [RunningRow(job, queue.running.get(job.job_id)) for job in queue.in_progress]
        if queue is not None
        else [],
        "results": [ResultRow(r, _details(r)) for r in queue.results] if queue else [],
        "refresh": REFRESH_SECONDS if busy else None,
    }


def _month_row(status: MonthStatus, data: Dashboard) -> MonthRow:
    pub = status.published
    build = None
    if pub is not None and pub.finished_at is not None:
        build = (pub.finished_at - pub.created_at).total_seconds()
    note = None
    if pub is not None and data.settings is not None:
        note = mirror_note(pub, data.settings, data.now)
    ranges = None if status.ranges is None else describe_ranges(status.ranges, data.now)
    held = tuple(describe_running(r, data.now) for r in status.running_ranges)
    return MonthRow(status, _rebuildable(status.month, data), build, note, ranges, held)


def mirror_note(row: ArchiveFacts, settings: Settings, now: datetime) -> MirrorNote | None:
    """What the dashboard says of ``row``'s copy: nothing without a bucket (an error from a
    bucket no longer configured is history), nothing for a zero-game month; an error only
    while the file has no verified copy in this bucket, with its age."""
    if settings.s3_bucket is None or row.file_name is None:
        return None
    mirror = row.mirror
    key = object_key(settings.s3_prefix, row.file_name)
    verified = (
        mirror.verified_at is not None and mirror.key == key and mirror.bucket == settings.s3_bucket
    )
    if verified:
        cdn_url = cdn_address(settings.cdn_base_url, key) if settings.cdn_base_url else None
        if cdn_url is not None and not (
            mirror.cdn_verified_at is not None and mirror.cdn_url == cdn_url
        ):
            why = mirror.cdn_error or "its CDN address has not been read anonymously yet"
            return MirrorNote(
                "not_redirected", f"S3 copy verified; downloads stay here: {why}", mirror.checked_at
            )
        return MirrorNote("verified", "S3 copy verified", mirror.checked_at)
    if mirror.error is not None and mirror.failed_at is not None:
        age = max((now - mirror.failed_at).total_seconds(), 0.0)
        return MirrorNote("failed", f"S3 mirror failed: {mirror.error}", mirror.failed_at, age)
    return MirrorNote("pending", "no verified S3 copy yet")


def _rebuildable(month: str, data: Dashboard) -> bool:
    try:
        parsed = Month.parse(month)
    except InvalidMonth:
        return False
    return export_refusal(parsed, first=data.first_month, now=data.now) is None


def _details(result: JobOutcome) -> str:
    if result.error or not isinstance(result.result, Mapping):
        return ""
    r = result.result
    return "; ".join(
        f"{k} {r[k]}" for k in ("games", "excluded", "bytes", "file", "reason") if r.get(k)
    )
