"""The planner's decisions, apart from the Redis and SQL that feed them: which months need an
export, and what to do about each. Pure, tested with tables."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Literal

from gomoku_archive.profile.months import Month, closed_months


def export_refusal(month: Month, *, first: Month, now: datetime) -> str | None:
    """Why ``month`` must not be exported (by the CLI, a job or a forced rebuild), or None:
    only closed months from the first published one on."""
    if month < first:
        return f"{month} is before the first published month {first}"
    if not month.is_closed(now):
        return f"{month} is not closed yet; it closes at {month.end:%Y-%m-%dT%H:%M:%SZ}"
    return None


def missing_months(first: Month, now: datetime, published: Collection[str]) -> list[Month]:
    """Closed months from ``first`` on that have no published archive, oldest first."""
    return [m for m in closed_months(first, now) if str(m) not in published]


PlanAction = Literal["enqueue", "requeue", "already_queued", "building"]


def plan_action(job_status: str, *, lock_held: bool) -> PlanAction:
    """What to do about a closed month without a published archive.

    ``job_status`` is arq's status of the month's ``export:YYYY-MM`` id: ``queued``/``deferred``
    (waiting, or waiting for a retry), ``in_progress``, ``complete`` (a kept result: a finished
    run that did not publish, e.g. a failure or a skip) or ``not_found``.
    """
    if job_status in ("queued", "deferred", "in_progress"):
        return "already_queued"
    if lock_held:
        # Another process (a worker on another Redis, or `gomoku-archive export`) is building
        # the month right now; it publishes, or it fails and the next run plans the month again.
        return "building"
    if job_status == "complete":
        # The kept result would block the id for as long as arq keeps results.
        return "requeue"
    return "enqueue"
