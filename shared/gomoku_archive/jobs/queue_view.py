"""The job queue as operators see it: queued, running and finished jobs and the workers that
announced themselves, as ``gomoku_archive.queue.snapshot`` reads them from arq's Redis keys."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


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
    phase: str = "exporting"
    """``counting`` while the month is counted and planned (its candidates not known yet: 0),
    then ``exporting``."""
    run: str = ""
    """This run's own token: a later run of the same job writes another."""


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
