"""What operators see: the state of every month and of the job queue, decided from archive rows,
a snapshot of arq's Redis keys and the month locks held in PostgreSQL.

Pure: the ``/ops/`` dashboard and ``gomoku-archive jobs`` read the data (``jobs.connection``,
``gomoku_archive.db``) and hand it here, so both show the same states and the same JSON document.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from gomoku_archive.jobs.ids import export_month_of, parse_job_id
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


# --- the queue, as read from Redis ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueuedJob:
    """A job in arq's queue; ``running`` when a worker holds its in-progress key."""

    job_id: str
    function: str
    kwargs: Mapping[str, Any]
    enqueued_at: datetime
    scheduled_at: datetime
    attempts: int
    """Tries started so far (arq's retry counter): 0 for a job never started."""
    running: bool


@dataclass(frozen=True, slots=True)
class RunningInfo:
    """What the worker running an export wrote about it when it started."""

    job_id: str
    worker: str
    started_at: datetime
    deadline: datetime
    candidates: int
    attempt: int


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """A finished job's result as arq keeps it for a while."""

    job_id: str
    function: str
    success: bool
    attempt: int
    enqueued_at: datetime
    started_at: datetime
    finished_at: datetime
    result: Any

    @property
    def seconds(self) -> float:
        return max((self.finished_at - self.started_at).total_seconds(), 0.0)

    @property
    def outcome(self) -> str:
        if isinstance(self.result, Mapping) and isinstance(self.result.get("outcome"), str):
            return str(self.result["outcome"])
        return "done" if self.success else "failed"

    @property
    def error(self) -> str | None:
        if self.success:
            return None
        if isinstance(self.result, Mapping):
            kind = self.result.get("error", "error")
            return f"{kind}: {self.result.get('message', '')}".rstrip(": ")
        return str(self.result)


@dataclass(frozen=True, slots=True)
class WorkerSeen:
    """A worker process that announced itself recently."""

    worker: str
    started_at: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class QueueSnapshot:
    """Everything ``/ops/`` shows from Redis, read at ``taken_at``."""

    taken_at: datetime
    queued: Sequence[QueuedJob] = ()
    running: Mapping[str, RunningInfo] = field(default_factory=dict)
    results: Sequence[JobOutcome] = ()
    health_check: str | None = None
    planner_last_run: Mapping[str, Any] | None = None
    workers: Sequence[WorkerSeen] = ()

    @property
    def waiting(self) -> list[QueuedJob]:
        return [j for j in self.queued if not j.running]

    @property
    def in_progress(self) -> list[QueuedJob]:
        return [j for j in self.queued if j.running]


_HEALTH_FIELD = re.compile(r"(j_complete|j_failed|j_retried|j_ongoing|queued)=(\d+)")


def parse_health_check(text: str | None) -> dict[str, int] | None:
    """arq's health-check record (``… j_complete=3 j_failed=0 j_retried=1 j_ongoing=1 queued=2``)
    as numbers; None when no worker wrote one recently."""
    if not text:
        return None
    return {k: int(v) for k, v in _HEALTH_FIELD.findall(text)}


# --- months -----------------------------------------------------------------------------------


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


def ranges_document(build: RangeFacts, now: datetime) -> dict[str, Any]:
    rate, left = games_per_second(build, now), seconds_left(build, now)
    return {
        "archiveId": build.archive_id,
        "startedAt": _iso(build.created_at),
        "ranges": build.ranges,
        "done": build.done,
        "running": build.running,
        "queued": build.queued,
        "failed": build.failed,
        "candidates": build.planned,
        "candidatesDone": build.candidates_done,
        "gamesPerSecond": None if rate is None else round(rate, 1),
        "secondsLeft": None if left is None else round(left),
    }


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
    queued: dict[str, list[str]] = {}
    running: dict[str, list[str]] = {}
    for job in queue.queued if queue is not None else ():
        job_month = export_month_of(job.job_id)
        if job_month is not None:
            (running if job.running else queued).setdefault(str(job_month), []).append(job.job_id)

    months = {str(m) for m in closed_months(first, now)}
    months |= set(by_month) | set(queued) | set(running)
    statuses = []
    for month in sorted(months, reverse=True):
        rows = by_month.get(month, [])
        published = next((r for r in rows if r.state == "published"), None)
        failures = [r for r in rows if r.state == "failed"]
        last_failure = max(failures, key=_failed_when, default=None)
        if (
            last_failure is not None
            and published is not None
            and _failed_when(last_failure) < _last_good_build(published)
        ):
            last_failure = None
        lock_held = month in locked_months
        state: MonthState
        if month in running or lock_held:
            state = "building"
        elif month in queued:
            state = "queued"
        elif published is not None:
            state = "published"
        elif last_failure is not None:
            state = "failed"
        else:
            state = "missing"
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


