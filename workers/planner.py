"""The planner's decision for one missing month, apart from the Redis and SQL that feed it."""

from __future__ import annotations

from typing import Literal

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
