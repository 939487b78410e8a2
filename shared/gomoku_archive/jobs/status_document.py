"""The operators' view as one JSON document: ``gomoku-archive jobs --json`` and
``GET /ops/api/status`` both send it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from gomoku_archive.jobs.ids import parse_job_id
from gomoku_archive.jobs.month_view import (
    ArchiveFacts,
    MonthStatus,
    RangeFacts,
    RunningRangeFacts,
    games_per_second,
    seconds_left,
    shown_counts,
)
from gomoku_archive.jobs.queue_view import QueuedJob, QueueSnapshot, parse_health_check


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat().replace("+00:00", "Z")


def _rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def ranges_document(
    build: RangeFacts, now: datetime, running: Sequence[RunningRangeFacts] = ()
) -> dict[str, Any]:
    rate, left = games_per_second(build, now), seconds_left(build, now)
    shown_running, stalled = shown_counts(build)
    return {
        "archiveId": build.archive_id,
        "startedAt": _iso(build.created_at),
        "underWay": build.under_way,
        "ranges": build.ranges,
        "done": build.done,
        "running": shown_running,
        "stalled": stalled,
        "queued": build.queued,
        "failed": build.failed,
        "candidates": build.planned,
        "candidatesDone": build.candidates_done,
        "gamesPerSecond": None if rate is None else round(rate, 1),
        "secondsLeft": None if left is None else round(left),
        "waits": {
            "medianSeconds": _rounded(build.wait_median),
            "longestSeconds": _rounded(build.wait_max),
            "oldestQueuedSeconds": _rounded(build.oldest_waiting),
        },
        "runningRanges": [
            {
                "range": r.seq,
                "worker": r.worker,
                "attempt": r.attempt,
                "waitedSeconds": _rounded(r.waited_seconds),
                "startedAt": _iso(r.started_at),
                "heartbeatAt": _iso(r.heartbeat_at),
                "candidatesDone": r.candidates_done,
                "planned": r.planned,
                "stale": r.stale,
            }
            for r in running
        ],
    }


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
        "rebuildReason": row.rebuild_reason,
        "lastRebuildAt": _iso(row.last_rebuild_at),
        "lastRebuildReason": row.last_rebuild_reason,
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
        "ranges": None
        if status.ranges is None
        else ranges_document(status.ranges, now, status.running_ranges),
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
                "phase": info.phase,
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