def _failed_when(row: ArchiveFacts) -> datetime:
    return row.failed_at or row.finished_at or row.created_at


def _last_good_build(row: ArchiveFacts) -> datetime:
    """When an export last produced the published file (its publication, at the least)."""
    moments = [m for m in (row.built_at, row.published_at, row.finished_at) if m is not None]
    return max(moments, default=row.created_at)


# --- the JSON document (``gomoku-archive jobs --json``, ``GET /ops/api/status``) -----------------


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _archive_doc(row: ArchiveFacts | None) -> dict[str, Any] | None:
    if row is None:
        return None
    seconds = None
    if row.finished_at is not None:
        seconds = round((row.finished_at - row.created_at).total_seconds(), 3)
    return {
        "id": row.id,
        "state": row.state,
        "file": row.file_name,
        "games": row.games,
        "candidates": row.candidate_games,
        "excluded": row.excluded_games,
        "bytes": row.bytes,
        "createdAt": _iso(row.created_at),
        "finishedAt": _iso(row.finished_at),
        "publishedAt": _iso(row.published_at),
        "failedAt": _iso(row.failed_at),
        "buildSeconds": seconds,
        "lastGoodBuildAt": _iso(row.built_at),
        "error": row.error,
        "mirror": {
            "key": row.mirror.key,
            "verifiedAt": _iso(row.mirror.verified_at),
            "checkedAt": _iso(row.mirror.checked_at),
            "failedAt": _iso(row.mirror.failed_at),
            "error": row.mirror.error,
            "headCheckedAt": _iso(row.mirror.head_checked_at),
            "cdnUrl": row.mirror.cdn_url,
            "cdnVerifiedAt": _iso(row.mirror.cdn_verified_at),
            "cdnError": row.mirror.cdn_error,
        },
    }


def month_document(status: MonthStatus, now: datetime) -> dict[str, Any]:
    return {
        "month": status.month,
        "state": status.state,
        "published": _archive_doc(status.published),
        "supersededVersions": status.superseded_versions,
        "lastFailure": _archive_doc(status.last_failure),
        "queuedJobs": list(status.queued_jobs),
        "runningJobs": list(status.running_jobs),
        "lockHeld": status.lock_held,
        "ranges": None if status.ranges is None else ranges_document(status.ranges, now),
    }


def queue_document(queue: QueueSnapshot) -> dict[str, Any]:
    def queued(job: QueuedJob) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "id": job.job_id,
            "function": job.function,
            "kind": parse_job_id(job.job_id).kind,
            "kwargs": dict(job.kwargs),
            "enqueuedAt": _iso(job.enqueued_at),
            "scheduledAt": _iso(job.scheduled_at),
            "attempts": job.attempts,
        }
        info = queue.running.get(job.job_id)
        if job.running and info is not None:
            doc |= {
                "worker": info.worker,
                "startedAt": _iso(info.started_at),
                "deadline": _iso(info.deadline),
                "candidates": info.candidates,
            }
        return doc

    return {
        "takenAt": _iso(queue.taken_at),
        "queued": [queued(j) for j in queue.waiting],
        "inProgress": [queued(j) for j in queue.in_progress],
        "recentResults": [
            {
                "id": r.job_id,
                "function": r.function,
                "success": r.success,
                "outcome": r.outcome,
                "attempt": r.attempt,
                "enqueuedAt": _iso(r.enqueued_at),
                "startedAt": _iso(r.started_at),
                "finishedAt": _iso(r.finished_at),
                "seconds": round(r.seconds, 3),
                "error": r.error,
                "result": r.result if isinstance(r.result, Mapping) else None,
            }
            for r in queue.results
        ],
        "healthCheck": {
            "record": queue.health_check,
            "counts": parse_health_check(queue.health_check),
        },
        "plannerLastRun": dict(queue.planner_last_run) if queue.planner_last_run else None,
        "workers": [
            {"worker": w.worker, "startedAt": _iso(w.started_at), "lastSeen": _iso(w.last_seen)}
            for w in queue.workers
        ],
    }


def status_document(
    *,
    now: datetime,
    months: Sequence[MonthStatus],
    queue: QueueSnapshot | None,
    redis_error: str | None,
    database_error: str | None,
) -> dict[str, Any]:
    """The whole operator view as JSON-ready data; a part that could not be read is null and
    its error says why."""
    return {
        "now": _iso(now),
        "redis": {"ok": queue is not None, "error": redis_error},
        "database": {"ok": database_error is None, "error": database_error},
        "jobs": queue_document(queue) if queue is not None else None,
        "months": [month_document(s, now) for s in months],
    }
