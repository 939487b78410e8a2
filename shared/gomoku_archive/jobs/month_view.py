"""Every month's state as operators see it, decided from archive rows, a queue snapshot, the
month locks held in PostgreSQL and the ranges of the builds under way. The dashboard (``/ops/``)
and ``gomoku-archive jobs`` read the data (``gomoku_archive.db.month_statuses``) and hand it
here, so both show the same states."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from gomoku_archive.jobs.ids import export_month_of, parse_job_id
from gomoku_archive.jobs.queue_view import QueuedJob, QueueSnapshot
from gomoku_archive.profile.months import Month, closed_months

MonthState = Literal["missing", "queued", "building", "published", "failed"]
"""One word per month, in the order an operator cares about: a build under way outranks a queued
job, which outranks what the tables already say."""


class MirrorFacts(Protocol):
    """What the S3 mirror recorded (``gomoku_archive.db.archive_store.MirrorRecord``)."""

    @property
    def bucket(self) -> str | None: ...
    @property
    def key(self) -> str | None: ...
    @property
    def verified_at(self) -> datetime | None: ...
    @property
    def checked_at(self) -> datetime | None: ...
    @property
    def failed_at(self) -> datetime | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def cdn_url(self) -> str | None: ...
    @property
    def cdn_verified_at(self) -> datetime | None: ...
    @property
    def cdn_error(self) -> str | None: ...
    @property
    def head_checked_at(self) -> datetime | None: ...


class ArchiveFacts(Protocol):
    """The columns of an archive row the views use (``db.archive_store.ArchiveRow``)."""

    @property
    def id(self) -> int: ...
    @property
    def month(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def file_name(self) -> str | None: ...
    @property
    def bytes(self) -> int: ...
    @property
    def games(self) -> int: ...
    @property
    def candidate_games(self) -> int: ...
    @property
    def excluded_games(self) -> int: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def finished_at(self) -> datetime | None: ...
    @property
    def published_at(self) -> datetime | None: ...
    @property
    def built_at(self) -> datetime | None: ...
    @property
    def mirror(self) -> MirrorFacts: ...
    @property
    def failed_at(self) -> datetime | None: ...
    @property
    def error(self) -> str | None: ...


class RangeFacts(Protocol):
    """A building month's ranges as the views use them (``db.range_store.BuildProgress``)."""

    @property
    def archive_id(self) -> int: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def ranges(self) -> int: ...
    @property
    def done(self) -> int: ...
    @property
    def running(self) -> int: ...
    @property
    def queued(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def planned(self) -> int:
        """The month's candidates, as its plan counted them."""

    @property
    def candidates_done(self) -> int:
        """Candidates of done ranges, and those read so far by running ones."""


def games_per_second(build: RangeFacts, now: datetime) -> float | None:
    """Candidate games exported per second since the build started."""
    seconds = (now - build.created_at).total_seconds()
    return build.candidates_done / seconds if seconds > 0 and build.candidates_done else None


def seconds_left(build: RangeFacts, now: datetime) -> float | None:
    """At the rate so far; None before there is a rate."""
    rate = games_per_second(build, now)
    return None if rate is None else max(build.planned - build.candidates_done, 0) / rate


def describe_ranges(build: RangeFacts, now: datetime) -> str:
    """One line: ``ranges 3/10 done, 2 running, 5 queued · 4,100 games/s · 2 min left``."""
    text = f"ranges {build.done}/{build.ranges} done, {build.running} running, "
    text += f"{build.queued} queued"
    if build.failed:
        text += f", {build.failed} failed (retried)"
    rate, left = games_per_second(build, now), seconds_left(build, now)
    if rate is not None and left is not None:
        text += f" · {rate:,.0f} games/s · about {_duration(left)} left"
    return text


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass(frozen=True, slots=True)
class MonthStatus:
    """One row of the operators' month table."""

    month: str
    state: MonthState
    published: ArchiveFacts | None
    superseded_versions: int
    last_failure: ArchiveFacts | None
    """The newest failed build, when it is newer than the last good build of the published
    file (or nothing is published): a failure that a later export made good is history."""
    queued_jobs: tuple[str, ...]
    running_jobs: tuple[str, ...]
    lock_held: bool
    ranges: RangeFacts | None = None
    """The ranges of the month's build under way, once planned."""


def month_statuses(
    *,
    first: Month,
    now: datetime,
    archives: Iterable[ArchiveFacts],
    queue: QueueSnapshot | None,
    locked_months: Collection[str],
    builds: Mapping[str, RangeFacts] | None = None,
) -> list[MonthStatus]:
    """Every closed month from ``first`` (plus any month that has rows), newest first.

    ``queue`` is None when Redis could not be read: the states then come from the database
    alone (a held lock still shows as ``building``)."""
    by_month: dict[str, list[ArchiveFacts]] = {}
    for row in archives:
        by_month.setdefault(row.month, []).append(row)
    queued, running = _export_jobs_by_month(queue)
    months = {str(m) for m in closed_months(first, now)}
    months |= set(by_month) | set(queued) | set(running)
    statuses = []
    for month in sorted(months, reverse=True):
        rows = by_month.get(month, [])
        published = next((r for r in rows if r.state == "published"), None)
        last_failure = _standing_failure(rows, published)
        lock_held = month in locked_months
        state = _month_state(
            building=month in running or lock_held,
            queued=month in queued,
            published=published is not None,
            failed=last_failure is not None,
        )
        statuses.append(
            MonthStatus(
                month=month,
                state=state,
                published=published,
                superseded_versions=sum(r.state == "superseded" for r in rows),
                last_failure=last_failure,
                queued_jobs=tuple(sorted(queued.get(month, ()))),
                running_jobs=tuple(sorted(running.get(month, ()))),
                lock_held=lock_held,
                ranges=(builds or {}).get(month) if state == "building" else None,
            )
        )
    return statuses


def live_builds(months: Iterable[MonthStatus]) -> frozenset[int]:
    """The builds under way: a month's ``building`` row with ranges whose coordinator holds the
    month's lock (it does from before its ranges are queued until it ends), as the watchdog
    judges them (``worker.stale_jobs``). A month whose export arq still shows in progress with
    its lock free is a dead coordinator's: its build is not under way."""
    return frozenset(s.ranges.archive_id for s in months if s.ranges is not None and s.lock_held)


def without_orphans(queue: QueueSnapshot, months: Sequence[MonthStatus]) -> QueueSnapshot:
    """``queue`` with no range job shown as running unless its build is under way
    (``live_builds``). arq keeps a dead worker's in-progress key for hours: a range job of a
    build that ended, failed or died with its workers is not running, whatever that key says;
    it shows as queued until the watchdog releases it and it ends as ``skipped``."""
    builds = live_builds(months)

    def orphan(job: QueuedJob) -> bool:
        ref = parse_job_id(job.job_id)
        return job.running and ref.kind == "range" and ref.archive_id not in builds

    if not any(orphan(job) for job in queue.queued):
        return queue
    return dataclasses.replace(
        queue,
        queued=[dataclasses.replace(j, running=False) if orphan(j) else j for j in queue.queued],
    )


def _export_jobs_by_month(
    queue: QueueSnapshot | None,
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The ids of the queued and of the running jobs of each month's export."""
    queued: dict[str, list[str]] = {}
    running: dict[str, list[str]] = {}
    for job in queue.queued if queue is not None else ():
        job_month = export_month_of(job.job_id)
        if job_month is not None:
            (running if job.running else queued).setdefault(str(job_month), []).append(job.job_id)
    return queued, running


def _standing_failure(
    rows: Iterable[ArchiveFacts], published: ArchiveFacts | None
) -> ArchiveFacts | None:
    """The month's newest failed build, unless a later export made the published file good."""
    last = max((r for r in rows if r.state == "failed"), key=_failed_when, default=None)
    if (
        last is not None
        and published is not None
        and _failed_when(last) < _last_good_build(published)
    ):
        return None
    return last


def _month_state(*, building: bool, queued: bool, published: bool, failed: bool) -> MonthState:
    """The first that holds, in ``MonthState``'s order of precedence."""
    if building:
        return "building"
    if queued:
        return "queued"
    if published:
        return "published"
    return "failed" if failed else "missing"


def _failed_when(row: ArchiveFacts) -> datetime:
    return row.failed_at or row.finished_at or row.created_at


def _last_good_build(row: ArchiveFacts) -> datetime:
    """When an export last produced the published file (its publication, at the least)."""
    moments = [m for m in (row.built_at, row.published_at, row.finished_at) if m is not None]
    return max(moments, default=row.created_at)
